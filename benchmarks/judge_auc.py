"""Each judge export on the pairs `scripts/train_judge.py` validates on, by language: AUC and time per pair.

Run: python benchmarks/judge_auc.py                                    # the shipped judge
     python benchmarks/judge_auc.py --model var/judge-b/out/judge.onnx --model var/judge-e5/out/judge.onnx

The pairs are train_judge's validation rows: Wikipedia passages and older synthetic businesses held out by hash,
and the invented businesses' validation fifth (scripts/judge_data/), by the language of the business. No judge
trained by train_judge has seen them, so exports of different bases and data compare on one footing. The time is
the judge's own (`core/answering/judge.py`, one thread, each pair alone as the answerer asks it), measured over the
whole set.
"""

from __future__ import annotations

import argparse
import importlib.util
import random
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core.answering.judge import MODEL_FILE, Judge  # noqa: E402


def validation_rows() -> list[tuple[str, str, int, str]]:
    """(question, candidate, label, language) of every validation pair; Wikipedia's language is `wiki`."""
    spec = importlib.util.spec_from_file_location("train_judge", ROOT / "scripts" / "train_judge.py")
    assert spec and spec.loader
    train_judge = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(train_judge)
    _, wiki, _ = train_judge.examples()
    _, business, languages, _ = train_judge.business_examples(random.Random(train_judge.SEED))
    return [(*row, "wiki") for row in wiki] + [(*row, lang) for row, lang in zip(business, languages, strict=True)]


def auc(scores: list[float], labels: list[int]) -> float:
    """The probability that a positive is rated above a negative (ties count half)."""
    ranked = sorted(zip(scores, labels, strict=True))
    positives = sum(labels)
    negatives = len(labels) - positives
    if not positives or not negatives:
        return float("nan")
    rank_sum, i = 0.0, 0
    while i < len(ranked):
        j = i
        while j < len(ranked) and ranked[j][0] == ranked[i][0]:
            j += 1
        rank_sum += (i + j + 1) / 2 * sum(label for _, label in ranked[i:j])
        i = j
    return (rank_sum - positives * (positives + 1) / 2) / (positives * negatives)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, action="append", help="a judge export (default: the shipped one)")
    args = parser.parse_args()
    rows = validation_rows()
    languages = sorted({r[3] for r in rows})
    print(
        f"{len(rows)} pairs, {sum(r[2] for r in rows)} positive; by language: "
        + ", ".join(f"{lang} {sum(r[3] == lang for r in rows)}" for lang in languages)
    )
    print(f"{'model':<40} {'all':>6} " + " ".join(f"{lang:>6}" for lang in languages) + "  ms/pair")
    for model in args.model or [MODEL_FILE]:
        judge = Judge(model)
        by_question: dict[str, list[int]] = defaultdict(list)
        for i, row in enumerate(rows):
            by_question[row[0]].append(i)
        scores = [0.0] * len(rows)
        judge.score("warm up", ["the session loads"])
        started = time.perf_counter()
        for question, picked in by_question.items():
            for i, p in zip(picked, judge.score(question, [rows[i][1] for i in picked]), strict=True):
                scores[i] = float(p)
        per_pair = (time.perf_counter() - started) * 1000 / len(rows)
        labels = [r[2] for r in rows]
        cells = [
            auc([scores[i] for i, r in enumerate(rows) if r[3] == lang], [r[2] for r in rows if r[3] == lang])
            for lang in languages
        ]
        name = str(model.relative_to(ROOT) if model.is_relative_to(ROOT) else model)
        print(
            f"{name:<40} {auc(scores, labels):>6.4f} " + " ".join(f"{c:>6.4f}" for c in cells) + f"  {per_pair:.2f}",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
