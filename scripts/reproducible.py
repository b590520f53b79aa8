"""Office files whose bytes depend on their content alone, for the scripts that render documents
(make_demo_documents.py, judge_data/build.py): regenerating one changes nothing unless its text did."""

from __future__ import annotations

import io
import zipfile
from typing import IO, Protocol


class Saveable(Protocol):
    """A python-docx Document or an openpyxl Workbook: what writes itself to a file as a zip archive."""

    def save(self, file: IO[bytes]) -> None: ...


def office_bytes(document: Saveable) -> bytes:
    """The document's file, with every member's timestamp fixed (the libraries stamp the time of saving)."""
    saved = io.BytesIO()
    document.save(saved)
    out = io.BytesIO()
    with zipfile.ZipFile(saved) as source, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for info in source.infolist():
            fixed = zipfile.ZipInfo(info.filename, date_time=(2026, 9, 15, 0, 0, 0))
            fixed.compress_type = zipfile.ZIP_DEFLATED
            target.writestr(fixed, source.read(info.filename))
    return out.getvalue()
