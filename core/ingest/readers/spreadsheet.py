"""Spreadsheets: an Excel workbook (.xlsx) or a CSV file, read as tables, one line per row.

Where many companies keep their price lists. Each row becomes `Header: value; Header: value`
(core/ingest/readers/tables.py), so a row is quoted whole and its figures keep their labels. The
first non-empty row of a sheet names its columns. Each sheet of a workbook is a section named
after the sheet, so a caption reads "Prices › Worktops · fragment 2 of 5"; a CSV file is one
section. Cells are read as values (the result of a formula, not the formula); whole numbers lose
their ".0". A workbook is a zip, inflated once with the same real-bytes cap as a Word file.
"""

from __future__ import annotations

import csv
import datetime
import io
from decimal import Decimal
from typing import Any

from core.common.errors import DocumentError
from core.common.values import Section
from core.ingest.documents import Parsed, decode_text
from core.ingest.readers.docx import _check_zip
from core.ingest.readers.tables import rows_as_lines

MAX_ROWS = 100_000  # per sheet: a price list is hundreds; beyond this it is data, not a document


def read_xlsx(data: bytes) -> Parsed:
    try:
        import openpyxl
    except ImportError as exc:  # pragma: no cover - a dependency, but say so if it's missing
        raise DocumentError("Excel support is not installed (pip install openpyxl)") from exc
    _check_zip(data, "an Excel (.xlsx) file")
    try:
        workbook = openpyxl.load_workbook(io.BytesIO(data), read_only=True, data_only=True)
    except Exception as exc:  # openpyxl raises a wide range on a file that isn't a workbook
        raise DocumentError(f"not a readable Excel (.xlsx) file ({type(exc).__name__}: {exc})") from exc
    try:
        sections = []
        for sheet in workbook.worksheets:
            rows = []
            for number, row in enumerate(sheet.iter_rows(values_only=True)):
                if number >= MAX_ROWS:
                    raise DocumentError(f"the sheet {sheet.title!r} has more than {MAX_ROWS:,} rows")
                rows.append([_cell(value) for value in row])
            lines = rows_as_lines(rows)
            if lines:
                sections.append(Section((" ".join(sheet.title.split()),), "\n".join(lines)))
        title = (workbook.properties.title or "").strip() or None
    finally:
        workbook.close()
    return Parsed(title, {}, tuple(sections))


def read_csv(data: bytes) -> Parsed:
    text = decode_text(data)
    sample = text[:8192]
    try:
        dialect: Any = csv.Sniffer().sniff(sample, delimiters=",;\t|")
    except csv.Error:
        dialect = csv.excel  # one column, or nothing to tell by: commas
    rows = []
    try:
        for number, row in enumerate(csv.reader(io.StringIO(text), dialect)):
            if number >= MAX_ROWS:
                raise DocumentError(f"the file has more than {MAX_ROWS:,} rows")
            rows.append(row)
    except csv.Error as exc:
        raise DocumentError(f"not a readable CSV file ({exc})") from exc
    lines = rows_as_lines(rows)
    return Parsed(None, {}, (Section((), "\n".join(lines)),) if lines else ())


def _cell(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        if value.is_integer():
            return str(int(value))
        return format(Decimal(repr(value)).normalize(), "f")
    if isinstance(value, datetime.datetime):
        return value.date().isoformat() if value.time() == datetime.time() else value.isoformat(sep=" ")
    if isinstance(value, datetime.date):
        return value.isoformat()
    return str(value)
