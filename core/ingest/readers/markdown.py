"""Markdown: optional front matter, sections by `#` headings (fenced code is never a heading)."""

from __future__ import annotations

import re

from core.errors import DocumentError
from core.ingest.documents import Parsed, Section, decode_text, paragraphs, parse_metadata

_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")


def read(data: bytes) -> Parsed:
    meta, body = split_front_matter(decode_text(data))
    title, sections = _sections(body)
    return Parsed(title, meta, tuple(sections))


def split_front_matter(text: str) -> tuple[dict[str, str], str]:
    if not text.startswith("---\n"):
        return {}, text
    end = text.find("\n---", 3)
    while end != -1 and text[end + 4 : end + 5] not in ("\n", ""):
        end = text.find("\n---", end + 4)
    if end == -1:
        raise DocumentError("front matter starts with --- but is never closed by a --- line")
    return parse_metadata(text[4:end], first_line=2), text[end + 5 :]


def _sections(body: str) -> tuple[str | None, list[Section]]:
    """The document's top heading (its title, not part of any path) and its sections by heading path."""
    sections: list[Section] = []
    stack: list[tuple[int, str]] = []
    lines: list[str] = []
    in_fence = False
    title: str | None = None

    def flush() -> None:
        found = paragraphs(lines)
        if found:
            sections.append(Section(tuple(name for _, name in stack), "\n\n".join(found)))
        lines.clear()

    for line in body.split("\n"):
        if _FENCE.match(line):
            in_fence = not in_fence
        match = None if in_fence else _HEADING.match(line)
        if match is None:
            lines.append(line)
            continue
        flush()
        level, name = len(match.group(1)), match.group(2)
        if level == 1 and title is None and not stack:
            # The top heading names the document; the caption already shows the title.
            title = name
            continue
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, name))
    flush()
    return title, sections
