"""The held-out businesses gold set: 12 written businesses moved to evals/businesses/ as `verbatim eval` sets.

Run: python scripts/judge_data/make_gold.py choose     move the chosen 12 out of scripts/judge_data/businesses/
     python scripts/judge_data/make_gold.py questions  (re)write each held-out business's questions.jsonl

`choose` takes, by the SHA-256 of their slugs (a fixed order nobody picked), 8 English businesses, one German,
one French and two Spanish, and moves their folders whole; no judge trains on them (scripts/judge_data/pairs.py
reads only scripts/judge_data/businesses/). `questions` turns each labels.jsonl into the question file:

- answerable: `expect: answer`, the documents of its blocks (their names in knowledge/), the section of its
  first block, and every phrase of its blocks as `quote_contains`;
- near miss: `expect: refuse` with `category` its kind (other_entity, other_attribute, out_of_range,
  topic_only, staff_only); out of domain: `category: out_of_domain`;
- `audience` and `follows` as labelled, so a follow-up is asked after the question it follows.

Run: verbatim eval evals/businesses/SLUG/questions.jsonl --knowledge evals/businesses/SLUG/knowledge
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import validate

QUOTAS = {"en": 8, "de": 1, "fr": 1, "es": 2}
HEADER = (
    "# Held-out business {name} ({kind}, {language}): invented, written blind as scripts/judge_data/WRITING.md says,\n"
    "# never trained on. Derived from labels.jsonl by scripts/judge_data/make_gold.py; format: docs/quality.md.\n"
)


def choose() -> list[str]:
    by_language: dict[str, list[Path]] = {}
    for meta in validate.TRAIN.glob("*/business.json"):
        if not (meta.parent / "knowledge").is_dir():
            continue  # still being written (or not yet built): only finished businesses are held out
        language = json.loads(meta.read_text(encoding="utf-8"))["language"]
        by_language.setdefault(language, []).append(meta.parent)
    chosen = []
    for language, quota in QUOTAS.items():
        ranked = sorted(by_language.get(language, []), key=lambda p: hashlib.sha256(p.name.encode()).hexdigest())
        chosen.extend(ranked[:quota])
    validate.GOLD.mkdir(parents=True, exist_ok=True)
    for folder in chosen:
        shutil.move(str(folder), validate.GOLD / folder.name)
    return [p.name for p in chosen]


def gold_questions(business: validate.Business) -> list[dict]:
    out = []
    for label in business.labels:
        row: dict = {"id": label["id"], "question": label["question"]}
        if label.get("audience", "public") != "public":
            row["audience"] = label["audience"]
        if label["label"] == "answerable":
            documents, phrases, sections = [], [], []
            for spec in label["answer"]:
                doc = business.docs[spec["document"]]
                block = validate.find_block(business, spec, label["id"])
                documents.append(doc.path.name)
                phrases.extend(p for p in spec["contains"] if p not in phrases)
                if block and (path := doc.section_of.get(block[1].text, ())):
                    sections.append(path[-1])
            row.update(expect="answer", documents=list(dict.fromkeys(documents)), quote_contains=phrases)
            if sections and len(label["answer"]) == 1:
                row["sections"] = sections[:1]
        else:
            row.update(expect="refuse", category=label.get("kind") or "out_of_domain")
        if label.get("follows"):
            row["follows"] = label["follows"]
        out.append(row)
    return out


def write_questions() -> None:
    for meta in sorted(validate.GOLD.glob("*/business.json")):
        business = validate.load(meta.parent)
        rows = gold_questions(business)
        head = HEADER.format(**{k: business.meta.get(k, "") for k in ("name", "kind", "language")})
        body = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
        (meta.parent / "questions.jsonl").write_text(head + body, encoding="utf-8")
        print(f"{meta.parent.name}: {len(rows)} questions")


def main(argv: list[str]) -> int:
    if argv[:1] == ["choose"]:
        print("held out:", ", ".join(choose()))
    elif argv[:1] == ["questions"]:
        write_questions()
    else:
        print(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
