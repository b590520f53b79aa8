"""Check the invented businesses: labels that point at real blocks, documents the product reads, the counts.

Run:  python scripts/judge_data/validate.py                      every business, with the set's totals
      python scripts/judge_data/validate.py BUSINESS_DIR [...]   those only (a writer's check)

A business folder holds `business.json`, `labels.jsonl` and its Markdown: `documents/*.md` while it is being
written, then `knowledge/` (what the product reads: Markdown and the documents rendered from `sources/*.md`).
The brief the writers follow, with every field, is scripts/judge_data/WRITING.md. Prints each problem on one
line and exits 1 when there is any; it never runs the product's answerer.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from core.common.blocks import Block, blocks  # noqa: E402
from core.common.errors import DocumentError  # noqa: E402
from core.common.text import split_sentences  # noqa: E402
from core.ingest.fragments import fragment_document  # noqa: E402
from core.ingest.readers import parse_document  # noqa: E402

TRAIN = ROOT / "scripts" / "judge_data" / "businesses"
GOLD = ROOT / "evals" / "businesses"
# Text the businesses must not share: the gold sets the product is measured on.
MEASURED = (ROOT / "evals", ROOT.parent / "shared" / "evals")

KINDS = frozenset(
    [
        "shop",
        "trade",
        "clinic",
        "vet",
        "property",
        "saas",
        "hr",
        "it",
        "school",
        "gym",
        "hotel",
        "campsite",
        "restaurant",
        "caterer",
        "logistics",
        "public-office",
        "insurer",
        "manufacturer",
        "venue",
        "rental",
    ]
)
LANGUAGES = ("en", "de", "fr", "es")
FORMATS = frozenset({"docx", "pdf", "html", "xlsx"})
LABELS = frozenset({"answerable", "near_miss", "out_of_domain"})
NEAR_MISS_KINDS = ("other_entity", "other_attribute", "out_of_range", "topic_only", "staff_only")

MIN_QUESTIONS = 50
MIN_NEAR_MISS_SHARE = 0.35
MIN_FOLLOW_UPS = 3
DOCUMENTS = range(5, 9)
# The whole set (issue 35).
MIN_BUSINESSES, MIN_KINDS, MIN_TOTAL_QUESTIONS = 60, 15, 3000
MIN_OTHER_LANGUAGE_SHARE, MIN_PER_OTHER_LANGUAGE = 0.4, 6
# A sentence this long, shared word for word with a measured set, can't be chance.
SHARED_SENTENCE_CHARS = 40

_SPACE = re.compile(r"\s+")


def norm(text: str) -> str:
    return _SPACE.sub(" ", text).strip()


@dataclass
class Doc:
    """One document of a business: its Markdown master's name, where the product reads it, its blocks."""

    name: str  # the master's file name, as labels name it (`preise.md`)
    path: Path  # the file the product reads (`knowledge/preise.xlsx`)
    audience: str
    section_of: dict[str, tuple[str, ...]]  # block text -> its section path
    blocks: list[Block] = field(default_factory=list)
    text: str = ""  # all fragments' text, spaces normalised
    title: str = ""


@dataclass
class Business:
    folder: Path
    meta: dict
    docs: dict[str, Doc]
    labels: list[dict]
    problems: list[str]

    @property
    def slug(self) -> str:
        return self.folder.name

    def problem(self, what: str) -> None:
        self.problems.append(f"{self.slug}: {what}")


def read_document(path: Path, name: str) -> Doc:
    """The document as the product reads it; raises DocumentError with the reader's reason."""
    sidecar: dict[str, str] = {}
    meta_file = path.with_name(path.name + ".meta.yml")
    if meta_file.exists():
        from core.ingest.documents import parse_metadata

        sidecar = parse_metadata(meta_file.read_text(encoding="utf-8"), what=meta_file.name)
    doc = parse_document(path.name, path.read_bytes(), sidecar=sidecar)
    fragments = fragment_document(doc)
    found: list[Block] = []
    section_of: dict[str, tuple[str, ...]] = {}
    for fragment in fragments:
        for block in blocks(fragment.text):
            found.append(block)
            section_of.setdefault(block.text, fragment.section)
    text = norm(" ".join(f.text for f in fragments))
    return Doc(name, path, doc.audience, section_of, found, text, doc.title)


def masters(folder: Path) -> dict[str, Path]:
    """Label name -> the file the product reads, for a folder being written or one already built."""
    if (folder / "documents").is_dir():
        return {p.name: p for p in sorted((folder / "documents").glob("*.md"))}
    found = {p.name: p for p in sorted((folder / "knowledge").glob("*.md"))}
    for source in sorted((folder / "sources").glob("*.md")):
        rendered = [p for p in (folder / "knowledge").glob(source.stem + ".*") if p.suffix != ".yml"]
        found[source.name] = rendered[0] if rendered else source
    return found


def load(folder: Path) -> Business:
    business = Business(folder, {}, {}, [], [])
    try:
        business.meta = json.loads((folder / "business.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        business.problem(f"business.json can't be read: {exc}")
    for name, path in masters(folder).items():
        try:
            business.docs[name] = read_document(path, name)
        except (DocumentError, OSError, ValueError) as exc:
            business.problem(f"{path.relative_to(folder)} can't be read by the product: {exc}")
    try:
        lines = (folder / "labels.jsonl").read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        business.problem(f"labels.jsonl can't be read: {exc}")
        lines = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            label = json.loads(line)
        except ValueError as exc:
            business.problem(f"labels.jsonl line {number}: not JSON ({exc})")
            continue
        if not isinstance(label, dict):
            business.problem(f"labels.jsonl line {number}: not an object")
            continue
        label["_line"] = number
        business.labels.append(label)
    return business


def find_block(business: Business, spec: object, where: str) -> tuple[Doc, Block] | None:
    """The block a label's `{"document", "contains"}` points at, or None with the problem recorded."""
    if not isinstance(spec, dict) or not isinstance(spec.get("contains"), list) or not spec["contains"]:
        business.problem(f'{where}: a block is {{"document": ..., "contains": ["phrase", ...]}}, not {spec!r}')
        return None
    doc = business.docs.get(str(spec.get("document")))
    if doc is None:
        business.problem(f"{where}: no document {spec.get('document')!r}")
        return None
    phrases = [norm(str(p)) for p in spec["contains"]]
    for phrase in phrases:
        if not phrase:
            business.problem(f"{where}: an empty phrase")
            return None
        if phrase not in doc.text:
            business.problem(f"{where}: {phrase!r} is not verbatim in {doc.name} as the product reads it")
            return None
    # The smallest block that holds every phrase: an item before its whole list.
    holding = [b for b in doc.blocks if all(p in norm(b.read) for p in phrases)]
    if not holding:
        business.problem(f"{where}: no one block of {doc.name} holds all of {phrases} (they lie in different blocks)")
        return None
    return doc, min(holding, key=lambda b: len(b.text))


def check_business(business: Business) -> None:
    meta = business.meta
    if meta:
        if meta.get("slug") != business.slug:
            business.problem(f"business.json slug {meta.get('slug')!r} is not the folder's name")
        if meta.get("kind") not in KINDS:
            business.problem(f"kind {meta.get('kind')!r} is not one of {', '.join(sorted(KINDS))}")
        if meta.get("language") not in LANGUAGES:
            business.problem(f"language {meta.get('language')!r} is not one of {', '.join(LANGUAGES)}")
        formats = meta.get("formats", {})
        if not isinstance(formats, dict) or any(f not in FORMATS or d not in business.docs for d, f in formats.items()):
            business.problem(f"formats must map documents to {', '.join(sorted(FORMATS))}: {formats!r}")
    if len(business.docs) not in DOCUMENTS:
        business.problem(f"{len(business.docs)} documents, not 5 to 8")
    internal = [d.name for d in business.docs.values() if d.audience == "internal"]
    if len(internal) != 1:
        business.problem(f"exactly one document must be staff-only (audience: internal), not {internal}")

    ids: set[str] = set()
    for label in business.labels:
        where = f"labels.jsonl line {label['_line']}"
        qid = label.get("id")
        if not isinstance(qid, str) or not qid or qid in ids:
            business.problem(f"{where}: id {qid!r} is missing or not unique")
        ids.add(str(qid))
        question = label.get("question")
        if not isinstance(question, str) or not question.strip():
            business.problem(f"{where}: no question")
        if label.get("audience", "public") not in ("public", "internal"):
            business.problem(f"{where}: audience must be public or internal")
        kind = label.get("label")
        if kind not in LABELS:
            business.problem(f"{where}: label {kind!r} is not one of {', '.join(sorted(LABELS))}")
            continue
        if (follows := label.get("follows")) is not None and follows not in ids:
            business.problem(f"{where}: follows {follows!r}, which is not an earlier question")
        if kind == "answerable":
            specs = label.get("answer")
            if not isinstance(specs, list) or not specs:
                business.problem(f"{where}: an answerable question needs its answer blocks")
                continue
            for spec in specs:
                found = find_block(business, spec, where)
                if found and found[0].audience == "internal" and label.get("audience", "public") != "internal":
                    business.problem(f"{where}: answered by the staff-only {found[0].name}, asked by a customer")
        elif kind == "near_miss":
            if label.get("kind") not in NEAR_MISS_KINDS:
                business.problem(f"{where}: near-miss kind {label.get('kind')!r} is not one of {NEAR_MISS_KINDS}")
            specs = label.get("near")
            if not isinstance(specs, list) or not specs:
                business.problem(f"{where}: a near miss needs the block it resembles (near)")
                continue
            found_near = [f for spec in specs if (f := find_block(business, spec, where))]
            if label.get("kind") == "staff_only":
                if label.get("audience", "public") != "public":
                    business.problem(f"{where}: a staff_only near miss is asked by a customer (audience public)")
                if found_near and all(doc.audience != "internal" for doc, _ in found_near):
                    business.problem(f"{where}: a staff_only near miss points at a block of a public document")

    counts = Counter(label.get("label") for label in business.labels)
    total = sum(counts.values())
    if total < MIN_QUESTIONS:
        business.problem(f"{total} questions, fewer than {MIN_QUESTIONS}")
    if total and counts["near_miss"] / total < MIN_NEAR_MISS_SHARE:
        business.problem(f"{counts['near_miss']} near misses of {total}: under {MIN_NEAR_MISS_SHARE:.0%}")
    if not counts["out_of_domain"]:
        business.problem("no out-of-domain question")
    follow_ups = sum(1 for label in business.labels if label.get("follows"))
    if follow_ups < MIN_FOLLOW_UPS:
        business.problem(f"{follow_ups} follow-ups, fewer than {MIN_FOLLOW_UPS}")


def _measured_texts() -> tuple[set[str], set[str]]:
    """Long sentences of the measured sets' documents, and their questions, spaces normalised and lowercased."""
    sentences: set[str] = set()
    questions: set[str] = set()
    for root in MEASURED:
        if not root.is_dir():
            continue
        for path in root.rglob("*"):
            if GOLD in path.parents or not path.is_file():
                continue
            if path.suffix == ".jsonl":
                for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
                    if line.startswith("{"):
                        try:
                            questions.add(norm(str(json.loads(line).get("question", ""))).lower())
                        except ValueError:
                            continue
            elif path.suffix in (".md", ".txt"):
                text = path.read_text(encoding="utf-8", errors="replace")
                sentences.update(s for s in _long_sentences(text))
    return sentences, questions


def _long_sentences(text: str) -> Iterator[str]:
    for line in text.splitlines():
        for sentence in split_sentences(line):
            if len(sentence) >= SHARED_SENTENCE_CHARS:
                yield norm(sentence).lower()


def check_not_shared(businesses: Iterable[Business]) -> None:
    sentences, questions = _measured_texts()
    for business in businesses:
        for doc in business.docs.values():
            for block in doc.blocks:
                for sentence in _long_sentences(block.text):
                    if sentence in sentences:
                        business.problem(f"{doc.name} shares a sentence with a measured set: {sentence[:80]!r}")
        for label in business.labels:
            if norm(str(label.get("question", ""))).lower() in questions:
                business.problem(f"labels.jsonl line {label['_line']}: the question is in a measured set")


def check_set(businesses: list[Business]) -> list[str]:
    """The whole set's counts (issue 35): businesses, kinds, languages, questions."""
    problems = []
    languages = Counter(b.meta.get("language") for b in businesses)
    kinds = {b.meta.get("kind") for b in businesses}
    questions = sum(len(b.labels) for b in businesses)
    other = sum(n for lang, n in languages.items() if lang != "en")
    if len(businesses) < MIN_BUSINESSES:
        problems.append(f"set: {len(businesses)} businesses, fewer than {MIN_BUSINESSES}")
    if len(kinds) < MIN_KINDS:
        problems.append(f"set: {len(kinds)} kinds of business, fewer than {MIN_KINDS}")
    if businesses and other / len(businesses) < MIN_OTHER_LANGUAGE_SHARE:
        problems.append(f"set: {other} businesses not in English, under {MIN_OTHER_LANGUAGE_SHARE:.0%}")
    for lang in LANGUAGES[1:]:
        if languages[lang] < MIN_PER_OTHER_LANGUAGE:
            problems.append(f"set: {languages[lang]} businesses in {lang}, fewer than {MIN_PER_OTHER_LANGUAGE}")
    if questions < MIN_TOTAL_QUESTIONS:
        problems.append(f"set: {questions} questions, fewer than {MIN_TOTAL_QUESTIONS}")
    return problems


def summary(businesses: list[Business]) -> str:
    """The set's counts as Markdown tables, for the data card (scripts/judge_data/README.md)."""
    lines = []
    for title, key in (("language", "language"), ("kind of business", "kind")):
        by: dict[str, list[Business]] = {}
        for b in businesses:
            by.setdefault(str(b.meta.get(key)), []).append(b)
        lines += [f"| {title} | businesses | questions |", "|---|---|---|"]
        lines += [f"| {k} | {len(v)} | {sum(len(b.labels) for b in v):,} |" for k, v in sorted(by.items())]
        lines.append("")
    labels = Counter(
        (lb.get("label"), lb.get("kind", "")) for b in businesses for lb in b.labels if isinstance(lb, dict)
    )
    total = sum(labels.values())
    lines += ["| label | kind | questions | share |", "|---|---|---|---|"]
    for (label, kind), n in sorted(labels.items(), key=lambda item: (str(item[0][0]), str(item[0][1]))):
        lines.append(f"| {label} | {kind or '–'} | {n:,} | {n / total:.1%} |")
    follow_ups = sum(1 for b in businesses for lb in b.labels if lb.get("follows"))
    staff = sum(1 for b in businesses for lb in b.labels if lb.get("audience") == "internal")
    formats = Counter(f for b in businesses for f in b.meta.get("formats", {}).values())
    shapes: Counter[str] = Counter()
    for b in businesses:
        for lb in b.labels:
            for spec in lb.get("answer") or []:
                doc = b.docs.get(str(spec.get("document")))
                phrases = [norm(str(p)) for p in spec.get("contains", [])]
                holding = [x for x in doc.blocks if all(p in norm(x.read) for p in phrases)] if doc else []
                if holding:
                    shapes[min(holding, key=lambda x: len(x.text)).kind] += 1
    lines += [
        "",
        f"- {total:,} questions over {len(businesses)} businesses; {follow_ups} follow-ups; {staff} asked by staff.",
        "- Answer blocks by shape: " + ", ".join(f"{k} {n:,}" for k, n in shapes.most_common()) + ".",
        "- Rendered documents: " + ", ".join(f"{k} {n}" for k, n in sorted(formats.items())) + ".",
    ]
    return "\n".join(lines)


def all_folders() -> list[Path]:
    return sorted(p.parent for root in (TRAIN, GOLD) for p in root.glob("*/business.json"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="*", type=Path, help="business folders (default: every one)")
    parser.add_argument("--summary", action="store_true", help="also print the counts for the data card")
    args = parser.parse_args(argv)
    folders = args.folders or all_folders()
    businesses = [load(folder.resolve()) for folder in folders]
    for business in businesses:
        check_business(business)
    check_not_shared(businesses)
    problems = [p for b in businesses for p in b.problems]
    if not args.folders:
        problems += check_set(businesses)
    for problem in problems:
        print(problem)
    if args.summary:
        print(summary(businesses))
    questions = sum(len(b.labels) for b in businesses)
    print(f"{len(businesses)} businesses, {questions} questions: {len(problems)} problems", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
