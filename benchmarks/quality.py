"""Every quality set in one run, with the bots' own first questions: the figures a change to answering must move.

Run: python benchmarks/quality.py [--sets demo,policies,...] [--json OUT] [--limit N] [--no-probes]

Sets: demo, policies, de, fr, clapnq (../shared/evals/clapnq, when present), heldout (made on the fly by
scripts/heldout_eval.py), and businesses: every held-out business under evals/businesses/, pooled by language
(`businesses-en`, `businesses-de`, ...), and the training businesses' validation fifth (`valid-en`, ...), where
an operating point is chosen. Default settings, the extractive answerer, as `verbatim eval` runs
them. Then the probes: the README's example conversation and the bots' first questions, each with what its
answer must show; a change that breaks a probe does not land.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import subprocess
import sys
import tempfile
from collections import defaultdict
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core import SCOPES, KnowledgeBase, Pipeline, Turn, evaluate, from_env, load_questions  # noqa: E402
from core.common.answers import answer_as_turn  # noqa: E402
from core.measuring.evaluation import Report  # noqa: E402

SHARED = ROOT.parent / "shared" / "evals"
FIXED = {
    "demo": (ROOT / "evals" / "demo.jsonl", ROOT / "knowledge"),
    "policies": (ROOT / "evals" / "policies.jsonl", ROOT / "evals" / "policies" / "knowledge"),
    "de": (ROOT / "evals" / "de" / "questions.jsonl", ROOT / "evals" / "de" / "knowledge"),
    "fr": (ROOT / "evals" / "fr" / "questions.jsonl", ROOT / "evals" / "fr" / "knowledge"),
    "clapnq": (SHARED / "clapnq" / "questions.jsonl", SHARED / "clapnq" / "knowledge"),
}
# (conversation so far, question, what must hold it: the first quote, any quote, or None for a refusal)
PROBES: list[tuple[tuple[str, ...], str, str | None, str]] = [
    ((), "How much is a solid oak worktop?", "310 EUR", "first"),
    (("How much is a solid oak worktop?",), "and how heavy is a 3 m one?", "kg", "first"),
    ((), "Can I pay in instalments?", None, ""),
    ((), "How much are 3 m of oak worktop with delivery 30 km away?", "310 EUR", "any"),
    ((), "How much are 3 m of oak worktop with delivery 30 km away?", "85 EUR", "any"),
    ((), "How long is the warranty?", "years from delivery", "first"),
    ((), "What does the warranty not cover?", "The warranty does not cover", "first"),
    # What .ci/container asks the built image and the two replicas.
    ((), "How much is delivery 30 km away?", "85 EUR", "first"),
    ((), "how much is a walnut worktop?", "walnut", "first"),
]


def business_sets() -> dict[str, list[tuple[Path, Path]]]:
    """Held-out businesses by language: each its own questions and knowledge folder."""
    pooled: dict[str, list[tuple[Path, Path]]] = defaultdict(list)
    for meta in sorted((ROOT / "evals" / "businesses").glob("*/business.json")):
        language = json.loads(meta.read_text(encoding="utf-8"))["language"]
        pooled[f"businesses-{language}"].append((meta.parent / "questions.jsonl", meta.parent / "knowledge"))
    return dict(pooled)


def validation_sets(tmp: Path, held_out: bool = True) -> dict[str, list[tuple[Path, Path]]]:
    """The training businesses' validation fifth (scripts/train_judge.py keeps them out of training), by
    language as `valid-en`, …: where an operating point is chosen, never on the sets it is reported on.
    `held_out=False`: the other four fifths instead, as `train-en`, … (a dev set for rules the judge's training
    does not touch, such as how a follow-up is read)."""
    sys.path.insert(0, str(ROOT / "scripts" / "judge_data"))
    import make_gold
    import validate

    spec = importlib.util.spec_from_file_location("train_judge", ROOT / "scripts" / "train_judge.py")
    assert spec and spec.loader
    train_judge = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(train_judge)  # its top level needs the standard library only

    pooled: dict[str, list[tuple[Path, Path]]] = defaultdict(list)
    for meta in sorted(validate.TRAIN.glob("*/business.json")):
        folder = meta.parent
        if train_judge._business_validation(folder.name) != held_out or not (folder / "knowledge").is_dir():
            continue
        business = validate.load(folder)
        questions = tmp / f"{folder.name}.jsonl"
        rows = make_gold.gold_questions(business)
        questions.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
        prefix = "valid" if held_out else "train"
        pooled[f"{prefix}-{business.meta['language']}"].append((questions, folder / "knowledge"))
    return dict(pooled)


def run_set(parts: list[tuple[Path, Path]], limit: int | None = None) -> dict:
    """One set's metrics; several folders (a language's businesses) are pooled question by question. `limit`: the
    first questions of each folder only."""
    pooled = Report()
    for questions, knowledge in parts:
        settings = replace(from_env(), knowledge_dir=knowledge)
        report = evaluate(load_questions(questions)[:limit], settings)
        pooled.outcomes.extend(report.outcomes)
        pooled.seconds += report.seconds
    metrics = pooled.metrics()
    by_category: dict[str, list[bool]] = defaultdict(list)
    for outcome in pooled.outcomes:
        if outcome.gold.expect == "refuse":
            by_category[outcome.gold.category or "other"].append(outcome.ok)
    metrics["refused_by_category"] = {k: round(sum(v) / len(v), 4) for k, v in sorted(by_category.items())}
    return metrics


def probes() -> list[tuple[str, bool, str]]:
    """Each probe on the demo knowledge base: (question, passed, what the first quote was)."""
    results = []
    with tempfile.TemporaryDirectory(prefix="verbatim-probes-") as tmp:
        settings = replace(from_env(), knowledge_dir=ROOT / "knowledge", data_dir=Path(tmp))
        kb = KnowledgeBase(settings)
        pipeline = Pipeline(kb.settings, kb)
        try:
            kb.sync()
            for before, question, needle, where in PROBES:
                history: list[Turn] = []
                for earlier in before:
                    answer = pipeline.answer(earlier, SCOPES["public"], history)
                    history.append(Turn(earlier, answer_as_turn(answer)))
                answer = pipeline.answer(question, SCOPES["public"], history)
                quotes = [q.text for s in answer.statements for q in s.quotes]
                shown = quotes[:1] if where == "first" else quotes
                ok = (answer.kind == "refused") if needle is None else any(needle.lower() in q.lower() for q in shown)
                results.append((question, ok, quotes[0] if quotes else f"refused ({answer.reason})"))
        finally:
            pipeline.close()
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--sets", default="", help="comma-separated set names, or QUESTIONS.jsonl:KNOWLEDGE_DIR (default: all)"
    )
    parser.add_argument("--json", type=Path, help="write every set's metrics here")
    parser.add_argument("--no-probes", action="store_true")
    parser.add_argument("--limit", type=int, help="ask only the first N questions of each set (that it runs)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="verbatim-heldout-") as tmp:
        subprocess.run(
            [sys.executable, str(ROOT / "scripts" / "heldout_eval.py"), tmp], check=True, capture_output=True
        )
        sets: dict[str, list[tuple[Path, Path]]] = {name: [pair] for name, pair in FIXED.items() if pair[0].exists()}
        sets["heldout"] = [(Path(tmp) / "questions.jsonl", Path(tmp) / "knowledge")]
        sets.update(business_sets())
        named = [s for s in args.sets.split(",") if s]
        if not named or any(name.startswith("valid-") for name in named):  # 7 s to make: only when asked for
            sets.update(validation_sets(Path(tmp)))
        wanted = named or list(sets)
        results = {}
        print(f"{'set':<16} {'n':>4} {'correct':>8} {'refused':>8} {'first q':>8} {'p95 ms':>7}  refused by kind")
        for name in wanted:
            if ":" in name:  # a gold set given by its files
                questions, knowledge = name.split(":", 1)
                sets[name] = [(Path(questions), Path(knowledge))]
            if name not in sets:
                print(f"{name:<16} (no such set)")
                continue
            m = run_set(sets[name], args.limit)
            results[name] = m
            kinds = " ".join(f"{k} {v:.0%}" for k, v in m["refused_by_category"].items())
            print(
                f"{name:<16} {m['questions']:>4} {m['correct_rate']:>8.1%} {m['refusal_rate']:>8.1%} "
                f"{m['first_quote_correct']:>8.1%} {m['latency_ms']['total']['p95']:>7.0f}  {kinds}",
                flush=True,
            )
    if not args.no_probes:
        for question, ok, first in probes():
            print(f"probe {'ok  ' if ok else 'FAIL'} {question!r}: {first[:110]!r}")
            results.setdefault("probes", {})[question] = ok
    if args.json:
        args.json.write_text(json.dumps(results, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
