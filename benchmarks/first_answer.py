"""How soon `verbatim ask` answers as a whole process, where that time goes, and how fast a cold index embeds.

Run: python benchmarks/first_answer.py [--rounds 5] [--fragments 1200] [--code DIR] [--knowledge DIR] [--smoke]

1. The whole process: `python -m bot.cli ask "How much is a solid oak worktop?"` on the demo knowledge base,
   in a data folder indexed by a run before (so the page cache is warm and nothing is indexed while timed):
   ROUNDS runs, the median wall-clock seconds and the median CPU seconds (user + system, all threads: on a
   busy machine they move less than the wall-clock).
2. Where the time goes: the same steps as `verbatim ask`, one fresh process a round, each stage timed after
   the one before it: the interpreter's start, the imports, opening the index and syncing it with the folder,
   loading the embedder, loading the judge, the answer (embedding, search, judge and verification: the
   answer's own timings), rendering and closing. Medians.
3. Cold indexing: `python -m bot.cli index` in a fresh process on a new folder of FRAGMENTS fragments (the
   paragraphs of benchmarks/index_throughput.py), model load included, against the embedder's own rate:
   loaded in another process and called directly on exactly the texts indexing embeds, 256 a call.
`--code DIR` runs each part with another checkout's code too (same interpreter), 1 and 2 alternated with this
one's: before and after. `--knowledge`: another folder than the demo's for 1 and 2; `--smoke`: one round and
10 fragments, to see that it runs. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from index_throughput import calls_indexing_makes, write_folder  # noqa: E402

from core.ingest import FRAGMENT_BATCH  # noqa: E402

QUESTION = "How much is a solid oak worktop?"
STAGES = ["start", "imports", "open + sync", "embedder load", "judge load", "answer", "render + close"]

# Runs in the checkout under test (its own `core` and `bot`), the steps `verbatim ask` takes, one stage at a time.
DRIVER = """
import sys, time
stages = {"start": time.time() - float(sys.argv[1])}
mark = time.perf_counter()
def stage(name):
    global mark
    now = time.perf_counter(); stages[name] = now - mark; mark = now
import bot.cli
stage("imports")
import io, json
from pathlib import Path
from bot.cli.serving import open_knowledge
from bot.console import render
from core import Pipeline, from_env, scope_of
from core.answering import judge
settings = from_env().with_paths(sys.argv[2], sys.argv[3])
kb = open_knowledge(settings, io.StringIO(), "never")
stage("open + sync")
kb.embedder.inner.embed([])  # loads the model, embeds nothing
stage("embedder load")
judge.shared()._load()  # what its first question would load
stage("judge load")
pipeline = Pipeline(settings, knowledge=kb)
answer = pipeline.answer(sys.argv[4], scope_of("internal"), surface="cli")
stage("answer")
render(answer, color=False)
pipeline.close()
stage("render + close")
print(json.dumps({"stages": stages, "answer": answer.timings_ms, "kind": answer.kind}))
"""


def children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def run(command: list[str], code: Path, cwd: Path) -> tuple[float, float, str]:
    """Wall-clock and CPU seconds of one child process with `code`'s core and bot, and what it printed; raises
    when it fails. It runs in `cwd`, so no .env of a checkout is read."""
    cpu, started = children_cpu(), time.perf_counter()
    env = os.environ | {"PYTHONPATH": str(code)}
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - started
    if done.returncode:
        raise SystemExit(f"{' '.join(command[:4])} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return wall, children_cpu() - cpu, done.stdout


def whole_and_stages(codes: list[Path], rounds: int, knowledge: Path, tmp: Path) -> None:
    def ask(data: Path) -> list[str]:
        return [sys.executable, "-m", "bot.cli", "ask", "--knowledge", str(knowledge), "--data", str(data), QUESTION]

    walls: dict[Path, list[float]] = {c: [] for c in codes}
    cpus: dict[Path, list[float]] = {c: [] for c in codes}
    stages: dict[Path, dict[str, list[float]]] = {c: {} for c in codes}
    answers: dict[Path, set[str]] = {c: set() for c in codes}
    for n, code in enumerate(codes):
        run(ask(tmp / f"data-{n}"), code, tmp)  # indexes the folder; every timed run finds it unchanged
    for _ in range(rounds):  # alternated, so each checkout sees the same neighbours on a shared machine
        for n, code in enumerate(codes):
            wall, cpu, printed = run(ask(tmp / f"data-{n}"), code, tmp)
            walls[code].append(wall)
            cpus[code].append(cpu)
            answers[code].add(printed)
        for n, code in enumerate(codes):
            driver = [sys.executable, "-c", DRIVER, str(time.time()), str(knowledge), str(tmp / f"data-{n}")]
            report = json.loads(run([*driver, QUESTION], code, tmp)[2])
            for name, seconds in report["stages"].items():
                stages[code].setdefault(name, []).append(seconds)
            for name, ms in report["answer"].items():  # the answer's own timings: embed, search, answer, verify
                if name != "total":
                    stages[code].setdefault(f"  of which {name}", []).append(ms / 1000)
    where = "the demo knowledge base" if knowledge == ROOT / "knowledge" else knowledge
    print(f'verbatim ask "{QUESTION}" on {where}, whole process, warm, {rounds} run(s):')
    for code in codes:
        print(
            f"  {_name(code):<24} median {statistics.median(walls[code]):.2f} s wall (min {min(walls[code]):.2f}, "
            f"max {max(walls[code]):.2f}), {statistics.median(cpus[code]):.2f} s CPU"
        )
    if len(codes) > 1:
        same = len({a for c in codes for a in answers[c]}) == 1
        print(f"  the answers printed: {'the same' if same else 'DIFFERENT'} in every run")
    print("where the time goes (one fresh process a run, each stage after the last; medians, ms):")
    print(f"  {'stage':<22}" + "".join(f"{_name(c):>24}" for c in codes))
    names = [*STAGES[:6], *[s for s in stages[codes[0]] if s.startswith("  ")], *STAGES[6:]]
    for name in names:
        print(f"  {name:<22}" + "".join(f"{1000 * statistics.median(stages[c].get(name, [0])):>24.0f}" for c in codes))
    totals = [sum(statistics.median(stages[c][s]) for s in STAGES) for c in codes]
    print(f"  {'sum of the stages':<22}" + "".join(f"{1000 * t:>24.0f}" for t in totals))


def _name(code: Path) -> str:
    return "this checkout" if code == ROOT else str(code)


# The model alone, loaded, on the texts indexing embeds (a JSON file of the calls it makes): all the fragments, then
# all the sentences, FRAGMENT_BATCH texts a call, as benchmarks/index_throughput.py times it; with the code under test.
DIRECT = """
import json, sys, time
from core.vectors.embeddings import LocalEmbedder
calls, step = json.load(open(sys.argv[1])), int(sys.argv[2])
embedder = LocalEmbedder()
started = time.perf_counter()
embedder.embed(["warm up"])
loaded = time.perf_counter()
for texts in ([t for c in calls[0::2] for t in c], [t for c in calls[1::2] for t in c]):
    for start in range(0, len(texts), step):
        embedder.embed(texts[start : start + step])
print(json.dumps({"load": loaded - started, "seconds": time.perf_counter() - loaded}))
"""


def cold_indexing(codes: list[Path], fragments: int, tmp: Path) -> None:
    folder = tmp / "folder"
    folder.mkdir()
    write_folder(folder, fragments)
    count, calls = calls_indexing_makes(folder)
    (tmp / "calls.json").write_text(json.dumps(calls), encoding="utf-8")
    texts = sum(len(c) for c in calls)
    print(f"cold indexing: {count:,} fragments in {len(list(folder.glob('*.md')))} documents, {texts:,} texts embedded")
    for n, code in enumerate(codes):
        data = tmp / f"cold-{n}"
        index = [sys.executable, "-m", "bot.cli", "index", "--knowledge", str(folder), "--data", str(data)]
        wall, cpu, printed = run(index, code, tmp)
        found = re.search(r"\(([\d.]+) s\)", printed)
        synced = float(found.group(1)) if found else float("nan")
        model = json.loads(
            run([sys.executable, "-c", DIRECT, str(tmp / "calls.json"), str(FRAGMENT_BATCH)], code, tmp)[2]
        )
        print(f"  {_name(code)}:")
        print(
            f"    `verbatim index`, a fresh process, model load included: {wall:.1f} s, {count / wall:.1f} fragments/s,"
            f" {cpu:.1f} s CPU (its sync: {synced:.1f} s)"
        )
        print(
            f"    the model alone, loaded ({model['load']:.2f} s), the same texts {FRAGMENT_BATCH} a call: "
            f"{model['seconds']:.1f} s, {count / model['seconds']:.1f} fragments/s"
        )
        print(f"    cold indexing / the model's own rate: {model['seconds'] / wall:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--fragments", type=int, default=1200, help="cold indexing's folder (0: skip it)")
    parser.add_argument("--code", type=Path, help="another checkout, timed beside this one (1 and 2)")
    parser.add_argument(
        "--knowledge", type=Path, default=ROOT / "knowledge", help="asked in 1 and 2 (default: the demo)"
    )
    parser.add_argument("--smoke", action="store_true", help="one round, 10 fragments: that it runs")
    args = parser.parse_args()
    rounds, fragments = (1, 10) if args.smoke else (args.rounds, args.fragments)
    codes = [ROOT] if args.code is None else [args.code.resolve(), ROOT]
    with tempfile.TemporaryDirectory() as tmp:
        whole_and_stages(codes, rounds, args.knowledge.resolve(), Path(tmp))
        if fragments:
            cold_indexing(codes, fragments, Path(tmp))


if __name__ == "__main__":
    main()
