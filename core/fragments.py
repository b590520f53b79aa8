"""Cutting a document into fragments: sections by heading, paragraphs packed to ≤ 900 chars."""

from __future__ import annotations

import re
from dataclasses import dataclass

from core.documents import Document

MAX_CHARS = 900
SECTION_SEPARATOR = " › "
_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
# A sentence ends at . ! or ? followed by space and something that can start a sentence.
_SENTENCE_END = re.compile(r"(?<=[.!?…])[\"'”’)\]]?\s+(?=[\"'“‘(\[]?[A-Z0-9À-Þ])")


def caption(title: str, section: tuple[str, ...], position: int, of: int) -> str:
    """`Document › Section · fragment k of n`, the line shown under every quote."""
    return f"{SECTION_SEPARATOR.join((title, *section))} · fragment {position} of {of}"


@dataclass(frozen=True)
class Section:
    """A run of a document's body under one heading path."""

    path: tuple[str, ...]
    paragraphs: tuple[str, ...]


@dataclass(frozen=True)
class Fragment:
    """A quotable piece of a document; `position` counts from 1 up to `of`."""

    document: str  # the document's path
    title: str
    audience: str
    section: tuple[str, ...]
    position: int
    of: int
    text: str

    @property
    def section_path(self) -> str:
        return SECTION_SEPARATOR.join(self.section)

    @property
    def heading(self) -> str:
        """`Document › Section`: how a fragment is named to a model or in a refusal."""
        return SECTION_SEPARATOR.join((self.title, *self.section))

    @property
    def caption(self) -> str:
        return caption(self.title, self.section, self.position, self.of)

    @property
    def embedded_text(self) -> str:
        """What is embedded: headings give a bare paragraph its meaning."""
        parts = [self.title]
        if self.section:
            parts.append(self.section_path)
        parts.append(self.text)
        return ". ".join(parts)


def split_sections(doc: Document) -> list[Section]:
    """Sections by heading path; the document's own top heading is not part of paths."""
    if not doc.is_markdown:
        return [Section((), tuple(_paragraphs(doc.body.split("\n"))))]
    sections: list[Section] = []
    stack: list[tuple[int, str]] = []
    lines: list[str] = []
    in_fence = False
    title_heading_seen = False

    def flush() -> None:
        paragraphs = tuple(_paragraphs(lines))
        if paragraphs:
            sections.append(Section(tuple(name for _, name in stack), paragraphs))
        lines.clear()

    for line in doc.body.split("\n"):
        if _FENCE.match(line):
            in_fence = not in_fence
        match = None if in_fence else _HEADING.match(line)
        if match is None:
            lines.append(line)
            continue
        flush()
        level, name = len(match.group(1)), match.group(2)
        if level == 1 and not title_heading_seen and not stack:
            # The top heading names the document; the caption already shows the title.
            title_heading_seen = True
            continue
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, name))
    flush()
    return sections


def _paragraphs(lines: list[str]) -> list[str]:
    paragraphs: list[str] = []
    current: list[str] = []
    for line in lines:
        if line.strip():
            current.append(line.rstrip())
        elif current:
            paragraphs.append("\n".join(current))
            current = []
    if current:
        paragraphs.append("\n".join(current))
    return paragraphs


def split_sentences(text: str) -> list[str]:
    """Sentences of a paragraph; each list line also stands alone."""
    sentences: list[str] = []
    for line in text.split("\n"):
        sentences.extend(s.strip() for s in _SENTENCE_END.split(line) if s.strip())
    return sentences


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
    cut: list[tuple[tuple[str, ...], str]] = []
    for section in split_sections(doc):
        pieces = [piece for paragraph in section.paragraphs for piece in _pieces(paragraph, limit)]
        cut.extend((section.path, text) for text in _pack(pieces, limit, "\n\n"))
    return [
        Fragment(doc.path, doc.title, doc.audience, path, k, len(cut), text)
        for k, (path, text) in enumerate(cut, start=1)
    ]
