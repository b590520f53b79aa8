"""A minimal PDF writer: Helvetica text, pages, an outline (bookmarks) and a document title.

Enough to make real, readable PDFs from text written in the repo (the demo documents, the
benchmark's corpus, the readers' tests) without a PDF-writing dependency. Text is encoded as
WinAnsi (Latin-1 plus €, dashes and typographic quotes); widths come from Helvetica's metrics,
so lines wrap where a reader would expect them.

    pdf = PdfWriter(title="Terms of sale")
    flow = Flow(pdf)
    flow.heading("Payment", level=1)       # a bold line and an outline entry
    flow.paragraph("The advance is 40% ...")
    flow.bullet("Bank transfer")
    data = pdf.to_bytes()
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field

PAGE_WIDTH, PAGE_HEIGHT = 595.0, 842.0  # A4 in points
MARGIN = 64.0

# Helvetica advance widths (1/1000 em) for ASCII 32..126, from the standard AFM.
_WIDTHS = [
    278, 278, 355, 556, 556, 889, 667, 191, 333, 333, 389, 584, 278, 333, 278, 278,
    556, 556, 556, 556, 556, 556, 556, 556, 556, 556, 278, 278, 584, 584, 584, 556,
    1015, 667, 667, 722, 722, 667, 611, 778, 722, 278, 500, 667, 556, 833, 722, 778,
    667, 778, 722, 667, 611, 722, 667, 944, 667, 667, 611, 278, 278, 278, 469, 556,
    333, 556, 556, 500, 556, 556, 278, 556, 556, 222, 222, 500, 222, 833, 556, 556,
    556, 556, 333, 500, 278, 556, 500, 722, 500, 500, 500, 334, 260, 334, 584,
]  # fmt: skip


def text_width(text: str, size: float, bold: bool = False) -> float:
    """Width in points of `text` set in Helvetica (bold is about 8% wider)."""
    units = sum(_WIDTHS[ord(c) - 32] if 32 <= ord(c) <= 126 else 556 for c in text)
    return units * size / 1000 * (1.08 if bold else 1.0)


def wrap(text: str, width: float, size: float, bold: bool = False) -> list[str]:
    """Greedy word wrap to lines no wider than `width` points."""
    lines: list[str] = []
    current = ""
    for word in text.split():
        candidate = f"{current} {word}" if current else word
        if current and text_width(candidate, size, bold) > width:
            lines.append(current)
            current = word
        else:
            current = candidate
    if current:
        lines.append(current)
    return lines


def _pdf_string(text: str) -> bytes:
    """A literal string in WinAnsi encoding, for page content."""
    raw = text.encode("cp1252", errors="replace")
    return b"(" + raw.replace(b"\\", b"\\\\").replace(b"(", b"\\(").replace(b")", b"\\)") + b")"


def _text_string(text: str) -> bytes:
    """A text string (outline titles, metadata): UTF-16BE with a byte-order mark, as hex."""
    return b"<FEFF" + text.encode("utf-16-be").hex().upper().encode() + b">"


@dataclass
class Page:
    ops: list[bytes] = field(default_factory=list)

    def text(self, x: float, y: float, text: str, size: float = 10.5, bold: bool = False) -> None:
        font = b"/F2" if bold else b"/F1"
        self.ops.append(b"BT %s %.1f Tf 1 0 0 1 %.2f %.2f Tm %s Tj ET" % (font, size, x, y, _pdf_string(text)))

    def raw(self, content: bytes) -> None:
        """Content-stream operators as they are (tests use this for odd text layers and drawings)."""
        self.ops.append(content)


@dataclass
class _Bookmark:
    title: str
    page: int  # 0-based
    y: float
    level: int  # 1 = top level
    children: list[_Bookmark] = field(default_factory=list)


class PdfWriter:
    """Pages of Helvetica text, an optional outline and a title, written as one PDF file."""

    def __init__(self, title: str | None = None) -> None:
        self.title = title
        self.pages: list[Page] = []
        self._roots: list[_Bookmark] = []
        self._open: list[_Bookmark] = []
        self.compress = True

    def new_page(self) -> Page:
        self.pages.append(Page())
        return self.pages[-1]

    def bookmark(self, title: str, page: int, y: float = PAGE_HEIGHT, level: int = 1) -> None:
        """An outline entry pointing at `page` (0-based); `level` nests it under the last shallower entry."""
        mark = _Bookmark(title, page, y, level)
        while self._open and self._open[-1].level >= level:
            self._open.pop()
        (self._open[-1].children if self._open else self._roots).append(mark)
        self._open.append(mark)

    def to_bytes(self) -> bytes:
        objects: list[bytes] = []

        def reserve() -> int:
            objects.append(b"")
            return len(objects)

        catalog, pages_id, font, bold = reserve(), reserve(), reserve(), reserve()
        objects[font - 1] = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>"
        objects[bold - 1] = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica-Bold /Encoding /WinAnsiEncoding >>"
        page_ids: list[int] = []
        for page in self.pages:
            content = b"\n".join(page.ops)
            if self.compress:
                content = zlib.compress(content)
                stream = b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(content)
            else:
                stream = b"<< /Length %d >>\nstream\n" % len(content)
            content_id = reserve()
            objects[content_id - 1] = stream + content + b"\nendstream"
            page_id = reserve()
            objects[page_id - 1] = (
                b"<< /Type /Page /Parent %d 0 R /MediaBox [0 0 %d %d] /Contents %d 0 R "
                b"/Resources << /Font << /F1 %d 0 R /F2 %d 0 R >> >> >>"
                % (pages_id, PAGE_WIDTH, PAGE_HEIGHT, content_id, font, bold)
            )
            page_ids.append(page_id)
        kids = b" ".join(b"%d 0 R" % i for i in page_ids)
        objects[pages_id - 1] = b"<< /Type /Pages /Kids [%s] /Count %d >>" % (kids, len(page_ids))

        outline = b""
        if self._roots:
            outline_id = reserve()
            first, last, count = self._write_marks(self._roots, outline_id, objects, reserve, page_ids)
            objects[outline_id - 1] = b"<< /Type /Outlines /First %d 0 R /Last %d 0 R /Count %d >>" % (
                first,
                last,
                count,
            )
            outline = b" /Outlines %d 0 R /PageMode /UseOutlines" % outline_id
        objects[catalog - 1] = b"<< /Type /Catalog /Pages %d 0 R%s >>" % (pages_id, outline)
        info = b""
        if self.title:
            info_id = reserve()
            objects[info_id - 1] = b"<< /Title %s /Producer (Verbatim minipdf) >>" % _text_string(self.title)
            info = b" /Info %d 0 R" % info_id

        return assemble(objects, catalog, info)

    def _write_marks(self, marks, parent, objects, reserve, page_ids) -> tuple[int, int, int]:  # type: ignore[no-untyped-def]
        ids = [reserve() for _ in marks]
        total = len(marks)
        for i, (mark, own) in enumerate(zip(marks, ids, strict=True)):
            parts = [
                b"/Title %s /Parent %d 0 R" % (_text_string(mark.title), parent),
                b"/Dest [%d 0 R /XYZ 0 %.1f 0]" % (page_ids[mark.page], mark.y),
            ]
            if i > 0:
                parts.append(b"/Prev %d 0 R" % ids[i - 1])
            if i < len(marks) - 1:
                parts.append(b"/Next %d 0 R" % ids[i + 1])
            if mark.children:
                first, last, count = self._write_marks(mark.children, own, objects, reserve, page_ids)
                parts.append(b"/First %d 0 R /Last %d 0 R /Count %d" % (first, last, count))
                total += count
            objects[own - 1] = b"<< " + b" ".join(parts) + b" >>"
        return ids[0], ids[-1], total


class Flow:
    """Lays out headings, paragraphs, bullets and table rows top to bottom, starting pages as needed."""

    def __init__(self, pdf: PdfWriter, size: float = 10.5) -> None:
        self.pdf = pdf
        self.size = size
        self.leading = size * 1.35
        self.width = PAGE_WIDTH - 2 * MARGIN
        self.page: Page | None = None
        self.y = 0.0
        self._in_list = False

    @property
    def page_index(self) -> int:
        return len(self.pdf.pages) - 1

    def new_page(self) -> None:
        self.page = self.pdf.new_page()
        self.y = PAGE_HEIGHT - MARGIN

    def _room(self, height: float) -> Page:
        if self.page is None or self.y - height < MARGIN:
            self.new_page()
        assert self.page is not None
        return self.page

    def need(self, lines: int) -> None:
        """Start a new page unless `lines` more lines fit on this one (a lead-in kept with its list)."""
        self._room(self.leading * lines)

    def heading(self, text: str, level: int = 1, bookmark: bool = True) -> None:
        size = {0: 20.0, 1: 15.0, 2: 12.5}.get(level, 11.5)
        page = self._room(size * 1.6 + self.leading * 3)  # never leave a heading alone at a page's foot
        self.y -= size * 0.9
        if bookmark and level > 0:
            self.pdf.bookmark(text, self.page_index, self.y + size, level)
        page.text(MARGIN, self.y, text, size, bold=True)
        self.y -= size * 0.9
        self._in_list = False

    def paragraph(self, text: str, indent: float = 0.0, first: str = "") -> None:
        self._in_list = False
        lines = wrap(text, self.width - indent, self.size)
        for number, line in enumerate(lines):
            page = self._room(self.leading)
            if number == 0 and first:
                page.text(MARGIN + indent - 12, self.y, first, self.size)
            page.text(MARGIN + indent, self.y, line, self.size)
            self.y -= self.leading
        self.y -= self.leading * 0.6

    def bullet(self, text: str) -> None:
        if self._in_list:
            self.y += self.leading * 0.45  # list items sit closer together than paragraphs
        self.paragraph(text, indent=14, first="•")
        self._in_list = True


def assemble(objects: list[bytes], root: int = 1, trailer: bytes = b"") -> bytes:
    """A PDF file from its numbered objects (1-based): header, objects, cross-reference table, trailer."""
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root %d 0 R%s >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, root, trailer, xref)
    return bytes(out)
