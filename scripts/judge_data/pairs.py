"""Derive the judge's pairs from the invented businesses: each question against every block of its business.

Run: python scripts/judge_data/pairs.py [OUT.jsonl]     (default var/judge-pairs.jsonl; prints the counts)

Pairs are derived, never written by hand. A block is labelled 1 when it holds every phrase of one of the
question's answer blocks (an item, and so also its whole list); every other block is 0: `hard` when it stands
in the same document and section as an answer block or a near miss's look-alike, easy otherwise. A question
asked by a customer is paired only with public documents' blocks, as the product retrieves them: whether staff
may read a fact is the scope's business, not the judge's. A follow-up is paired as the product asks it after
the question it follows (`resolve_follow_up`). Only `scripts/judge_data/businesses/` is read: the held-out
businesses in `evals/businesses/` are never trained on.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import validate

from core.answering.conversation import resolve_follow_up, standalone
from core.common.answers import Turn

OUT = validate.ROOT / "var" / "judge-pairs.jsonl"


def _holds(block_read: str, phrases: list[str]) -> bool:
    text = validate.norm(block_read)
    return all(validate.norm(p) in text for p in phrases)


def asked(label: dict, by_id: dict[str, dict]) -> str:
    """The question as the product asks it: a follow-up rewritten with the question it follows."""
    question = str(label["question"])
    if not (follows := label.get("follows")) or follows not in by_id:
        return question
    previous = asked(by_id[follows], by_id)
    return resolve_follow_up(question, previous, standalone(question, [Turn(previous, "")]))


def business_pairs(business: validate.Business) -> Iterator[dict]:
    language = business.meta.get("language", "")
    by_id = {str(label.get("id")): label for label in business.labels}
    for label in business.labels:
        public = label.get("audience", "public") == "public"
        specs = label.get("answer") or label.get("near") or []
        anchors = {(s.get("document"), sec) for s in specs for sec in _sections_of(business, s)}
        question = asked(label, by_id)
        for doc in business.docs.values():
            if public and doc.audience != "public":
                continue
            for block in doc.blocks:
                section = doc.section_of.get(block.text, ())
                positive = label.get("label") == "answerable" and any(
                    s.get("document") == doc.name and _holds(block.read, s.get("contains", [])) for s in specs
                )
                yield {
                    "business": business.slug,
                    "language": language,
                    "id": label.get("id"),
                    "question": question,
                    "label_kind": label.get("kind") or label.get("label"),
                    "title": doc.title,
                    "section": " › ".join(section),
                    "block": block.text,
                    "read": block.read,
                    "shape": block.kind,
                    "label": int(positive),
                    "hard": (doc.name, section) in anchors,
                }


def _sections_of(business: validate.Business, spec: dict) -> list[tuple[str, ...]]:
    doc = business.docs.get(str(spec.get("document")))
    if doc is None:
        return []
    phrases = spec.get("contains", [])
    return [doc.section_of.get(b.text, ()) for b in doc.blocks if _holds(b.read, phrases)]


def training_folders() -> list[Path]:
    return sorted(p.parent for p in validate.TRAIN.glob("*/business.json"))


def main(argv: list[str]) -> int:
    out = Path(argv[0]) if argv else OUT
    out.parent.mkdir(parents=True, exist_ok=True)
    counts: Counter[str] = Counter()
    with out.open("w", encoding="utf-8") as f:
        for folder in training_folders():
            business = validate.load(folder)
            for pair in business_pairs(business):
                f.write(json.dumps(pair, ensure_ascii=False) + "\n")
                counts["pairs"] += 1
                counts[f"{'positive' if pair['label'] else 'hard negative' if pair['hard'] else 'easy negative'}"] += 1
                counts[f"language {pair['language']}"] += 1
    for key, value in sorted(counts.items()):
        print(f"{key:<20} {value:>8,}")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
