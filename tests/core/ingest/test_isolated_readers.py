"""HTML, Word and Excel files are parsed in a child process under limits: the same result as in this process,
and a document that needs more than the limits fails alone, with its reason."""

import io

import pytest

from core.common.errors import DocumentError
from core.ingest.readers import READERS, html, parse_document, sandbox, spreadsheet

PAGE = b"<html><head><title>Delivery</title></head><body><h1>Zones</h1><p>Zone A costs 40 EUR.</p></body></html>"


def test_a_page_read_in_the_child_is_what_the_reader_finds_in_this_process():
    assert READERS[".html"](PAGE) == html.read(PAGE)
    document = parse_document("delivery.html", PAGE)
    assert document.title == "Delivery" and "Zone A costs 40 EUR." in document.sections[0].text


def test_a_spreadsheet_read_in_the_child_keeps_its_sheets_and_rows():
    openpyxl = pytest.importorskip("openpyxl")
    book = openpyxl.Workbook()
    book.active.title = "Prices"
    book.active.append(["Item", "Price"])
    book.active.append(["Oak front", "185 EUR"])
    data = io.BytesIO()
    book.save(data)
    assert READERS[".xlsx"](data.getvalue()) == spreadsheet.read_xlsx(data.getvalue())


def test_a_page_that_needs_more_memory_than_the_limit_fails_alone_with_its_reason():
    deep = b"<html><body>" + b"<div>" * 100_000 + b"x" + b"</div>" * 100_000 + b"</body></html>"
    with pytest.raises(DocumentError, match="HTML page"):
        sandbox.run("html", "read", "HTML page", deep, memory_limit=64 << 20)


def test_a_reader_that_runs_out_of_time_is_stopped():
    deep = b"<html><body>" + b"<p>Step." * 200_000 + b"</body></html>"
    with pytest.raises(DocumentError, match=r"took longer than 0\.5 s"):
        sandbox.run("html", "read", "HTML page", deep, time_limit=0.5)


def test_a_reader_that_refuses_a_document_says_why_through_the_child():
    with pytest.raises(DocumentError, match="Word"):
        READERS[".docx"](b"this is no zip archive")
