"""HTML (saved intranet pages, exported wikis): h1–h6 make sections; navigation, scripts and styles are dropped.

Parsed with Beautiful Soup on the standard library's `html.parser` (no lxml, no network, no
script ever runs). The page's `<title>` (else its first `h1`) names the document. Block
elements become paragraphs, list items lines, and a table one `Header: value; …` line per row.
"""

from __future__ import annotations

import re
from typing import Any

from core.errors import DocumentError
from core.ingest.documents import Parsed, Section, decode_text
from core.ingest.readers.tables import rows_as_lines

_DROP = ("nav", "header", "footer", "script", "style", "noscript", "template", "iframe", "svg", "form", "aside")
_HEADINGS = {f"h{n}": n for n in range(1, 7)}
_BLOCKS = {
    "p", "div", "section", "article", "main", "blockquote", "pre", "address", "figure", "figcaption",
    "dl", "dt", "dd", "body", "html", "details", "summary", "center",
}  # fmt: skip
_LISTS = {"ul", "ol", "menu"}
_SPACE = re.compile(r"\s+")
_HIDDEN_STYLE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.IGNORECASE)


def read(data: bytes) -> Parsed:
    try:
        from bs4 import BeautifulSoup, NavigableString, Tag
        from bs4.element import PreformattedString
    except ImportError as exc:  # pragma: no cover - a dependency, but say so if it's missing
        raise DocumentError("HTML support is not installed (pip install beautifulsoup4)") from exc
    soup = BeautifulSoup(_decode(data), "html.parser")
    for element in soup.find_all(_DROP):
        element.decompose()
    for element in soup.find_all(True, {"role": ["navigation", "banner", "contentinfo"]}):
        element.decompose()
    for element in soup.find_all(True, {"hidden": True}):
        element.decompose()
    # Hidden as the README says: display:none / visibility:hidden inline, and aria-hidden="true".
    for element in soup.find_all(lambda tag: _HIDDEN_STYLE.search(str(tag.get("style", ""))) is not None):
        element.decompose()
    for element in soup.find_all(True, {"aria-hidden": "true"}):
        element.decompose()
    title_tag = soup.find("title")
    title = _fold(title_tag.get_text()) if title_tag else ""
    if title_tag:
        title_tag.decompose()

    sections: list[Section] = []
    stack: list[tuple[int, str]] = []
    blocks: list[str] = []
    inline: list[str] = []
    first_h1: list[str] = []

    def end_block() -> None:
        text = _text("".join(inline))
        inline.clear()
        if text:
            blocks.append(text)

    def flush() -> None:
        end_block()
        if blocks:
            sections.append(Section(tuple(name for _, name in stack), "\n\n".join(blocks)))
            blocks.clear()

    def walk(root: Any) -> None:
        # An explicit stack, not recursion: html.parser nests every unclosed <p>, so an ordinary page of
        # 1,200 paragraphs is 1,200 levels deep. A callable on the stack ends the block it was pushed for.
        pending: list[Any] = [iter(root.children)]
        while pending:
            top = pending[-1]
            if callable(top):
                pending.pop()
                top()
                continue
            child = next(top, None)
            if child is None:
                pending.pop()
                continue
            if isinstance(child, PreformattedString):
                continue  # comments, the doctype, CDATA, processing instructions
            if isinstance(child, NavigableString):
                inline.append(_SPACE.sub(" ", str(child)))  # source line breaks are spaces; only <br> breaks
                continue
            if not isinstance(child, Tag):
                continue
            name = child.name.lower()
            if name in _HEADINGS:
                text = _fold(child.get_text(" "))
                if not text:
                    continue
                flush()
                level = _HEADINGS[name]
                if level == 1 and not first_h1 and not stack:
                    first_h1.append(text)
                    if not title or title.casefold() == text.casefold():
                        continue  # the page's top heading names it, as in Markdown: no section of its own
                while stack and stack[-1][0] >= level:
                    stack.pop()
                stack.append((level, text))
            elif name == "table":
                end_block()
                rows = rows_as_lines(_table_cells(child))
                if rows:
                    blocks.append("\n".join(rows))
            elif name in _LISTS:
                end_block()
                items = [_fold(li.get_text(" ")) for li in child.find_all("li")]
                if any(items):
                    marker = "{}." if name == "ol" else "-"
                    lines = [f"{marker.format(n)} {item}" for n, item in enumerate(filter(None, items), start=1)]
                    blocks.append("\n".join(lines))
            elif name == "br":
                inline.append("\n")
            elif name in _BLOCKS or name == "li":
                end_block()
                pending.append(end_block)
                pending.append(iter(child.children))
            else:
                pending.append(iter(child.children))

    walk(soup)
    flush()
    return Parsed(title or (first_h1[0] if first_h1 else None), {}, tuple(sections))


def _decode(data: bytes) -> str:
    """UTF-8 (the web's default), else the charset the page declares, else Windows-1252."""
    try:
        return decode_text(data)
    except DocumentError:
        pass
    declared = re.search(rb"""charset=["']?([A-Za-z0-9_-]+)""", data[:2048])
    for encoding in (declared.group(1).decode() if declared else "", "cp1252"):
        if encoding:
            try:
                return data.decode(encoding)
            except (LookupError, UnicodeDecodeError):
                continue
    raise DocumentError("the page's text encoding can't be read")


def _fold(text: str) -> str:
    return " ".join(text.split())


def _text(text: str) -> str:
    """Whitespace folded; a <br> inside a paragraph stays a line break."""
    return "\n".join(part for part in (_SPACE.sub(" ", line).strip() for line in text.split("\n")) if part)


def _table_cells(table: Any) -> list[list[str]]:
    """Rows of this table (not of tables nested in it), cells repeated across their colspan."""
    rows: list[list[str]] = []
    for row in table.find_all("tr"):
        if row.find_parent("table") is not table:
            continue
        cells: list[str] = []
        for cell in row.find_all(["td", "th"], recursive=False):
            text = " ".join(cell.get_text(" ").split())
            span = cell.get("colspan", "1")
            repeat = int(span) if str(span).isdigit() and 0 < int(span) <= 50 else 1
            cells.extend([text] + [""] * (repeat - 1))
        rows.append(cells)
    return rows
