"""Text helpers shared by ingestion, retrieval and the answerers: sentences and captions."""

from __future__ import annotations

import re

SECTION_SEPARATOR = " › "
# A sentence ends at . ! or ? followed by space and something that can start a sentence.
_SENTENCE_END = re.compile(r"(?<=[.!?…])[\"'”’)\]]?\s+(?=[\"'“‘(\[]?[A-Z0-9À-Þ])")


def split_sentences(text: str) -> list[str]:
    """Sentences of a paragraph; each list line also stands alone."""
    sentences: list[str] = []
    for line in text.split("\n"):
        sentences.extend(s.strip() for s in _SENTENCE_END.split(line) if s.strip())
    return sentences


def caption(title: str, section: tuple[str, ...], position: int, of: int, page: int | None = None) -> str:
    """`Document › Section · fragment k of n` (with `· p. N` for paged formats), shown under every quote."""
    where = f" · p. {page}" if page is not None else ""
    return f"{SECTION_SEPARATOR.join((title, *section))}{where} · fragment {position} of {of}"
