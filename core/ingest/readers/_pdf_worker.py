"""The PDF parser's child process: PDF bytes on stdin, the text layer as JSON on stdout.

Run by `core.ingest.readers.pdf` as `python -I _pdf_worker.py MEMORY_BYTES CPU_SECONDS`, never
imported. It imports nothing from Verbatim (a PDF is untrusted input: this process holds no
index, no settings, no secrets), caps its own address space and CPU time before touching the
file, and reports a failure as `{"error": reason}`. A crash (PDFium is C) ends only this process.

Output: {"title": str | null, "outline": [[level, title, page_index | null]],
         "pages": [[[line_text, font_size, x, baseline_y], ...], ...]}
"""

from __future__ import annotations

import ctypes
import json
import sys
from typing import Any


def limit(memory: int, cpu: int) -> None:
    """Cap this process's address space and CPU time (also used by `_reader_worker.py`)."""
    try:
        import resource
    except ImportError:  # Windows: only the parent's wall-clock limit applies
        return
    if memory > 0:
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    if cpu > 0:
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))


def _lines(textpage: Any, raw: Any) -> list[list[object]]:
    """The page's text lines in reading order, each with its font size and baseline position."""
    text = textpage.get_text_range()
    lines: list[list[object]] = []
    x, y = ctypes.c_double(), ctypes.c_double()
    pos = 0
    for line in text.split("\r\n"):
        stripped = line.strip()
        if stripped:
            first = pos + len(line) - len(line.lstrip())
            middle = first + len(stripped) // 2
            # Two samples (the first glyph may be a bullet in the body font): the larger size wins.
            size = max(raw.FPDFText_GetFontSize(textpage, first), raw.FPDFText_GetFontSize(textpage, middle))
            raw.FPDFText_GetCharOrigin(textpage, first, ctypes.byref(x), ctypes.byref(y))
            lines.append([stripped, round(size, 2), round(x.value, 2), round(y.value, 2)])
        pos += len(line) + 2
    return lines


def extract(data: bytes) -> dict[str, object]:
    import pypdfium2 as pdfium
    import pypdfium2.raw as raw

    try:
        doc = pdfium.PdfDocument(data)
    except pdfium.PdfiumError as exc:
        message = str(exc)
        if "password" in message.lower():
            return {"error": "the PDF is password-protected"}
        return {"error": f"not a readable PDF ({message.rstrip('.')})"}
    title = (doc.get_metadata_value("Title") or "").strip() or None
    outline = []
    for mark in doc.get_toc(max_depth=6):
        dest = mark.get_dest()
        page = dest.get_index() if dest is not None else None
        outline.append([mark.level + 1, mark.get_title().strip(), page])
    pages = []
    for index in range(len(doc)):
        try:
            page = doc[index]
            textpage = page.get_textpage()
        except pdfium.PdfiumError as exc:
            return {"error": f"page {index + 1} can't be read ({str(exc).rstrip('.')})"}
        pages.append(_lines(textpage, raw))
        textpage.close()
        page.close()
    doc.close()
    return {"title": title, "outline": outline, "pages": pages}


def main() -> int:
    memory, cpu = int(sys.argv[1]), int(sys.argv[2])
    limit(memory, cpu)
    data = sys.stdin.buffer.read()
    try:
        result = extract(data)
    except MemoryError:
        result = {"error": f"reading it needs more than the {memory >> 20} MiB memory limit"}
    sys.stdout.write(json.dumps(result, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
