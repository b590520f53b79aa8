"""Reader tests that change a reader's own limits read in this process: a child process would not see them."""

import pytest


@pytest.fixture
def in_process_readers(monkeypatch):
    """READERS with the HTML, Word and Excel readers called in this process, not in their child process."""
    from core.ingest.readers import READERS, docx, html, spreadsheet

    for suffix, read in {
        ".docx": docx.read,
        ".html": html.read,
        ".htm": html.read,
        ".xlsx": spreadsheet.read_xlsx,
    }.items():
        monkeypatch.setitem(READERS, suffix, read)
