"""Markdown: optional front matter, sections by `#` headings (fenced code is never a heading), tables by row."""

from __future__ import annotations

import re

from core.common.errors import DocumentError
from core.common.values import Section
from core.ingest.documents import Parsed, decode_text, paragraphs, parse_metadata
from core.ingest.readers.tables import rows_as_lines

_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_TABLE_DELIMITER = re.compile(r"^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$")
_CELL_BORDER = re.compile(r"(?<!\\)\|")


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
        found = paragraphs(_tables_as_rows(lines))
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


def _cells(line: str) -> list[str]:
    inner = line.strip()
    inner = inner[1:] if inner.startswith("|") else inner
    inner = inner[:-1] if inner.endswith("|") and not inner.endswith("\\|") else inner
    return [cell.strip().replace("\\|", "|") for cell in _CELL_BORDER.split(inner)]


def _tables_as_rows(lines: list[str]) -> list[str]:
    """GFM tables (a header line, a `---|---` line, then rows with `|`) as one `Header: value; …` line per row."""
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if "|" in line and i + 1 < len(lines) and "-" in lines[i + 1] and _TABLE_DELIMITER.match(lines[i + 1]):
            rows = [_cells(line)]
            i += 2
            while i < len(lines) and lines[i].strip() and "|" in lines[i]:
                rows.append(_cells(lines[i]))
                i += 1
            # Blank lines around: the table is its own paragraph, apart from the prose before and after.
            out.extend(["", *rows_as_lines(rows), ""])
            continue
        out.append(line)
        i += 1
    return out
