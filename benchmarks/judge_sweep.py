"""The answers themselves under each way of using the judges, on every gold set at once.

Run: python benchmarks/judge_sweep.py                               # the three English gold sets
     python benchmarks/judge_sweep.py --sets demo,policies --fragment-model var/fragment-judge/fragment-judge.onnx

Each set is indexed once and every question asked through the real pipeline (`Pipeline.answer`, as
`verbatim eval` asks it) once per row of the grid: the sentence judge's threshold, and the fragment-level
judge's threshold (`off`: not asked). The judges cache the pairs they have read, so a row after the first
costs retrieval and similarity only. A row is worth keeping only when it moves more than one set; the
point is one row that serves them all.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from core.answering import judge as judge_module  # noqa: E402
from core.answering.extractive import ExtractiveAnswerer  # noqa: E402
from core.answering.pipeline import Pipeline  # noqa: E402
from core.common.settings import Settings  # noqa: E402
from core.measuring.evaluation import Report, judge, load_questions  # noqa: E402
from core.retrieval.knowledge import SCOPES, KnowledgeBase  # noqa: E402

SETS = {
    "demo": (ROOT / "evals" / "demo.jsonl", ROOT / "knowledge"),
    "policies": (ROOT / "evals" / "policies.jsonl", ROOT / "evals" / "policies" / "knowledge"),
    "clapnq": (ROOT.parent / "shared/evals/clapnq/questions.jsonl", ROOT.parent / "shared/evals/clapnq/knowledge"),
}


def rows_for(name: str, grid: list[tuple[float, float | None]], fragment: judge_module.Judge | None) -> list[dict]:
    questions_file, knowledge = SETS[name]
    questions = load_questions(questions_file)
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        settings = replace(Settings(), knowledge_dir=knowledge, data_dir=Path(tmp))
        kb = KnowledgeBase(settings)
        pipeline = Pipeline(kb.settings, kb)
        try:
            kb.sync()
            answerer = pipeline.answerer
            assert isinstance(answerer, ExtractiveAnswerer)
            for sentence_threshold, fragment_threshold in grid:
                answerer.judge_threshold = sentence_threshold
                answerer.fragment_judge = fragment if fragment_threshold is not None else None
                answerer.fragment_threshold = fragment_threshold or 0.0
                report = Report()
                for gold in questions:
                    answer = pipeline.answer(gold.question, SCOPES[gold.audience], surface="eval")
                    report.outcomes.append(judge(gold, answer))
                m = report.metrics()
                out.append(
                    {
                        "correct": m["correct_rate"],
                        "refused": m["refusal_rate"],
                        "first": m["first_quote_correct"],
                        "ood": m["out_of_domain_refusal_rate"],
                    }
                )
        finally:
            pipeline.close()
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sets", default="demo,policies,clapnq")
    parser.add_argument("--fragment-model", type=Path, default=ROOT / "var" / "fragment-judge" / "fragment-judge.onnx")
    parser.add_argument("--sentence", default="0.25", help="sentence-judge thresholds, comma-separated")
    parser.add_argument(
        "--fragment", default="off,0.1,0.2,0.3,0.4,0.5,0.6,0.7", help="fragment-judge thresholds ('off': not asked)"
    )
    args = parser.parse_args()
    fragment = None
    if args.fragment_model.exists():
        fragment = judge_module.Judge(
            args.fragment_model, max_tokens=judge_module.FRAGMENT_TOKENS, tokenizer_path=judge_module.TOKENIZER_FILE
        )
    grid = [
        (float(s), None if f == "off" else float(f))
        for s in args.sentence.split(",")
        for f in args.fragment.split(",")
        if f == "off" or fragment is not None
    ]
    names = args.sets.split(",")
    results = {name: rows_for(name, grid, fragment) for name in names}
    print(f"{'sentence':>8} {'fragment':>8}  " + "  ".join(f"{n + ' correct/refused/first':>34}" for n in names))
    for i, (s, f) in enumerate(grid):
        cells = [
            f"{results[n][i]['correct']:>9.1%} {results[n][i]['refused']:>7.1%} {results[n][i]['first']:>7.1%}"
            f" ood {results[n][i]['ood']:.0%}"
            for n in names
        ]
        print(f"{s:>8.2f} {'off' if f is None else f'{f:.2f}':>8}  " + "  ".join(f"{c:>34}" for c in cells), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
