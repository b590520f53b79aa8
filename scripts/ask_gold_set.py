"""Fill a run log by asking a gold set's questions through the real pipeline, for a demo of `verbatim report`.

Run: python scripts/ask_gold_set.py [QUESTIONS.jsonl] [--knowledge DIR] [--data DIR]
     (defaults: evals/demo.jsonl, knowledge/, var-demo/)

Each question goes through `Pipeline.ask` as a chat surface would send it: questions for the
internal audience as Slack (staff), the others as Telegram (customers), the way the README
deploys the two bots. The gold set then plays the reader: an answer it judges wrong gets a 👎,
a right one a 👍, and refusals get no feedback. Nothing else is made up.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from core import KnowledgeBase, Pipeline, Settings, load_questions, scope_of  # noqa: E402
from core.measuring.evaluation import judge  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("questions", nargs="?", default=str(REPO / "evals" / "demo.jsonl"))
    parser.add_argument("--knowledge", default=str(REPO / "knowledge"))
    parser.add_argument("--data", default="var-demo")
    args = parser.parse_args()
    settings = Settings(knowledge_dir=Path(args.knowledge), data_dir=Path(args.data))
    knowledge = KnowledgeBase(settings)
    knowledge.sync()
    pipeline = Pipeline(settings, knowledge)
    asked = down = 0
    for number, gold in enumerate(load_questions(Path(args.questions))):
        surface = "slack" if gold.audience == "internal" else "telegram"
        answer = pipeline.ask(gold.question, scope_of(gold.audience), surface, f"gold:{number}")
        asked += 1
        if answer.answered:
            ok = judge(gold, answer).ok
            down += not ok
            pipeline.feedback(answer.id, "up" if ok else "down", surface, f"gold-reader:{number}")
    pipeline.close()
    print(f"Asked {asked} questions into {settings.data_dir} ({down} answers marked 👎).")
    return 0


if __name__ == "__main__":
    sys.exit(main())
