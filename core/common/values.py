"""The values that pass between stages: a document as read, its fragments, and a fragment found for a
question (a hit). They live here, below every stage, so that no stage imports another for a type.
"""

from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass, field
from typing import Any

from core.common.blocks import Block, blocks
from core.common.text import SECTION_SEPARATOR, caption

TOP_K = 5


PER_DOCUMENT = 3


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
    page: int | None = None  # for paged formats (PDF): where the fragment starts
    as_of: str | None = None  # the document's `as_of`, as its metadata gives it (see core.answering.review.dated)
    review_every: str | None = None  # the document's own review period (`180d`, `6 months`), if it sets one
    modified: str | None = None  # the file's date when it was indexed (ISO): the review clock without `as_of`

    @property
    def section_path(self) -> str:
        return SECTION_SEPARATOR.join(self.section)

    @property
    def heading(self) -> str:
        """`Document › Section`: how a fragment is named to a model or in a refusal."""
        return SECTION_SEPARATOR.join((self.title, *self.section))

    @property
    def caption(self) -> str:
        return caption(self.title, self.section, self.position, self.of, self.page)

    @property
    def embedded_text(self) -> str:
        """What is embedded: headings give a bare paragraph its meaning."""
        parts = [self.title]
        if self.section:
            parts.append(self.section_path)
        parts.append(self.text)
        return ". ".join(parts)


def quotable_sentences(fragment: Fragment) -> list[tuple[str, str]]:
    """(block, what is embedded for it) for each block an answerer may quote (`core.common.blocks`).

    The block is embedded as it is read (an item after its list's lead-in) with its document and section, as
    fragments are. Ingestion embeds these at index time, so an answer never waits for a fragment seen the
    first time.
    """
    context = ". ".join([fragment.title, *([fragment.section_path] if fragment.section else [])])
    return [(block.text, f"{context}. {block.read}") for block in fragment_blocks(fragment.text)]


def read_of(fragment: Fragment, quote: str) -> str:
    """What the judge reads for one of the fragment's blocks: an item or a step after its lead-in."""
    return next((b.read for b in fragment_blocks(fragment.text) if b.text == quote), quote)


@functools.lru_cache(maxsize=4096)
def fragment_blocks(text: str) -> tuple[Block, ...]:
    """The blocks of a fragment's text, kept for the fragments the last few thousand questions retrieved."""
    return tuple(blocks(text))


def text_hash(text: str) -> str:
    """The key of a stored text vector."""
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class Hit:
    """A fragment found for a question, with its cosine similarity."""

    fragment_id: int
    fragment: Fragment
    score: float


@dataclass(frozen=True)
class Section:
    """A run of a document's text under one heading path; paragraphs are separated by blank lines."""

    path: tuple[str, ...]
    text: str
    page: int | None = None


@dataclass(frozen=True)
class Document:
    """One knowledge document, read, with its metadata settled."""

    path: str  # relative to the knowledge folder, with forward slashes
    title: str
    audience: str
    sections: tuple[Section, ...]
    sha256: str  # of the file's bytes
    size: int
    meta: dict[str, str] = field(default_factory=dict)
    meta_sha256: str = ""  # of the sidecar and defaults files that added metadata ("" when none)
    modified: str = ""  # the file's modification date (ISO), when it was read: the review clock without `as_of`
    language: str = ""  # ISO 639-1: declared (`language:`) or detected; "" when it can't be told


@dataclass(frozen=True)
class LogRecord:
    """One answer as the run log keeps it: what `record` writes. Read back, it is a `Logged` row
    (core/store/records.py): this record with when and where it was asked and the feedback on it."""

    id: str
    question: str
    kind: str
    reason: str | None
    statements: list[dict[str, Any]]
    discarded: int
    answerer: str
    timings: dict[str, float]
    calculations: list[dict[str, Any]]
    scope: tuple[str, ...]
    standalone_question: str = ""  # what was searched; the question when empty
    fragments: tuple[tuple[int, float], ...] = ()  # (fragment id, score) of each retrieved hit, best first
    model_calls: int = 0

    @property
    def total_ms(self) -> float:
        return self.timings.get("total", 0.0)
