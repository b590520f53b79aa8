"""Readers for company documents as they are: Word, PDF, HTML and Markdown tables.

Every file is made in the test: DOCX with python-docx, PDF with the repo's own minimal writer
(scripts/minipdf.py) or by hand for the hostile ones.
"""

from __future__ import annotations

import io
import time
import zlib

import docx
import pytest

from core.answering.quotes import locate, verify
from core.common.answers import Claim
from core.common.errors import DocumentError
from core.common.text import split_sentences
from core.common.values import Fragment, Hit
from core.ingest import sync
from core.ingest.fragments import fragment_document
from core.ingest.readers import READERS, parse_document, pdf
from core.store import INDEX_FILE
from core.store.sqlite import SQLiteIndex
from scripts.minipdf import Flow, PdfWriter, assemble

# --- helpers ---------------------------------------------------------------------------------


def make_docx() -> bytes:
    d = docx.Document()
    d.add_heading("Fitting guide", 0)
    d.add_paragraph("Read this guide before you fit a kitchen we made.")
    d.add_heading("Tools", 1)
    d.add_paragraph("Cordless drill with a 6 mm masonry bit", style="List Bullet")
    d.add_paragraph("Spirit level, at least 1 m long", style="List Bullet")
    d.add_heading("Wall fixings", 2)
    d.add_paragraph("Choose the fixing by the wall. Never mix two kinds on one cabinet.")
    rows = [
        ["Wall", "Fixing", "Safe load per fixing"],
        ["Solid brick", "8 mm plug and 5 × 70 mm screw", "40 kg"],
        ["Plasterboard", "metal cavity anchor", "15 kg"],
    ]
    table = d.add_table(rows=3, cols=3)
    for r, row in enumerate(rows):
        for c, value in enumerate(row):
            table.cell(r, c).text = value
    d.add_heading("Levelling", 1)
    d.add_paragraph("Set the legs first.", style="List Number")
    d.add_paragraph("Then hang the wall cabinets.", style="List Number")
    out = io.BytesIO()
    d.save(out)
    return out.getvalue()


def make_pdf(outline: bool = True) -> bytes:
    """Three pages: a cover paragraph, then two sections on page 2 and a subsection on page 3."""
    writer = PdfWriter(title="Terms of sale")
    flow = Flow(writer)
    flow.new_page()
    flow.heading("Terms of sale", 0, bookmark=False)
    flow.paragraph("These terms apply to every order placed with the workshop.")
    flow.new_page()
    flow.heading("Payment", 1, bookmark=outline)
    flow.paragraph("Invoices are payable within 14 days. Late payment carries interest of 8% a year.")
    flow.heading("Retention of title", 1, bookmark=outline)
    flow.paragraph("Goods remain our property until the balance is paid in full.")
    flow.new_page()
    flow.heading("Storage", 2, bookmark=outline)
    flow.paragraph("Goods not collected within 30 days are stored at 15 EUR per week.")
    return writer.to_bytes()


def pdf_with_content(content: bytes, compressed: bool = True) -> bytes:
    """A one-page PDF around a raw content stream, written by hand (for hostile and textless pages)."""
    stream = zlib.compress(content) if compressed else content
    filt = b" /Filter /FlateDecode" if compressed else b""
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents 4 0 R"
        b" /Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d%s >>\nstream\n%s\nendstream" % (len(stream), filt, stream),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    return assemble(objects)


def deflate_repeated(unit: bytes, megabytes: int) -> bytes:
    """`unit` repeated to `megabytes` MiB, deflated a chunk at a time (a bomb costs little to make)."""
    packer = zlib.compressobj(1)
    chunk = unit * ((1 << 20) // len(unit))
    return b"".join([*(packer.compress(chunk) for _ in range(megabytes)), packer.flush()])


def bomb_pdf(content: bytes) -> bytes:
    """Like `pdf_with_content`, but `content` is already deflated."""
    plain = pdf_with_content(b"PLACEHOLDER", compressed=False)
    return plain.replace(
        b"/Length 11 >>\nstream\nPLACEHOLDER", b"/Length %d /Filter /FlateDecode >>\nstream\n" % len(content) + content
    )


# --- registry --------------------------------------------------------------------------------


def test_the_new_formats_are_registered():
    assert {".docx", ".pdf", ".html", ".htm"} <= set(READERS)


# --- DOCX ------------------------------------------------------------------------------------


def test_docx_headings_make_section_paths_and_the_title_names_the_document():
    d = parse_document("fitting-guide.docx", make_docx())
    assert d.title == "Fitting guide"
    assert [s.path for s in d.sections] == [(), ("Tools",), ("Tools", "Wall fixings"), ("Levelling",)]
    assert all(s.page is None for s in d.sections)
    assert d.sections[1].text == "- Cordless drill with a 6 mm masonry bit\n- Spirit level, at least 1 m long"
    assert d.sections[3].text == "1. Set the legs first.\n2. Then hang the wall cabinets."


def test_docx_table_rows_read_as_header_value_pairs_and_stay_whole():
    d = parse_document("fitting-guide.docx", make_docx())
    fixings = d.sections[2].text
    assert fixings.split("\n\n") == [
        "Choose the fixing by the wall. Never mix two kinds on one cabinet.",
        "Wall: Solid brick; Fixing: 8 mm plug and 5 × 70 mm screw; Safe load per fixing: 40 kg\n"
        "Wall: Plasterboard; Fixing: metal cavity anchor; Safe load per fixing: 15 kg",
    ]
    assert "Wall: Plasterboard; Fixing: metal cavity anchor; Safe load per fixing: 15 kg" in split_sentences(fixings)


def test_a_broken_docx_fails_with_a_reason():
    with pytest.raises(DocumentError, match="not a Word"):
        parse_document("broken.docx", b"PK\x03\x04 this is not really a zip")


# --- PDF -------------------------------------------------------------------------------------


def test_pdf_sections_come_from_the_outline_and_fragments_know_their_page():
    d = parse_document("terms.pdf", make_pdf())
    assert d.title == "Terms of sale"
    assert [(s.path, s.page) for s in d.sections] == [
        ((), 1),
        (("Payment",), 2),
        (("Retention of title",), 2),
        (("Retention of title", "Storage"), 3),
    ]
    # The heading lines are in the path, not in the text; the cover's title line is the document's title.
    assert d.sections[0].text == "These terms apply to every order placed with the workshop."
    fragments = fragment_document(d)
    assert fragments[1].text == "Invoices are payable within 14 days. Late payment carries interest of 8% a year."
    assert fragments[3].caption == "Terms of sale › Retention of title › Storage · p. 3 · fragment 4 of 4"


def test_pdf_without_outline_takes_headings_from_font_sizes():
    d = parse_document("terms.pdf", make_pdf(outline=False))
    assert [(s.path, s.page) for s in d.sections] == [
        ((), 1),
        (("Payment",), 2),
        (("Retention of title",), 2),
        (("Retention of title", "Storage"), 3),
    ]


def test_pdf_without_headings_is_one_section_per_page():
    writer = PdfWriter()
    for number in (1, 2):
        writer.new_page().text(64, 700, f"Plain page number {number} of the notice.")
    d = parse_document("notice.pdf", writer.to_bytes())
    assert [(s.path, s.page, s.text) for s in d.sections] == [
        ((), 1, "Plain page number 1 of the notice."),
        ((), 2, "Plain page number 2 of the notice."),
    ]
    assert d.title == "Notice"


def test_wrapped_lines_join_into_paragraphs_and_bullets_stay_lines():
    writer = PdfWriter()
    flow = Flow(writer)
    flow.paragraph("A long paragraph " + "that wraps across several lines of the page " * 4 + "ends here.")
    flow.bullet("First item")
    flow.bullet("Second item")
    (section,) = parse_document("list.pdf", writer.to_bytes()).sections
    first, items = section.text.split("\n\n")
    assert "\n" not in first and first.endswith("ends here.")
    assert items == "• First item\n• Second item"


def test_a_scanned_pdf_without_a_text_layer_fails_with_a_reason():
    drawing = b"0.5 g 64 64 400 600 re f 0 g 100 700 m 300 700 l S"
    with pytest.raises(DocumentError, match=r"no text layer \(scanned\?\)"):
        parse_document("scan.pdf", pdf_with_content(drawing))


def test_a_file_that_is_not_a_pdf_fails_with_a_reason():
    with pytest.raises(DocumentError, match="not a readable PDF"):
        parse_document("fake.pdf", b"<html>not a pdf at all</html>")


def test_a_pdf_that_exhausts_memory_fails_alone_within_the_limit():
    # 256 MiB of inflated content in a 300 KiB file, against a 128 MiB address-space limit.
    bomb = bomb_pdf(deflate_repeated(b" ", 256))
    started = time.monotonic()
    with pytest.raises(DocumentError, match="memory limit"):
        pdf.extract(bomb, time_limit=20, memory_limit=128 << 20)
    assert time.monotonic() - started < 20


def test_a_pdf_that_hangs_the_parser_is_stopped_at_the_time_limit():
    # Millions of text operators: the parser would grind for minutes.
    flood = bomb_pdf(deflate_repeated(b"BT /F1 10 Tf 50 50 Td (x) Tj ET\n", 64))
    started = time.monotonic()
    # On an idle machine the parser reaches the 1 GiB memory limit before the time limit: either stop will do.
    with pytest.raises(DocumentError, match=r"longer than 1\.5 s|memory limit"):
        pdf.extract(flood, time_limit=1.5)
    assert time.monotonic() - started < 10


def test_a_hostile_pdf_fails_only_its_own_document_during_sync(tmp_path, write_kb, fake_embedder, monkeypatch):
    # A memory limit, not a time limit: the well-formed PDF must pass however loaded the machine is.
    monkeypatch.setattr(pdf, "MEMORY_LIMIT", 128 << 20)
    kb = write_kb(
        {
            "hostile.pdf": bomb_pdf(deflate_repeated(b" ", 256)),
            "terms.pdf": make_pdf(),
            "terms.pdf.meta.yml": "audience: public\n",
            "notes.md": "# Notes\n\nOak fronts cost 240 EUR per m².\n",
        }
    )
    index = SQLiteIndex(tmp_path / "data" / INDEX_FILE)
    report = sync(kb, index, fake_embedder)
    assert report.added == 2
    assert list(report.failed) == ["hostile.pdf"] and "128 MiB memory limit" in report.failed["hostile.pdf"]
    pages = {(f.document, f.page) for f in index.load().fragments}
    assert ("terms.pdf", 3) in pages and ("notes.md", None) in pages


def test_quotes_in_paged_fragments_ignore_split_words_but_not_letters():
    writer = PdfWriter()
    writer.new_page().raw(
        b"BT /F1 11 Tf 1 0 0 1 64 700 Tm [(Free deliv) -900 (ery in zone A for orders over 6,000 EUR.)] TJ ET"
    )
    (fragment,) = fragment_document(parse_document("terms.pdf", writer.to_bytes()))
    assert "deliv ery" in fragment.text  # the text layer split the word
    hits = [Hit(1, fragment, 0.9)]
    claims = (
        Claim("Delivery is free.", 1, "Free delivery in zone A for orders over 6,000 EUR."),
        Claim("Changed figure.", 1, "Free delivery in zone A for orders over 7,000 EUR."),
        Claim("Changed letter.", 1, "Free delivers in zone A"),
    )
    statements, discarded = verify(claims, hits)
    assert discarded == 2
    assert statements[0].quotes[0].text == fragment.text  # shown exactly as the document has it
    assert statements[0].quotes[0].page == 1
    # Documents without pages keep the stricter rule: spaces count.
    assert locate("Free delivery in zone A", "Free deliv ery in zone A") is None
    unpaged = Fragment("a.md", "A", "public", (), 1, 1, "Free deliv ery in zone A")
    assert verify((Claim("x", 1, "Free delivery in zone A"),), [Hit(1, unpaged, 0.9)]) == ([], 1)


# --- HTML ------------------------------------------------------------------------------------

PAGE = """<!doctype html>
<html><head><title>Staff handbook</title><style>p { color: red }</style>
<script>var token = "never index this";</script></head>
<body>
<header><a href="/">Intranet home</a></header>
<nav><ul><li>Holidays</li><li>Payroll</li></ul></nav>
<h1>Staff handbook</h1>
<p>Welcome to the
   handbook.<br>Read it once a year.</p>
<h2>Team sizes</h2>
<table>
  <tr><th>Level</th><th>Team</th></tr>
  <tr><td>M1</td><td>manages 2–4 reps</td></tr>
  <tr><td>M2</td><td>team of 5+ reps</td></tr>
</table>
<h3>Reviews</h3>
<ul><li>Every <b>six</b> months</li><li>With the owner</li></ul>
<footer>© 2026 Hollowmere Joinery</footer>
</body></html>
"""


def test_html_headings_make_sections_and_page_furniture_is_dropped():
    d = parse_document("handbook.html", PAGE.encode())
    assert d.title == "Staff handbook"
    assert [(s.path, s.text) for s in d.sections] == [
        ((), "Welcome to the handbook.\nRead it once a year."),
        (("Team sizes",), "Level: M1; Team: manages 2–4 reps\nLevel: M2; Team: team of 5+ reps"),
        (("Team sizes", "Reviews"), "- Every six months\n- With the owner"),
    ]
    everything = " ".join(s.text for s in d.sections)
    for dropped in ("never index", "Intranet home", "Payroll", "© 2026", "color"):
        assert dropped not in everything


def test_htm_is_read_too_and_a_page_without_title_is_named_by_its_h1():
    d = parse_document("page.htm", b"<h1>Opening hours</h1><p>Monday to Friday, 8:00 to 17:00.</p>")
    assert d.title == "Opening hours" and d.sections[0].text == "Monday to Friday, 8:00 to 17:00."


# --- Markdown tables -------------------------------------------------------------------------

TEAMS = """# Sales handbook

## Team sizes

| Level | Team | Notes |
|:------|-----:|-------|
| M1 | manages 2–4 reps | First line. Reports to an M2. |
| M2 | team of 5+ reps | Owns a region. Hires the M1s. |
"""


def test_a_markdown_table_row_is_one_unit():
    d = parse_document("sales.md", TEAMS.encode())
    text = d.sections[0].text
    assert text.split("\n") == [
        "Level: M1; Team: manages 2–4 reps; Notes: First line. Reports to an M2.",
        "Level: M2; Team: team of 5+ reps; Notes: Owns a region. Hires the M1s.",
    ]
    # A row is one sentence to the answerers: M1's figure can't be quoted beside M2's label.
    assert split_sentences(text) == text.split("\n")


def test_a_long_table_is_cut_between_rows_never_inside_one():
    rows = "\n".join(f"| Cabinet {n} | {'wide ' * 12}| {n * 10} kg |" for n in range(40))
    d = parse_document("weights.md", f"# Weights\n\n| Item | Size | Weight |\n|---|---|---|\n{rows}\n".encode())
    fragments = fragment_document(d)
    assert len(fragments) > 1
    lines = [line for f in fragments for line in f.text.split("\n")]
    assert lines == d.sections[0].text.split("\n")
    assert all(line.startswith("Item: Cabinet ") and line.endswith(" kg") for line in lines)


# --- page expectations in the gold question format -------------------------------------------


def test_a_gold_question_can_require_the_page_a_quote_comes_from(tmp_path):
    from core.common.answers import Answer, Quote, Statement
    from core.measuring.evaluation import QuestionFileError, judge, load_questions

    gold_file = tmp_path / "gold.jsonl"
    gold_file.write_text(
        '{"id": "late", "question": "late payment interest?", "expect": "answer", '
        '"documents": ["terms.pdf"], "quote_contains": ["8% a year"], "pages": [2]}\n',
        encoding="utf-8",
    )
    (gold,) = load_questions(gold_file)
    assert gold.pages == (2,)
    text = "Late payment carries interest of 8% a year."

    def answer_from_page(page: int) -> Answer:
        fragment = Fragment("terms.pdf", "Terms", "public", ("Payment",), 1, 1, text, page)
        quote = Quote(text, 7, "terms.pdf", "Terms", ("Payment",), 1, 1, page)
        return Answer(
            "a", gold.question, "answered", None, (Statement(text, (quote,)),), 0, (Hit(7, fragment, 0.8),), {}, "x"
        )

    assert judge(gold, answer_from_page(2)).correct
    assert not judge(gold, answer_from_page(3)).correct
    gold_file.write_text('{"question": "q", "expect": "answer", "documents": ["a.pdf"], "pages": ["2"]}\n')
    with pytest.raises(QuestionFileError, match="page numbers"):
        load_questions(gold_file)


def test_a_leftover_pdf_title_gives_way_to_the_file_name():
    writer = PdfWriter(title="Microsoft Word - terms_v3_final.docx")
    writer.new_page().text(64, 700, "These terms apply to every order.")
    assert parse_document("terms-of-sale.pdf", writer.to_bytes()).title == "Terms of sale"


def test_a_bookmark_not_shown_on_its_page_starts_its_section_at_the_page_top():
    writer = PdfWriter(title="Terms")
    flow = Flow(writer)
    flow.paragraph("Cover text of the terms.")
    flow.new_page()
    flow.heading("3. Payment", 1, bookmark=False)
    flow.paragraph("Invoices are payable within 14 days.")
    writer.bookmark("Payment terms", page=1)
    d = parse_document("terms.pdf", writer.to_bytes())
    assert [(s.path, s.page, s.text) for s in d.sections] == [
        ((), 1, "Cover text of the terms."),
        (("Payment terms",), 2, "3. Payment\n\nInvoices are payable within 14 days."),
    ]


def test_an_ordinary_page_of_many_unclosed_paragraphs_is_read_without_recursion():
    # html.parser nests every <p> left open: 1,200 of them were 1,200 levels of recursion and a RecursionError.
    page = "<h1>Manual</h1>" + "<p>Step." * 1200
    d = parse_document("manual.html", page.encode())
    assert d.title == "Manual"
    assert " ".join(s.text for s in d.sections).count("Step.") == 1200


def test_hidden_html_text_is_dropped_as_documented():
    page = (
        "<title>T</title><p>Shown text here.</p><p style='display: none'>Secret A</p>"
        "<div style='visibility:hidden'>Secret B</div><span aria-hidden='true'>Secret C</span>"
    )
    text = " ".join(s.text for s in parse_document("p.html", page.encode()).sections)
    assert "Shown text here." in text
    assert not any(secret in text for secret in ("Secret A", "Secret B", "Secret C"))


def _zip_with(member: bytes, declared: int | None = None) -> bytes:
    import struct
    import zipfile as zf

    buf = io.BytesIO()
    with zf.ZipFile(buf, "w", zf.ZIP_DEFLATED) as archive:
        archive.writestr("[Content_Types].xml", "<Types/>")
        archive.writestr("word/document.xml", member)
    data = bytearray(buf.getvalue())
    if declared is not None:  # the directory and the local header lie about the size
        central = data.rfind(b"PK\x01\x02")
        data[central + 24 : central + 28] = struct.pack("<I", declared)
        local = data.find(b"PK\x03\x04", data.find(b"word/document.xml") - 40)
        data[local + 22 : local + 26] = struct.pack("<I", declared)
    return bytes(data)


def test_a_docx_that_inflates_past_the_limit_fails_by_the_bytes_it_really_gives(monkeypatch, in_process_readers):
    from core.ingest.readers import docx as docx_reader

    monkeypatch.setattr(docx_reader, "_MAX_UNCOMPRESSED", 1 << 20)
    with pytest.raises(DocumentError, match="over the 1 MiB limit"):
        parse_document("bomb.docx", _zip_with(b"A" * (5 << 20)))
    # A directory that declares 100 bytes for 5 MiB is refused too, never inflated in full.
    with pytest.raises(DocumentError, match=r"damaged|limit"):
        parse_document("liar.docx", _zip_with(b"A" * (5 << 20), declared=100))
