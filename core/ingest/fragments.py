"""Cutting a document into fragments: paragraphs packed to ≤ 900 chars, never across a section or a table row."""

from __future__ import annotations

import hashlib

from core.common.text import split_sentences
from core.common.values import Document, Fragment

MAX_CHARS = 900


def _pieces(paragraph: str, limit: int) -> list[str]:
    """A paragraph as-is when it fits, otherwise cut at line, then sentence, then word boundaries.

    A line break stays a line break (a list item or a table row never runs into the next one), and
    a table row is one sentence (`split_sentences`), so it is cut only if it alone exceeds `limit`.
    """
    if len(paragraph) <= limit:
        return [paragraph]
    units: list[tuple[str, str]] = []  # (what joins it to the unit before, the unit)
    for line in paragraph.split("\n"):
        joiner = "\n"
        for sentence in split_sentences(line):
            while len(sentence) > limit:
                cut = sentence.rfind(" ", 0, limit)
                cut = cut if cut > 0 else limit
                units.append((joiner, sentence[:cut].rstrip()))
                sentence, joiner = sentence[cut:].lstrip(), " "
            units.append((joiner, sentence))
            joiner = " "
    return _pack(units, limit)


def _pack(units: list[tuple[str, str]], limit: int) -> list[str]:
    packed: list[str] = []
    current = ""
    for joiner, unit in units:
        if current and len(current) + len(joiner) + len(unit) <= limit:
            current += joiner + unit
        else:
            if current:
                packed.append(current)
            current = unit
    if current:
        packed.append(current)
    return packed


def _with_lead_ins(pieces: list[str], limit: int) -> list[str]:
    """A paragraph that ends with a colon ("The warranty does not cover:") joined to the list it introduces,
    so that no fragment ends on a lead-in whose list is in the next one; unless the two exceed `limit`."""
    out: list[str] = []
    for piece in pieces:
        if out and out[-1].rstrip().endswith(":") and len(out[-1]) + 2 + len(piece) <= limit:
            out[-1] = f"{out[-1]}\n\n{piece}"
        else:
            out.append(piece)
    return out


def fragment_document(doc: Document, limit: int = MAX_CHARS) -> list[Fragment]:
    """The document's fragments, numbered k of n; none crosses a section boundary."""
    cut: list[tuple[tuple[str, ...], int | None, str]] = []
    for section in doc.sections:
        paragraphs = [p for p in section.text.split("\n\n") if p.strip()]
        pieces = _with_lead_ins([piece for paragraph in paragraphs for piece in _pieces(paragraph, limit)], limit)
        cut.extend((section.path, section.page, text) for text in _pack([("\n\n", piece) for piece in pieces], limit))
    return [
        Fragment(doc.path, doc.title, doc.audience, path, k, len(cut), text, page)
        for k, (path, page, text) in enumerate(cut, start=1)
    ]


def fragment_hash(fragment: Fragment) -> str:
    """What decides whether a fragment must be embedded again: exactly the text the model sees."""
    return hashlib.sha256(fragment.embedded_text.encode()).hexdigest()
