"""How a conversation's follow-ups are read and answered: each one's question as asked, its verdict, and the count.

Run: python benchmarks/follow_ups.py                                  # the English training businesses
     python benchmarks/follow_ups.py --sets train-en,valid-en --businesses 3 --verbose
     python benchmarks/follow_ups.py --sets QUESTIONS.jsonl:KNOWLEDGE_DIR

A dev set for the rules that make a follow-up one question (`core/answering/conversation.py`): `train-<lang>` are
the training businesses' four fifths (scripts/judge_data/businesses/, never the gold sets a rule is reported on),
`valid-<lang>` their validation fifth, `businesses-<lang>` the held-out ones of evals/. Every question of a set is
asked in order through `evaluation.evaluate` (a follow-up with the conversation before it, as `verbatim eval` asks
it); only the follow-ups are counted. `--verbose` prints each: the question before, the follow-up, what was asked
(the standalone question), and the first quote. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import quality  # noqa: E402

from core.common.settings import from_env  # noqa: E402
from core.measuring.evaluation import evaluate, load_questions  # noqa: E402


def sets_named(names: list[str], tmp: Path) -> dict[str, list[tuple[Path, Path]]]:
    known = {**quality.business_sets(), **quality.validation_sets(tmp), **quality.validation_sets(tmp, False)}
    return {
        name: [(Path(name.split(":", 1)[0]), Path(name.split(":", 1)[1]))] if ":" in name else known[name]
        for name in names
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", default="train-en", help="set names, or QUESTIONS.jsonl:KNOWLEDGE_DIR")
    parser.add_argument("--businesses", type=int, help="the first N businesses of each set only")
    parser.add_argument("--verbose", action="store_true", help="print every follow-up")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for name, parts in sets_named(args.sets.split(","), Path(tmp)).items():
            right = {"answer": 0, "refuse": 0}
            total = {"answer": 0, "refuse": 0}
            for questions_file, knowledge in parts[: args.businesses]:
                questions = load_questions(questions_file)
                by_id = {q.id: q for q in questions}
                # `evaluate` asks them as verbatim eval does: a follow-up with the turn it follows.
                report = evaluate(questions, replace(from_env(), knowledge_dir=knowledge))
                for outcome in report.outcomes:
                    gold, answer = outcome.gold, outcome.answer
                    if not gold.follows:
                        continue
                    total[gold.expect] += 1
                    right[gold.expect] += outcome.ok
                    if args.verbose:
                        first = (
                            answer.statements[0].quotes[0].text[:70].replace("\n", " ")
                            if answer.statements
                            else f"refused ({answer.reason})"
                        )
                        print(f"{'ok' if outcome.ok else 'XX'} {gold.expect:6} {by_id[gold.follows].question[:45]!r}")
                        print(f"   -> {gold.question[:60]!r} asked as {answer.standalone_question[:70]!r}")
                        print(f"   {first!r}")
            print(
                f"{name}: follow-ups right {right['answer'] + right['refuse']}/{total['answer'] + total['refuse']}"
                f" (to answer {right['answer']}/{total['answer']}, to refuse {right['refuse']}/{total['refuse']})",
                flush=True,
            )


if __name__ == "__main__":
    main()
