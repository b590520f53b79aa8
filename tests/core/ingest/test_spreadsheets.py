"""Spreadsheets (core/ingest/readers/spreadsheet.py): .xlsx and .csv price lists read as tables, one quotable
line per row, each sheet a section the caption names."""

from __future__ import annotations

import datetime
import io

import openpyxl
import pytest

from core.common.errors import DocumentError
from core.ingest.fragments import fragment_document
from core.ingest.readers import parse_document


def workbook(**sheets: list[list[object]]) -> bytes:
    book = openpyxl.Workbook()
    book.remove(book.active)
    for name, rows in sheets.items():
        sheet = book.create_sheet(name.replace("_", " "))
        for row in rows:
            sheet.append(row)
    book.properties.title = "Spring price list"
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def test_each_sheet_is_a_section_and_each_row_a_labelled_line():
    data = workbook(
        Worktops=[["Material", "Price per metre (EUR)"], ["Solid ash", 290.0], [None, None], ["Cherry", 455.5]],
        Hardware_extras=[["Hinge", "Price (EUR)"], ["Soft-close", 12.9]],
        Empty=[],
    )
    doc = parse_document("prices.xlsx", data)
    assert doc.title == "Spring price list"
    assert [(s.path, s.text) for s in doc.sections] == [
        (
            ("Worktops",),
            "Material: Solid ash; Price per metre (EUR): 290\nMaterial: Cherry; Price per metre (EUR): 455.5",
        ),
        (("Hardware extras",), "Hinge: Soft-close; Price (EUR): 12.9"),
    ]
    captions = [f.caption for f in fragment_document(doc)]
    assert captions[0].startswith("Spring price list › Worktops")


def test_cells_read_as_values_people_would_write():
    data = workbook(Sheet=[["Item", "Valid from", "In stock"], ["Oak board", datetime.datetime(2026, 3, 1), True]])
    (section,) = parse_document("stock.xlsx", data).sections
    assert section.text == "Item: Oak board; Valid from: 2026-03-01; In stock: yes"


@pytest.mark.parametrize(
    "text",
    ["item;price\nAsh board;42 EUR\n", "item,price\nAsh board,42 EUR\n", "item\tprice\nAsh board\t42 EUR\n"],
)
def test_a_csv_file_is_one_table_whatever_its_delimiter(text):
    doc = parse_document("stock.csv", text.encode())
    assert [s.text for s in doc.sections] == ["item: Ash board; price: 42 EUR"]
    assert doc.title == "Stock"  # from the file name, as for any document without a title


def test_a_file_that_is_not_a_workbook_fails_with_its_reason():
    with pytest.raises(DocumentError, match=r"xlsx|zip"):
        parse_document("prices.xlsx", b"this is not a zip file")


def test_a_damaged_workbook_is_named_a_workbook_not_a_word_file():
    with pytest.raises(DocumentError, match=r"^not an Excel \(\.xlsx\) file that can be read"):
        parse_document("prices.xlsx", b"PK\x03\x04 not really a zip")
