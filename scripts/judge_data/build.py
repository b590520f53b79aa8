"""Lay out a written business as the product reads it: Markdown into `knowledge/`, the rest rendered.

Run: python scripts/judge_data/build.py BUSINESS_DIR [...]

A writer leaves `documents/*.md`. For each document that `business.json`'s `formats` names, the Markdown moves
to `sources/` and `knowledge/` gets it rendered as Word (python-docx, heading and list styles, real tables),
PDF (scripts/minipdf.py; a table row is set as a bullet holding the `Header: value; …` line the readers make
of any table),
HTML (headings, lists, tables) or Excel (openpyxl, one sheet per `##` section), with a `.meta.yml` sidecar
carrying the front matter. The other documents move to `knowledge/` as they are. The output is
byte-for-byte reproducible. Run validate.py after it: every label must still find its block.
"""

from __future__ import annotations

import html
import json
import re
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from minipdf import Flow, PdfWriter, wrap
from reproducible import office_bytes

from core.ingest.readers.markdown import split_front_matter
from core.ingest.readers.tables import rows_as_lines

_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*$")
_BULLET = re.compile(r"^\s*[-*+]\s+(.*)$")
_NUMBERED = re.compile(r"^\s*\d{1,2}[.)]\s+(.*)$")
_DELIMITER = re.compile(r"^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$")


@dataclass(frozen=True)
class Piece:
    kind: str  # "heading" | "paragraph" | "bullet" | "numbered" | "table"
    text: str = ""
    level: int = 0
    rows: tuple[tuple[str, ...], ...] = ()


def _cells(line: str) -> tuple[str, ...]:
    inner = line.strip().strip("|")
    return tuple(cell.strip() for cell in inner.split("|"))


def pieces(body: str) -> list[Piece]:
    """The Markdown the brief allows (headings, paragraphs, lists, pipe tables) as a list of pieces."""
    out: list[Piece] = []
    lines = body.split("\n")
    paragraph: list[str] = []

    def flush() -> None:
        if paragraph:
            out.append(Piece("paragraph", " ".join(s.strip() for s in paragraph)))
            paragraph.clear()

    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            flush()
        elif match := _HEADING.match(line):
            flush()
            out.append(Piece("heading", match[2], level=len(match[1])))
        elif "|" in line and i + 1 < len(lines) and _DELIMITER.match(lines[i + 1]):
            flush()
            rows = [_cells(line)]
            i += 2
            while i < len(lines) and "|" in lines[i] and lines[i].strip():
                rows.append(_cells(lines[i]))
                i += 1
            out.append(Piece("table", rows=tuple(rows)))
            continue
        elif match := _BULLET.match(line):
            flush()
            out.append(Piece("bullet", match[1].strip()))
        elif match := _NUMBERED.match(line):
            flush()
            out.append(Piece("numbered", match[1].strip()))
        else:
            paragraph.append(line)
        i += 1
    flush()
    return out


def docx_bytes(title: str, parts: list[Piece]) -> bytes:
    import docx

    document = docx.Document()
    document.core_properties.title = title
    for piece in parts:
        if piece.kind == "heading":
            document.add_heading(piece.text, piece.level - 1)
        elif piece.kind == "bullet":
            document.add_paragraph(piece.text, style="List Bullet")
        elif piece.kind == "numbered":
            document.add_paragraph(piece.text, style="List Number")
        elif piece.kind == "table":
            table = document.add_table(rows=len(piece.rows), cols=len(piece.rows[0]))
            table.style = "Table Grid"
            for r, row in enumerate(piece.rows):
                for c, value in enumerate(row[: len(piece.rows[0])]):
                    table.cell(r, c).text = value
        else:
            document.add_paragraph(piece.text)
    return office_bytes(document)


def pdf_bytes(title: str, parts: list[Piece]) -> bytes:
    pdf = PdfWriter(title=title)
    flow = Flow(pdf)
    flow.new_page()
    number = 0
    for piece in parts:
        if piece.kind == "heading":
            flow.heading(piece.text, min(piece.level - 1, 2), bookmark=piece.level > 1)
            number = 0
        elif piece.kind == "bullet":
            flow.bullet(piece.text)
        elif piece.kind == "numbered":
            number += 1
            flow.paragraph(piece.text, indent=14, first=f"{number}.")
        elif piece.kind == "table":
            # A PDF reader joins a paragraph's lines: rows set as bullets stay one row each.
            for line in rows_as_lines(piece.rows):
                flow.bullet(line)
        else:
            if piece.text.endswith(":"):
                # A lead-in and the first two lines of its list stay on one page, as a typesetter keeps them.
                flow.need(len(wrap(piece.text, flow.width, flow.size)) + 2)
            flow.paragraph(piece.text)
    return pdf.to_bytes()


def html_bytes(title: str, parts: list[Piece]) -> bytes:
    out = [f"<!doctype html>\n<html><head><meta charset='utf-8'><title>{html.escape(title)}</title></head><body>"]
    open_list = ""
    for piece in parts:
        wanted = {"bullet": "ul", "numbered": "ol"}.get(piece.kind, "")
        if open_list and wanted != open_list:
            out.append(f"</{open_list}>")
            open_list = ""
        if wanted and not open_list:
            out.append(f"<{wanted}>")
            open_list = wanted
        if piece.kind == "heading":
            out.append(f"<h{piece.level}>{html.escape(piece.text)}</h{piece.level}>")
        elif wanted:
            out.append(f"<li>{html.escape(piece.text)}</li>")
        elif piece.kind == "table":
            head, *body = piece.rows
            out.append("<table><tr>" + "".join(f"<th>{html.escape(c)}</th>" for c in head) + "</tr>")
            out.extend("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>" for row in body)
            out.append("</table>")
        else:
            out.append(f"<p>{html.escape(piece.text)}</p>")
    if open_list:
        out.append(f"</{open_list}>")
    out.append("</body></html>\n")
    return "\n".join(out).encode("utf-8")


def xlsx_bytes(title: str, parts: list[Piece]) -> bytes:
    """One sheet per table, named by the heading above it; prose is refused, since a sheet has none."""
    import openpyxl

    book = openpyxl.Workbook()
    book.remove(book.active)
    heading = title
    for piece in parts:
        if piece.kind == "heading":
            heading = piece.text
        elif piece.kind == "table":
            name = re.sub(r"[\[\]:*?/\\]", " ", heading)[:31].strip() or f"Sheet{len(book.sheetnames) + 1}"
            sheet = book.create_sheet(name if name not in book.sheetnames else f"{name[:28]} {len(book.sheetnames)}")
            for row in piece.rows:
                sheet.append(list(row))
        else:
            raise ValueError(f"an xlsx document holds only headings and tables, not {piece.kind} {piece.text[:40]!r}")
    book.properties.title = title
    book.properties.created = book.properties.modified = __import__("datetime").datetime(2026, 9, 15)
    return office_bytes(book)


RENDER = {"docx": docx_bytes, "pdf": pdf_bytes, "html": html_bytes, "xlsx": xlsx_bytes}


def build(folder: Path) -> list[str]:
    """Move the business's documents into knowledge/ (rendering those `formats` names); what was written."""
    documents = folder / "documents"
    if not documents.is_dir():
        return []
    formats = json.loads((folder / "business.json").read_text(encoding="utf-8")).get("formats", {})
    knowledge, sources = folder / "knowledge", folder / "sources"
    # Everything is rendered before anything moves: a document that can't be rendered leaves the folder as it was.
    rendered: dict[Path, tuple[str, bytes, str]] = {}
    for md in sorted(documents.glob("*.md")):
        if fmt := formats.get(md.name):
            meta, body = split_front_matter(md.read_text(encoding="utf-8"))
            data = RENDER[fmt](meta.get("title") or md.stem, pieces(body))
            rendered[md] = (fmt, data, "".join(f"{key}: {value}\n" for key, value in meta.items()))
    knowledge.mkdir(exist_ok=True)
    written = []
    for md in sorted(documents.glob("*.md")):
        if md not in rendered:
            shutil.move(md, knowledge / md.name)
            written.append(md.name)
            continue
        fmt, data, sidecar = rendered[md]
        target = knowledge / f"{md.stem}.{fmt}"
        target.write_bytes(data)
        (knowledge / f"{target.name}.meta.yml").write_text(sidecar, encoding="utf-8")
        sources.mkdir(exist_ok=True)
        shutil.move(md, sources / md.name)
        written.append(target.name)
    documents.rmdir()
    return written


def main(argv: list[str]) -> int:
    for name in argv:
        print(name, ", ".join(build(Path(name))))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
