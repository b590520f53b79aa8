"""HTML (saved intranet pages, exported wikis): h1–h6 make sections; navigation, scripts, styles and what a
browser would not show (html_hidden) are dropped.

Parsed with Beautiful Soup on the standard library's `html.parser` (no lxml, no network, no
script ever runs). The page's `<title>` (else its first `h1`) names the document. Block
elements become paragraphs, list items lines, and a table one `Header: value; …` line per row.
"""

from __future__ import annotations

import re
from typing import Any

from core.common.errors import DocumentError
from core.ingest.documents import Outline, Parsed, decode_text
from core.ingest.readers import html_hidden
from core.ingest.readers.tables import rows_as_lines

_DROP = ("nav", "header", "footer", "script", "style", "noscript", "template", "iframe", "svg", "form", "aside")
_HEADINGS = {f"h{n}": n for n in range(1, 7)}
_BLOCKS = {
    "p", "div", "section", "article", "main", "blockquote", "pre", "address", "figure", "figcaption",
    "dl", "dt", "dd", "body", "html", "details", "summary", "center",
}  # fmt: skip
_LISTS = {"ul", "ol", "menu"}
_SPACE = re.compile(r"\s+")


def read(data: bytes) -> Parsed:
    try:
        from bs4 import BeautifulSoup
    except ImportError as exc:  # pragma: no cover - a dependency, but say so if it's missing
        raise DocumentError("HTML support is not installed (pip install beautifulsoup4)") from exc
    soup = BeautifulSoup(_decode(data), "html.parser")
    _drop_hidden(soup)
    title_tag = soup.find("title")
    title = _fold(title_tag.get_text()) if title_tag else ""
    if title_tag:
        title_tag.decompose()
    page = _Page(title)
    page.walk(soup)
    page.flush()
    return Parsed(title or (page.first_h1[0] if page.first_h1 else None), {}, tuple(page.outline.sections))


def _drop_hidden(soup: Any) -> None:
    """Scripts, navigation, and what a reader never sees: hidden by an attribute or by a style, inline or from the
    page's `<style>` blocks (html_hidden)."""
    sheet = html_hidden.Sheet.of(soup)  # before the <style> blocks go
    for element in soup.find_all(_DROP):
        element.decompose()
    for element in soup.find_all(True, {"role": ["navigation", "banner", "contentinfo"]}):
        element.decompose()
    html_hidden.drop_unseen(soup, sheet)


class _Page:
    """The sections of a page as its elements are walked: headings open sections, blocks fill them."""

    def __init__(self, title: str) -> None:
        self.title = title
        self.outline = Outline()
        self.inline: list[str] = []
        self.first_h1: list[str] = []

    def end_block(self) -> None:
        self.outline.add(_text("".join(self.inline)))
        self.inline.clear()

    def flush(self) -> None:
        self.end_block()
        self.outline.close()

    def walk(self, root: Any) -> None:
        # An explicit stack, not recursion: html.parser nests every unclosed <p>, so an ordinary page of
        # 1,200 paragraphs is 1,200 levels deep. A callable on the stack ends the block it was pushed for.
        from bs4 import NavigableString, Tag
        from bs4.element import PreformattedString

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
            elif isinstance(child, PreformattedString):
                continue  # comments, the doctype, CDATA, processing instructions
            elif isinstance(child, NavigableString):
                self.inline.append(_SPACE.sub(" ", str(child)))  # source line breaks are spaces; only <br> breaks
            elif isinstance(child, Tag):
                pending.extend(self._element(child))

    def _element(self, child: Any) -> list[Any]:
        """Takes in one element; returns what the walk must visit next (its children, then its block's end)."""
        name = child.name.lower()
        if name in _HEADINGS:
            self._heading(_HEADINGS[name], _fold(child.get_text(" ")))
        elif name == "table":
            self.end_block()
            rows = rows_as_lines(_table_cells(child))
            if rows:
                self.outline.add("\n".join(rows))
        elif name in _LISTS:
            self.end_block()
            items = [_fold(li.get_text(" ")) for li in child.find_all("li")]
            if any(items):
                marker = "{}." if name == "ol" else "-"
                lines = [f"{marker.format(n)} {item}" for n, item in enumerate(filter(None, items), start=1)]
                self.outline.add("\n".join(lines))
        elif name == "br":
            self.inline.append("\n")
        elif name in _BLOCKS or name == "li":
            self.end_block()
            return [self.end_block, iter(child.children)]
        else:
            return [iter(child.children)]
        return []

    def _heading(self, level: int, text: str) -> None:
        if not text:
            return
        self.end_block()
        if level == 1 and not self.first_h1 and not self.outline.headings:
            self.first_h1.append(text)
            if not self.title or self.title.casefold() == text.casefold():
                self.outline.close()
                return  # the page's top heading names it, as in Markdown: no section of its own
        self.outline.open(level, text)


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
