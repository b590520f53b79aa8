"""PDF: the text layer page by page, sections from the outline, else font-size headings, else pages.

A PDF is untrusted input, and PDFium is C: the file is parsed in a child process
(`_pdf_worker.py`) under a wall-clock, CPU and address-space limit, so a hostile or broken
file fails that one document with a reason and nothing else. The child returns text lines
with their font size and position; this module turns them into sections, one per heading and
page, so every fragment knows the page it is on (1-based, as printed on the caption).
"""

from __future__ import annotations

import itertools
import re
import statistics
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from core.common.errors import DocumentError
from core.common.values import Section
from core.ingest.documents import Parsed
from core.ingest.readers.sandbox import child

TIME_LIMIT = 60.0  # seconds of wall-clock time for one file
MEMORY_LIMIT = 1024 << 20  # bytes of address space for the child (a 20-page PDF needs under 64 MiB)
WORKER = Path(__file__).with_name("_pdf_worker.py")

_BULLET = re.compile(r"^[•▪◦‣∙●○■□–-]\s")
_SPACE = re.compile(r"\s+")
_LEFTOVER_TITLE = re.compile(r"^microsoft \w+ - |\.(docx?|pdf|odt|rtf|txt|xlsx?|pptx?|indd|pages)$", re.IGNORECASE)


@dataclass(frozen=True)
class Line:
    """One line of a page's text layer; `y` is its baseline, measured up from the page's foot."""

    text: str
    size: float
    x: float
    y: float


@dataclass(frozen=True)
class Layout:
    """What the child process found: the document's title, its outline and every page's lines."""

    title: str | None
    outline: tuple[tuple[int, str, int | None], ...]  # (level from 1, title, 0-based page)
    pages: tuple[tuple[Line, ...], ...]


def read(data: bytes) -> Parsed:
    layout = extract(data)
    return Parsed(_real_title(layout.title), {}, tuple(sections(layout)))


def _real_title(title: str | None) -> str | None:
    """The title in the file's properties, unless it is a leftover such as "Microsoft Word - terms_v3.docx"."""
    if not title or _LEFTOVER_TITLE.search(title) or title.casefold() in ("untitled", "title", "document"):
        return None
    return title


def extract(data: bytes, time_limit: float | None = None, memory_limit: int | None = None) -> Layout:
    """Run the child parser on `data`; raises DocumentError when it fails, crashes or runs out of time."""
    time_limit = TIME_LIMIT if time_limit is None else time_limit
    memory_limit = MEMORY_LIMIT if memory_limit is None else memory_limit
    found = child([str(WORKER)], "PDF", data, time_limit, memory_limit)
    return Layout(
        title=found["title"],
        outline=tuple((int(level), str(title), page) for level, title, page in found["outline"]),
        pages=tuple(
            tuple(Line(str(t), float(s), float(x), float(y)) for t, s, x, y in page) for page in found["pages"]
        ),
    )


def _norm(text: str) -> str:
    return _SPACE.sub(" ", text).strip().casefold()


def _headings(layout: Layout) -> dict[tuple[int, int], tuple[int, str]]:
    """(page, line) → (level, name) for every heading line; from the outline if there is one, else font sizes."""
    if layout.outline:
        return _outline_headings(layout)
    return _font_headings(layout)


def _outline_headings(layout: Layout) -> dict[tuple[int, int], tuple[int, str]]:
    """Each bookmark starts its section at the line that shows its title, or at the top of its page.

    Bookmarks are taken in order; one pointing backwards or nowhere continues from the previous one.
    """
    found: dict[tuple[int, int], tuple[int, str]] = {}
    at_page, at_line = 0, 0
    for level, name, page in layout.outline:
        if page is None or not 0 <= page < len(layout.pages) or page < at_page:
            page = at_page
        start = at_line if page == at_page else 0
        wanted = _norm(name)
        line = next(
            (
                i
                for i, candidate in enumerate(layout.pages[page][start:], start)
                if _norm(candidate.text) == wanted
                or (wanted in _norm(candidate.text) and len(candidate.text) <= len(name) + 12)
            ),
            None,
        )
        if line is not None:
            found[(page, line)] = (level, name)
            at_page, at_line = page, line + 1
        else:
            # Not shown on the page (e.g. a bookmark named differently from its heading): the section starts at
            # the page's top, or after the previous heading on the same page, and no line is taken as its heading.
            found[(page, -1 - start)] = (level, name)
            at_page, at_line = page, start
    return found


def _font_headings(layout: Layout) -> dict[tuple[int, int], tuple[int, str]]:
    """Short lines set clearly larger than the body text; the largest size is level 1."""
    weight: Counter[float] = Counter()
    for page in layout.pages:
        for line in page:
            weight[line.size] += len(line.text)
    if not weight:
        return {}
    body = weight.most_common(1)[0][0]
    title = _norm(layout.title or "")
    candidates = {
        (p, i): line
        for p, page in enumerate(layout.pages)
        for i, line in enumerate(page)
        if line.size >= body * 1.15
        and len(line.text) <= 120
        and not line.text.endswith((".", ",", ";"))
        and _norm(line.text) != title
    }
    sizes = sorted({line.size for line in candidates.values()}, reverse=True)[:6]
    return {key: (sizes.index(line.size) + 1, line.text) for key, line in candidates.items() if line.size in sizes}


def _paragraphs(lines: list[Line]) -> str:
    """Lines joined into paragraphs: a wider gap or a change of size starts one, a bullet starts a line."""
    pitches = [a.y - b.y for a, b in itertools.pairwise(lines) if abs(a.size - b.size) < 0.5 and a.y > b.y]
    pitch = statistics.median(pitches) if pitches else 0.0
    out = ""
    for previous, line in zip([None, *lines], lines, strict=False):
        if previous is None:
            out = line.text
            continue
        gap = previous.y - line.y
        if gap <= 0 or gap > pitch * 1.3 or abs(previous.size - line.size) > max(0.5, previous.size * 0.1):
            out += "\n\n" + line.text
        elif _BULLET.match(line.text):
            out += "\n" + line.text
        else:
            out += " " + line.text
    return out


def sections(layout: Layout) -> list[Section]:
    """Sections by heading path, split at page breaks so each carries its page; raises DocumentError if textless."""
    letters = sum(ch.isalnum() for page in layout.pages for line in page for ch in line.text)
    if letters < 10:
        raise DocumentError("no text layer (scanned?)")
    headings = _headings(layout)
    title = _norm(layout.title or "")
    stack: list[tuple[int, str]] = []
    out: list[Section] = []
    body: list[Line] = []

    def flush(page: int) -> None:
        if body:
            out.append(Section(tuple(name for _, name in stack), _paragraphs(body), page))
            body.clear()

    for p, lines in enumerate(layout.pages):
        for i, line in enumerate(lines):
            silent = headings.get((p, -1 - i))  # a bookmark that starts here without a heading line
            heading = headings.get((p, i))
            for level, name in filter(None, (silent, heading)):
                flush(p + 1)
                while stack and stack[-1][0] >= level:
                    stack.pop()
                stack.append((level, name))
            if heading is None and not (not stack and title and _norm(line.text) == title):
                body.append(line)  # the title line on the cover is the caption's title already
        flush(p + 1)
    return out
