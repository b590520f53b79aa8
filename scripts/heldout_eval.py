"""A gold set from the synthetic businesses that no judge trains on, for `verbatim eval`.

Run: python scripts/heldout_eval.py var/heldout
     verbatim eval var/heldout/questions.jsonl --knowledge var/heldout/knowledge

The training script keeps two synthetic businesses in ten for validation only (by their name's hash,
`_business_validation` in scripts/train_judge.py). This copies their documents into OUT/knowledge and
writes one gold question per distinct question of theirs in scripts/judge_data/: a question with one
answering sentence must be answered with a quote holding that sentence whole; a question with none must be
refused; a question with two answering sentences is left out, since either would do and the eval's needles
all have to be shown. The documents are staff-only by default, so the questions are asked as staff.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import re
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _train_judge():
    """scripts/train_judge.py as a module (its top level needs the standard library only): the split is its own."""
    spec = importlib.util.spec_from_file_location("train_judge", ROOT / "scripts" / "train_judge.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=Path)
    args = parser.parse_args()
    train_judge = _train_judge()
    grouped: dict[tuple[str, str], list[dict]] = {}
    for item in train_judge._synthetic(("synthetic-2.jsonl",)):
        if train_judge._business_validation(item["business"]):
            grouped.setdefault((item["business"], item["question"]), []).append(item)
    knowledge = args.out / "knowledge"
    knowledge.mkdir(parents=True, exist_ok=True)
    for business in sorted({b for b, _ in grouped}):
        shutil.copy(train_judge.SYNTHETIC_DIR / "documents" / f"{business}.md", knowledge / f"{business}.md")
    gold = []
    for number, ((business, question), items) in enumerate(grouped.items(), start=1):
        answering = [i["sentence"] for i in items if i["label"]]
        if len(answering) > 1:
            continue
        slug = re.sub(r"\W+", "-", question.lower()).strip("-")[:40]
        entry: dict = {"id": f"{business}-{number}-{slug}", "question": question}
        if answering:
            entry |= {"expect": "answer", "documents": [f"{business}.md"], "quote_contains": answering}
        else:
            entry["expect"] = "refuse"
        gold.append(entry | {"audience": "internal"})
    lines = [json.dumps(g, ensure_ascii=False) for g in gold]
    (args.out / "questions.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    answerable = sum(g["expect"] == "answer" for g in gold)
    print(f"{len(gold)} questions ({answerable} answerable, {len(gold) - answerable} to refuse) in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
