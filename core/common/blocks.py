"""Blocks: the pieces of a fragment a person would quote, each verbatim from the fragment's text.

- a list with its lead-in sentence ("The warranty does not cover:" and its items), and each item on its own;
- a numbered procedure with the sentence that introduces it, and each step on its own;
- a table row (the readers already write it `Header: value; …`);
- a sentence, joined to the sentence before when it leans on it ("It is …", "Dies gilt …").

A block's `text` is what is quoted: one stretch of the fragment, so the verifier finds it verbatim. Its `read`
is what is judged and embedded: an item or a step is read after its lead-in, since "- rust damage" alone says
nothing about whether rust is covered.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from core.common.text import TABLE_ROW, split_sentences

_BULLET = re.compile(r"^\s*(?:[-*+•])\s+")
_NUMBERED = re.compile(r"^\s*\d{1,2}[.)]\s+")
# A sentence that starts with one of these leans on the sentence before ("Es gilt auch für …").
_LEANING = frozenset(
    [
        "it",
        "this",
        "that",
        "these",
        "those",
        "they",
        "such",
        "there",
        "its",
        "es",
        "dies",
        "das",
        "diese",
        "dieser",
        "dieses",
        "sie",
        "er",
        "dort",
        "dafür",
        "damit",
        "il",
        "elle",
        "ils",
        "elles",
        "cela",
        "ce",
        "ceci",
        "celle",
        "celui",
        "ces",
        "esto",
        "este",
        "esta",
        "estos",
        "estas",
        "eso",
        "ello",
        "ese",
        "esa",
    ]
)
# A whole list is quoted only while it stays readable; longer ones are quoted item by item.
MAX_LIST_CHARS = 1000
MIN_WORDS = 3


@dataclass(frozen=True)
class Block:
    """One quotable piece: `text` verbatim from the fragment, `read` what a judge reads (with its lead-in)."""

    text: str
    kind: str  # "sentence" | "list" | "item" | "steps" | "step" | "row"
    lead: str = ""

    @property
    def read(self) -> str:
        return f"{self.lead} {self.text}" if self.lead and not self.text.startswith(self.lead) else self.text


@dataclass(frozen=True)
class _Line:
    start: int
    end: int
    kind: str  # "bullet" | "numbered" | "row" | "prose" | "blank"


def _lines(text: str) -> list[_Line]:
    out, start = [], 0
    for raw in text.split("\n"):
        end = start + len(raw)
        stripped = raw.strip()
        if not stripped:
            kind = "blank"
        elif _BULLET.match(raw):
            kind = "bullet"
        elif _NUMBERED.match(raw):
            kind = "numbered"
        elif TABLE_ROW.fullmatch(stripped):
            kind = "row"
        else:
            kind = "prose"
        out.append(_Line(start, end, kind))
        start = end + 1
    return out


def strip_marker(line: str) -> str:
    """A list item or step without its bullet or number ("- Oak bench: 690 EUR." -> "Oak bench: 690 EUR.")."""
    return _NUMBERED.sub("", _BULLET.sub("", line)).strip()


def _sentences(paragraph: str) -> list[str]:
    return [s for s in split_sentences(paragraph) if s]


def _prose_blocks(paragraph: str) -> list[Block]:
    """A paragraph's sentences; one that leans on the sentence before is quoted with it."""
    blocks: list[Block] = []
    sentences = _sentences(paragraph)
    for i, sentence in enumerate(sentences):
        if sentence.endswith(":") or len(sentence.split()) < MIN_WORDS:
            continue
        first = re.split(r"[\s,]+", sentence, maxsplit=1)[0].strip("\"'“(")
        # "It covers…" leans on the sentence before; "IT contacts you…" (an acronym) does not.
        leaning = first[1:].islower() or len(first) == 1
        if i and leaning and first.lower() in _LEANING and not sentences[i - 1].endswith(":"):
            start = paragraph.find(sentences[i - 1])
            end = paragraph.find(sentence, start) + len(sentence)
            if start != -1 and end > start:
                blocks.append(Block(paragraph[start:end], "sentence"))
                continue
        blocks.append(Block(sentence, "sentence"))
    return blocks


def blocks(text: str) -> list[Block]:
    """The blocks of a fragment's text, in reading order."""
    lines = _lines(text)
    out: list[Block] = []
    i = 0
    lead = ""  # the last prose sentence before a list, when it ends with a colon
    lead_start = -1
    while i < len(lines):
        line = lines[i]
        if line.kind == "blank":
            i += 1
            continue
        if line.kind == "prose":
            j = i
            while j < len(lines) and lines[j].kind == "prose":
                j += 1
            paragraph = text[line.start : lines[j - 1].end]
            out.extend(_prose_blocks(paragraph))
            sentences = _sentences(paragraph)
            last = sentences[-1] if sentences else ""
            lead = last if last.endswith(":") else ""
            lead_start = line.start + paragraph.rfind(last) if lead else -1
            i = j
            continue
        kind = line.kind
        j = i
        members = []
        while j < len(lines) and lines[j].kind in (kind, "blank"):
            if lines[j].kind == kind:
                members.append(lines[j])
            j += 1
        if kind == "row":
            out.extend(Block(text[m.start : m.end].strip(), "row") for m in members)
        else:
            whole, one = ("list", "item") if kind == "bullet" else ("steps", "step")
            # Without a lead-in the block starts after the first item's marker: a quote starts with words, and a
            # statement's figures must all be in its quote ("1." is none of them).
            first = text[members[0].start : members[0].end]
            start = lead_start if lead else members[0].start + len(first) - len(strip_marker(first))
            stretch = text[start : members[-1].end].strip()
            if len(members) > 1 and len(stretch) <= MAX_LIST_CHARS:
                out.append(Block(stretch, whole, lead))
            for m in members:
                item = strip_marker(text[m.start : m.end])
                if len(item.split()) >= MIN_WORDS or lead:
                    out.append(Block(item, one, lead))
        lead = ""
        i = j
    return out
