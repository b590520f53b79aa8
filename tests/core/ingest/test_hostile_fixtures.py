"""Hostile files kept as fixtures (written by `benchmarks/hostile_documents.py --write-fixtures`): each one
is read or fails with its reason, never a traceback, and a folder full of them indexes what it can.

The benchmark runs the same shapes at full size and prints each one's time and peak memory.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from core.common.errors import DocumentError
from core.ingest import sync
from core.ingest.fragments import MAX_CHARS, fragment_document
from core.ingest.readers import parse_document
from core.store import INDEX_FILE
from core.store.sqlite import SQLiteIndex

FIXTURES = Path(__file__).parent / "fixtures" / "hostile"
# How each must end: read (into fragments within the size limit), or failed with a reason that says why.
EXPECTED = {
    "bomb-honest.docx": "unpacks to over the 1 MiB limit",
    "bomb-honest.xlsx": "unpacks to over the 1 MiB limit",
    "bomb-lying.docx": "zip archive is damaged",
    "bomb-lying.xlsx": "zip archive is damaged",
    "bomb-stream.pdf": "no text layer",
    "deep-divs.html": "read",
    "deep-list.md": "read",
    "deep-quote.md": "read",
    "junk.csv": "not valid UTF-8",
    "junk.docx": "zip archive is damaged",
    "junk.html": "text encoding can't be read",
    "junk.md": "not valid UTF-8",
    "junk.pdf": "not a readable PDF",
    "junk.txt": "not valid UTF-8",
    "junk.xlsx": "zip archive is damaged",
    "one-cell.csv": "read",
    "one-line-no-spaces.md": "read",
    "one-line-words.md": "read",
    "one-line.txt": "read",
    "unclosed-paragraphs.html": "read",
}


@pytest.fixture(autouse=True)
def _small_zip_cap(monkeypatch, in_process_readers):
    """The fixtures' bombs inflate to 10 MiB, not past the 200 MiB cap: the cap is lowered to meet them, so the
    readers run in this process here (their child process: tests/core/ingest/test_isolated_readers.py)."""
    from core.ingest.readers import docx

    monkeypatch.setattr(docx, "_MAX_UNCOMPRESSED", 1 << 20)


def test_every_fixture_has_an_expected_outcome():
    assert sorted(p.name for p in FIXTURES.iterdir()) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_a_hostile_file_is_read_or_fails_with_its_reason(name):
    data = (FIXTURES / name).read_bytes()
    if EXPECTED[name] != "read":
        with pytest.raises(DocumentError, match=EXPECTED[name]):
            parse_document(name, data)
        return
    fragments = fragment_document(parse_document(name, data))
    assert fragments and all(0 < len(f.text) <= MAX_CHARS for f in fragments)


def test_a_folder_of_hostile_files_indexes_the_good_document_and_names_every_failure(tmp_path, write_kb, fake_embedder):
    kb = write_kb({name: (FIXTURES / name).read_bytes() for name in EXPECTED})
    (kb / "prices.md").write_text("# Prices\n\nOak fronts cost 185 EUR per m².\n", encoding="utf-8")
    index = SQLiteIndex(tmp_path / "data" / INDEX_FILE)
    report = sync(kb, index, fake_embedder)
    failing = {name for name, outcome in EXPECTED.items() if outcome != "read"}
    assert set(report.failed) == failing and all(report.failed.values())
    assert report.added == len(EXPECTED) - len(failing) + 1
    assert any("Oak fronts cost 185 EUR" in f.text for f in index.load().fragments)
    index.close()
