"""Every script in benchmarks/ runs at its smallest size and prints its figures, so a benchmark that rots (a store
method renamed under it) fails here instead of on the day someone needs its numbers.

The scripts run in processes of their own, a few at a time, on a one-document slice of the demo where they would
index it; no figure is held to a limit (shared machines are noisy), only printed. A new script must be added to
SMOKE, or to SKIPPED with the reason it can't run small.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.postgres import unavailable

ROOT = Path(__file__).resolve().parent.parent
BENCHMARKS = ROOT / "benchmarks"
TINY = "{tiny}"  # the one-document knowledge folder
TINY_SET = "{tiny_set}"  # two demo questions on it, as QUESTIONS.jsonl:KNOWLEDGE_DIR
WORKERS = 4
LIMIT_SECONDS = 300  # per script, for a machine far busier than it should be

# script: (its smallest run's arguments, what its figures look like when printed)
SMOKE: dict[str, tuple[list[str], str]] = {
    "ann_1m_experiment.py": (["product", "2000"], r"recall@5 as served \d\.\d{3}"),
    "answer_latency.py": (["1", "--limit", "2", "--knowledge", TINY], r"total +p50 +[\d.]+ ms +p95 +[\d.]+ ms"),
    "big_document.py": (["--mb", "0.02", "--real", "8"], r"real rate [\d.]+ fragments/s"),
    "first_answer.py": (["--smoke", "--knowledge", TINY], r"cold indexing / the model's own rate: [\d.]+"),
    "follow_ups.py": (["--sets", TINY_SET, "--verbose"], r"follow-ups right \d+/\d+ \(to answer \d+/\d+"),
    "hostile_documents.py": (["--only", "hidden-hidden-attribute.html"], r"[\d.]+ +\d+MB +read: 1 fragments"),
    "index_pdfs.py": (["--documents", "1", "--pages", "1"], r"full index build .*: [\d.]+ s, \d+ fragments"),
    "index_search.py": (["1000", "--knowledge", TINY], r"search at 1,000 fragments, floor 0.0: staff scope p50 [\d.]+"),
    "index_throughput.py": (["10", "1"], r"throughput ratio \(sync / direct, best run of each\): [\d.]+"),
    "judge.py": (["--sets", TINY_SET, "--limit", "2"], r"judge +AUC [\d.]+ +refusing"),
    "judge_sweep.py": (["--sets", TINY_SET, "--limit", "2"], r"[\d.]+% +[\d.]+% +[\d.]+% ood"),
    "pgvector_scale.py": (["1000"], r"store search \(SQL\), planned \([^)]*\) +p50 +[\d.]+ ms"),
    "quality.py": (["--sets", TINY_SET, "--limit", "2", "--no-probes"], r" 2 +[\d.]+% +[\d.]+% +[\d.]+%"),
    "reindex_while_answering.py": (["3", "10"], r"while re-indexing: \d+ questions, latency p50 [\d.]+ ms"),
    "replicas.py": (["2", "1", "--knowledge", TINY], r"ack p50 [\d.]+ ms, p99 [\d.]+ ms"),
    "resync_wait.py": (["--files", "10", "--embedder", "words", "--no-disk"], r"waited [\d.]+ s"),
    "scale.py": (["1000", "--queries", "5"], r"approximate internal 1 BLAS: p50 +[\d.]+ ms"),
    "slack_load.py": (["2", "1", "--knowledge", TINY], r"event → ack: +p50 +[\d.]+ ms"),
    "telegram_batch.py": (["2", "--knowledge", TINY], r"batch delivered → last reply sent: \d+ ms"),
}
SKIPPED = {
    "judge_auc.py": "its pairs are scripts/train_judge.py's validation split, ~40 s to build before one is scored",
    "llm_answerer.py": "it needs a GGUF model served by llama-cpp-python, and takes about a minute a question",
}
NEEDS_POSTGRES = {"pgvector_scale.py", "replicas.py"}
# The longest runs start first, so the pool does not end on one of them alone.
LONGEST = ["first_answer.py", "pgvector_scale.py", "replicas.py", "answer_latency.py", "scale.py"]


def scripts() -> list[str]:
    return sorted(p.name for p in BENCHMARKS.glob("*.py") if not p.name.startswith("_"))


def test_every_benchmark_has_a_smallest_run_or_a_reason():
    assert sorted([*SMOKE, *SKIPPED]) == scripts()


def _tiny(folder: Path) -> dict[str, str]:
    """The demo's price list alone, and two of the demo's gold questions on it (one answered, one refused)."""
    knowledge = folder / "knowledge"
    knowledge.mkdir(parents=True)
    shutil.copy(ROOT / "knowledge" / "price-list.md", knowledge)
    wanted = {"price-solid-oak-front", "instalments"}
    rows = (ROOT / "evals" / "demo.jsonl").read_text(encoding="utf-8").splitlines()
    picked = [row for row in rows if row.startswith("{") and json.loads(row)["id"] in wanted]
    questions = folder / "questions.jsonl"
    questions.write_text("\n".join(picked) + "\n", encoding="utf-8")
    return {TINY: str(knowledge), TINY_SET: f"{questions}:{knowledge}"}


def _run(script: str, arguments: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    # The developer's settings stay out, as in every test (tests/conftest.py).
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VERBATIM_", "SLACK_", "TELEGRAM_"))}
    return subprocess.run(
        [sys.executable, str(BENCHMARKS / script), *arguments],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=LIMIT_SECONDS,
    )


@pytest.fixture(scope="module")
def runs(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):
    """The selected scripts' runs, started together (WORKERS at a time) so the module takes the longest few."""
    folder = tmp_path_factory.mktemp("benchmarks")
    values = _tiny(folder)
    selected = sorted(
        (
            item.callspec.params["script"]
            for item in request.session.items
            if getattr(item, "originalname", "") == "test_the_benchmark_prints_its_figures"
        ),
        key=lambda s: LONGEST.index(s) if s in LONGEST else len(LONGEST),
    )
    postgres = importlib.util.find_spec("pgserver") is not None
    with ThreadPoolExecutor(max_workers=WORKERS) as pool:
        started: dict[str, Future[subprocess.CompletedProcess[str]]] = {}
        for script in selected:
            if script in NEEDS_POSTGRES and not postgres:
                continue
            arguments = [values.get(a, a) for a in SMOKE[script][0]]
            started[script] = pool.submit(_run, script, arguments, folder)
        yield started


@pytest.mark.parametrize("script", sorted(SMOKE))
def test_the_benchmark_prints_its_figures(script, runs):
    if script not in runs:
        unavailable(f"{script} needs PostgreSQL, and pgserver is not installed")
    done = runs[script].result()
    assert done.returncode == 0, f"{script} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    assert re.search(SMOKE[script][1], done.stdout), f"{script} printed no figures:\n{done.stdout[-3000:]}"
