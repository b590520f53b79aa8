"""Answer latency per stage on the demo knowledge base, extractive answerer, model loaded.

Run: python benchmarks/answer_latency.py [ROUNDS] [--limit N] [--knowledge DIR]
Asks every question of evals/demo.jsonl ROUNDS times (default 3) after one warm-up pass and
prints p50/p95 per stage. `--limit`: the first N questions only; `--knowledge`: another folder than
the demo's (a smaller one, to see that it runs). Prints figures only; asserts nothing.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from core.answering.pipeline import Pipeline  # noqa: E402
from core.common.questions import SCOPES  # noqa: E402
from core.common.settings import Settings  # noqa: E402
from core.measuring.evaluation import load_questions  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rounds", type=int, nargs="?", default=3)
    parser.add_argument("--limit", type=int, help="the first N questions only")
    parser.add_argument("--knowledge", type=Path, default=ROOT / "knowledge")
    args = parser.parse_args()
    rounds = args.rounds
    questions = load_questions(ROOT / "evals" / "demo.jsonl")[: args.limit]
    with tempfile.TemporaryDirectory() as tmp:
        pipeline = Pipeline(Settings(knowledge_dir=args.knowledge, data_dir=Path(tmp)))
        pipeline.knowledge.sync()
        cold: list[float] = []
        for q in questions:  # warm-up: loads the model, fills the sentence cache
            cold.append(pipeline.answer(q.question, SCOPES[q.audience]).timings_ms["total"])
        stages: dict[str, list[float]] = {}
        # Each round asks in another letter case: the uncased model embeds it to the same vector,
        # but the embedding cache has not seen the text, so every question is embedded afresh.
        cases = [str.lower, str.upper, str.swapcase, str.title]
        for round_ in range(rounds):
            recase = cases[round_ % len(cases)]
            for q in questions:
                for stage, ms in pipeline.answer(recase(q.question), SCOPES[q.audience]).timings_ms.items():
                    stages.setdefault(stage, []).append(ms)
        pipeline.close()
    print(f"{len(questions)} questions x {rounds} rounds, extractive answerer, after a warm-up pass")
    print(
        f"  warm-up pass (first sight of each fragment's sentences): p50 {np.percentile(cold, 50):.1f} ms, "
        f"p95 {np.percentile(cold, 95):.1f} ms"
    )
    for stage in ("embed", "search", "answer", "verify", "total"):
        values = stages.get(stage, [])
        if values:
            print(
                f"  {stage:<7} p50 {np.percentile(values, 50):6.2f} ms   p95 {np.percentile(values, 95):6.2f} ms"
                f"   (n={len(values)})"
            )


if __name__ == "__main__":
    main()
