"""Word (.docx): the Title and Heading 1–6 styles make the section path; paragraphs, lists and tables by row.

python-docx reads the file's XML as it is: a heading is a paragraph whose style is (or is based
on) "Heading N"; list items are paragraphs with numbering, kept one per line; a table becomes
one `Header: value; …` line per row (`tables.rows_as_lines`), with its first row as the header.
"""

from __future__ import annotations

import io
import re
import zipfile
import zlib
from typing import Any

from core.common.errors import DocumentError
from core.ingest.documents import Outline, Parsed
from core.ingest.readers.tables import rows_as_lines

_HEADING_STYLE = re.compile(r"^heading\s*([1-9])$", re.IGNORECASE)
_CHUNK = 1 << 20
_MAX_UNCOMPRESSED = 200 << 20  # a .docx is a zip: refuse a zip bomb before python-docx inflates it


def read(data: bytes) -> Parsed:
    document = _open(data)
    from docx.table import Table  # installed: _open has imported python-docx

    # The Title-style paragraph is what readers see; the file's properties are often left over from a template.
    title: str | None = None
    outline = Outline()  # list items and table rows are lines within one block
    listing: list[str] = []
    numbers: dict[tuple[str, int], int] = {}

    def end_list() -> None:
        outline.add("\n".join(listing))
        listing.clear()

    for item in document.iter_inner_content():
        if isinstance(item, Table):
            end_list()
            outline.add("\n".join(rows_as_lines(_table_cells(item))))
            continue
        text = " ".join(item.text.split())
        level = _heading_level(item.style)
        if level is not None:
            if text:
                end_list()
                if level == 0:
                    outline.close()
                    title = title or text  # names the document; the caption shows it, so it is no section
                else:
                    outline.open(level, text)
        elif not text:
            end_list()
        elif (marker := _list_marker(item, numbers)) is None:
            end_list()
            numbers.clear()
            outline.add(text)
        else:
            listing.append(f"{marker} {text}")
    end_list()
    outline.close()
    return Parsed(title or (document.core_properties.title or "").strip() or None, {}, tuple(outline.sections))


def _open(data: bytes) -> Any:
    """The python-docx document; DocumentError for anything that is not a readable .docx."""
    try:
        import docx
        from docx.opc.exceptions import PackageNotFoundError
    except ImportError as exc:  # pragma: no cover - a dependency, but say so if it's missing
        raise DocumentError("Word support is not installed (pip install python-docx)") from exc
    _check_zip(data)
    try:
        return docx.Document(io.BytesIO(data))
    except (PackageNotFoundError, KeyError, ValueError, zipfile.BadZipFile) as exc:
        raise DocumentError(f"not a readable Word (.docx) file ({exc})") from exc
    except Exception as exc:  # lxml and python-docx raise a wide range on malformed XML
        raise DocumentError(f"not a readable Word (.docx) file ({type(exc).__name__}: {exc})") from exc


def _check_zip(data: bytes, kind: str = "a Word (.docx) file") -> None:
    """Inflate every member once, counting the bytes it really gives, whatever the zip's directory declares:
    a 3.6 MB file whose directory lies must fail here, not after the Word reader has taken gigabytes."""
    total = 0
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            for info in archive.infolist():
                with archive.open(info) as member:
                    while chunk := member.read(_CHUNK):
                        total += len(chunk)
                        if total > _MAX_UNCOMPRESSED:
                            raise DocumentError(f"unpacks to over the {_MAX_UNCOMPRESSED >> 20} MiB limit")
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, zlib.error, NotImplementedError) as exc:
        raise DocumentError(f"not {kind} that can be read (its zip archive is damaged: {exc})") from exc


def _heading_level(style: Any) -> int | None:
    """0 for the Title style, N for Heading N (or a style based on it), None for body text."""
    seen = 0
    while style is not None and seen < 10:
        name = (style.name or "").strip()
        if name.lower() == "title":
            return 0
        match = _HEADING_STYLE.match(name)
        if match:
            return min(int(match.group(1)), 6)
        style, seen = style.base_style, seen + 1
    return None


def _list_marker(paragraph: Any, numbers: dict[tuple[str, int], int]) -> str | None:
    """A "-" for a bulleted item, "N." for a numbered one (counted per list and level), None for body text."""
    props = paragraph._p.pPr
    numbered = props is not None and props.numPr is not None
    style = paragraph.style
    names: list[str] = []
    while style is not None and len(names) < 10:
        names.append((style.name or "").lower())
        numbered = numbered or (style.element.pPr is not None and style.element.pPr.numPr is not None)
        style = style.base_style
    if not numbered and not any(name.startswith("list") for name in names):
        return None
    if not any("number" in name for name in names):
        return "-"
    key = (names[0], 0)
    if props is not None and props.numPr is not None:
        num = props.numPr.numId
        ilvl = props.numPr.ilvl
        key = (str(num.val) if num is not None else names[0], ilvl.val if ilvl is not None else 0)
    numbers[key] = numbers.get(key, 0) + 1
    return f"{numbers[key]}."


def _table_cells(table: Any) -> list[list[str]]:
    """The table's cells row by row on its grid; a merged cell's repeats are blank below the header row."""
    rows: list[list[str]] = []
    for number, row in enumerate(table.rows):
        cells: list[str] = []
        previous = None
        for cell in row.cells:
            repeat = cell._tc is previous
            previous = cell._tc
            cells.append("" if repeat and number > 0 else " ".join(cell.text.split()))
        rows.append(cells)
    return rows
