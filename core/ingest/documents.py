"""The format-neutral document every reader produces, and the helpers readers share."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from core.common.errors import DocumentError
from core.common.values import Section

AUDIENCES = ("public", "internal")


class Outline:
    """Sections as a reader meets a document's parts in order: a heading closes the section before it and
    opens its own under the headings above it; blocks of text fill the section that is open."""

    def __init__(self) -> None:
        self.sections: list[Section] = []
        self.headings: list[tuple[int, str]] = []  # the open headings, (level, text), outermost first
        self.blocks: list[str] = []

    def add(self, block: str) -> None:
        if block:
            self.blocks.append(block)

    def close(self) -> None:
        if self.blocks:
            self.sections.append(Section(tuple(name for _, name in self.headings), "\n\n".join(self.blocks)))
            self.blocks.clear()

    def open(self, level: int, heading: str) -> None:
        self.close()
        while self.headings and self.headings[-1][0] >= level:
            self.headings.pop()
        self.headings.append((level, heading))


@dataclass(frozen=True)
class Parsed:
    """What a reader found in a file, before metadata from elsewhere is merged in."""

    title: str | None
    meta: dict[str, str]
    sections: tuple[Section, ...]


def sha256_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def decode_text(data: bytes) -> str:
    """UTF-8 (with or without a BOM), newlines folded to \\n; raises DocumentError for binary or other encodings."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DocumentError(f"not valid UTF-8 (byte {exc.start})") from exc
    if "\x00" in text:
        raise DocumentError("looks like a binary file (contains NUL bytes)")
    return text.replace("\r\n", "\n").replace("\r", "\n")


def parse_metadata(text: str, first_line: int = 1, what: str = "front matter") -> dict[str, str]:
    """`key: value` lines (front matter, sidecars); blank lines and `#` comments are skipped."""
    meta: dict[str, str] = {}
    for number, line in enumerate(text.split("\n"), start=first_line):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        key, sep, value = line.partition(":")
        if not sep or not key.strip():
            # The line itself is not repeated: it may hold anything, and the reason is shown to admins.
            raise DocumentError(f"{what} line {number} is not 'key: value'")
        # YAML's rule: " #" starts a comment (`audience: public  # customers may read it`).
        meta[key.strip().lower()] = value.split(" #", 1)[0].strip().strip("\"'")
    return meta


def paragraphs(lines: list[str]) -> list[str]:
    """Runs of non-blank lines, right-trimmed."""
    out: list[str] = []
    current: list[str] = []
    for line in lines:
        if line.strip():
            current.append(line.rstrip())
        elif current:
            out.append("\n".join(current))
            current = []
    if current:
        out.append("\n".join(current))
    return out
