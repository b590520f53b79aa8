"""Cutting a document into fragments: paragraphs packed to ≤ 900 chars, never across a section."""

from __future__ import annotations

import hashlib

from core.ingest.documents import Document
from core.retrieval import Fragment
from core.text import split_sentences

MAX_CHARS = 900


def _pieces(paragraph: str, limit: int) -> list[str]:
    """A paragraph as-is when it fits, otherwise cut at sentence (then word) boundaries."""
    if len(paragraph) <= limit:
        return [paragraph]
    units: list[str] = []
    for sentence in split_sentences(paragraph):
        while len(sentence) > limit:
            cut = sentence.rfind(" ", 0, limit)
            cut = cut if cut > 0 else limit
            units.append(sentence[:cut].rstrip())
            sentence = sentence[cut:].lstrip()
        units.append(sentence)
    return _pack(units, limit, " ")


def _pack(units: list[str], limit: int, joiner: str) -> list[str]:
    packed: list[str] = []
    current = ""
    for unit in units:
        if current and len(current) + len(joiner) + len(unit) <= limit:
            current += joiner + unit
        else:
            if current:
                packed.append(current)
            current = unit
    if current:
        packed.append(current)
    return packed


def fragment_document(doc: Document, limit: int = MAX_CHARS) -> list[Fragment]:
    """The document's fragments, numbered k of n; none crosses a section boundary."""
    cut: list[tuple[tuple[str, ...], int | None, str]] = []
    for section in doc.sections:
        paragraphs = [p for p in section.text.split("\n\n") if p.strip()]
        pieces = [piece for paragraph in paragraphs for piece in _pieces(paragraph, limit)]
        cut.extend((section.path, section.page, text) for text in _pack(pieces, limit, "\n\n"))
    return [
        Fragment(doc.path, doc.title, doc.audience, path, k, len(cut), text, page)
        for k, (path, page, text) in enumerate(cut, start=1)
    ]


def fragment_hash(fragment: Fragment) -> str:
    """What decides whether a fragment must be embedded again: exactly the text the model sees."""
    return hashlib.sha256(fragment.embedded_text.encode()).hexdigest()
