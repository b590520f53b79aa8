"""Hostile documents through the readers: per document, the outcome, the time and the peak memory.

    .venv/bin/python benchmarks/hostile_documents.py [--limit 60] [--only NAME] [--hidden] [--second-run]

Writes each hostile file into a temp folder and reads it in a process of its own, as `verbatim index`
does before it embeds: `parse_document` (the reader for its suffix, under the reader's own limits)
and `fragment_document`. A document may fail, with its reason; what must never happen is a
traceback that is not a DocumentError, a time without bound or memory without bound. Each line
prints the outcome, the seconds and the process's peak RSS (ru_maxrss from wait4, which counts the
PDF reader's own worker process too). A process still running after --limit seconds is killed and
reported as such.

The files: deep nesting (HTML elements, unclosed <p>, Markdown lists and quotes), zip bombs whose
directory tells the truth and whose directory lies (.docx, .xlsx), a PDF whose content stream
inflates to 256 MiB, single lines of 9 MB (.md, .txt, .csv; under the 10 MB document limit), and
random bytes renamed to every suffix there is a reader for.

And pages that hide a sentence, one for each way a browser hides text (font-size:0, opacity:0, a large
negative offset, white on white, display:none from a <style> class, aria-hidden="TRUE", height:0 with
overflow:hidden, clip and clip-path, visibility:hidden, the hidden attribute): their line says whether the
hidden sentence leaked into the indexed fragments (their text or their section path).

And the nested page's second run (`--second-run`): `verbatim index` twice, each a process of its own, on a
folder that holds one 9.6 MB page of nested <div> whose language can't be told. The first run reads the page;
the second finds it unchanged and must read nothing, so it takes the time of opening the index, not of parsing
the page again (it once took 43.5 s and 1 GB, on every run, to tell the folder's language anew).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import random
import signal
import struct
import subprocess
import sys
import tempfile
import time
import zipfile
import zlib
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MIB = 1 << 20
SECRET = "Staff get a 90% discount on every order"  # what each hidden-*.html page hides
# {name: (the element that hides SECRET, the page's <style> rules)}; each page also shows a paragraph.
HIDDEN_WAYS = {
    "font-size-0": ("<p style='font-size:0'>{}</p>", ""),
    "font-shorthand-0": ("<h2 style='font:0/0 a'>{}</h2>", ""),
    "opacity-0": ("<div style='OPACITY:0'>{}</div>", ""),
    "left-9999px": ("<div style='position:absolute;left:-9999px'>{}</div>", ""),
    "top-9999px": ("<div style='position:absolute;top:-9999px'>{}</div>", ""),
    "text-indent-9999px": ("<p style='text-indent:-9999px'>{}</p>", ""),
    "white-on-white": ("<p style='color:#fff;background-color:#ffffff'>{}</p>", ""),
    "white-on-white-ancestor": ("<div style='background:white'><p style='color:rgb(255,255,255)'>{}</p></div>", ""),
    "white-on-white-page": ("<p class='w'>{}</p>", ".w{color:WHITE}"),
    "display-none-class": ("<div class='Promo'>{}</div>", ".promo { display: none }"),
    "visibility-hidden-class": ("<div class='v'>{}</div>", ".v{visibility:hidden}"),
    "aria-hidden-upper": ("<span aria-hidden='TRUE'>{}</span>", ""),
    "height-0-overflow": ("<div style='height:0;overflow:hidden'>{}</div>", ""),
    "max-height-0-overflow": ("<div class='fold'>{}</div>", ".fold{max-height:0;overflow:hidden}"),
    "clip-path-inset": ("<div style='clip-path:inset(100%)'>{}</div>", ""),
    "clip-path-circle": ("<div style='clip-path:circle(0)'>{}</div>", ""),
    "clip-rect": ("<span class='sr-only'>{}</span>", ".sr-only{position:absolute;clip:rect(0,0,0,0)}"),
    "hidden-attribute": ("<p HIDDEN>{}</p>", ""),
}


def _zip(members: dict[str, bytes | Callable[[zipfile.ZipFile, str], None]], lie: str = "") -> bytes:
    """A zip of `members` (bytes, or a writer that streams one in); `lie`: the member whose sizes the local
    header and the central directory understate (100 bytes), as a bomb that passes a declared-size check."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        for name, content in members.items():
            if callable(content):
                content(archive, name)
            else:
                archive.writestr(name, content)
    data = bytearray(buffer.getvalue())
    if lie:
        name = lie.encode()
        central = data.find(b"PK\x01\x02")
        while data[central + 46 : central + 46 + len(name)] != name:
            central = data.find(b"PK\x01\x02", central + 4)
        data[central + 24 : central + 28] = struct.pack("<I", 100)
        local = struct.unpack("<I", data[central + 42 : central + 46])[0]
        data[local + 22 : local + 26] = struct.pack("<I", 100)
    return bytes(data)


def _streamed(unit: bytes, mebibytes: int) -> Callable[[zipfile.ZipFile, str], None]:
    def write(archive: zipfile.ZipFile, name: str) -> None:
        chunk = unit * (MIB // len(unit))
        with archive.open(name, "w", force_zip64=True) as member:
            for _ in range(mebibytes):
                member.write(chunk)

    return write


def _docx(document_xml: bytes | Callable[[zipfile.ZipFile, str], None], lie: str = "") -> bytes:
    types = (
        b'<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
        b'<Default Extension="xml" ContentType="application/xml"/></Types>'
    )
    return _zip({"[Content_Types].xml": types, "word/document.xml": document_xml}, lie)


def _xlsx(sheet_xml: bytes | Callable[[zipfile.ZipFile, str], None], lie: str = "") -> bytes:
    return _zip({"[Content_Types].xml": b"<Types/>", "xl/worksheets/sheet1.xml": sheet_xml}, lie)


def _pdf_bomb(mebibytes: int) -> bytes:
    packer = zlib.compressobj(9)
    chunk = b" " * MIB
    stream = b"".join([*(packer.compress(chunk) for _ in range(mebibytes)), packer.flush()])
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents 4 0 R >>",
        b"<< /Length %d /Filter /FlateDecode >>\nstream\n%s\nendstream" % (len(stream), stream),
    ]
    out, offsets = bytearray(b"%PDF-1.4\n"), []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


def hostile_files(small: bool = False) -> dict[str, Callable[[], bytes]]:
    """{file name: how to make it}; made one at a time, so a big one costs its memory only while written.

    `small`: the same shapes a hundred times smaller or so, kept as the tests' fixtures."""
    k = 100 if small else 1  # how much smaller
    junk = random.Random(22).randbytes(5 * MIB // (k * 10 if small else 1))
    # One word over and over, as the generator each word once had drew it (a fresh Random(7) a word, so always the
    # same first draw): the same bytes, without 1.8 million seedings (12 s before even `--only` could start).
    words = " ".join([random.Random(7).choice(["oak", "walnut", "front", "price"])] * (1_800_000 // k))
    line = 20_000 if small else 9_000_000
    files: dict[str, Callable[[], bytes]] = {
        "deep-divs.html": lambda: b"<title>Deep</title>" + b"<div>" * (200_000 // k) + b"text" + b"</div>" * 99,
        "unclosed-paragraphs.html": lambda: b"<h1>Manual</h1>" + b"<p>Step." * (200_000 // k),
        "deep-list.md": lambda: "\n".join("  " * i + f"- item {i}" for i in range(150 if small else 2_000)).encode(),
        "deep-quote.md": lambda: b"# Quoted\n\n" + b">" * (100_000 // k) + b" the deepest quote\n",
        "bomb-honest.docx": lambda: _docx(_streamed(b"<w:p/>", 1024 // k)),
        "bomb-lying.docx": lambda: _docx(_streamed(b"<w:p/>", 1024 // k), lie="word/document.xml"),
        "bomb-honest.xlsx": lambda: _xlsx(_streamed(b"<row/>", 1024 // k)),
        "bomb-lying.xlsx": lambda: _xlsx(_streamed(b"<row/>", 1024 // k), lie="xl/worksheets/sheet1.xml"),
        "bomb-stream.pdf": lambda: _pdf_bomb(256 // k or 1),
        "one-line-no-spaces.md": lambda: b"# Line\n\n" + b"a" * line,
        "one-line-words.md": lambda: b"# Line\n\n" + words.encode()[:line],
        "one-line.txt": lambda: words.encode()[:line],
        "one-cell.csv": lambda: b"Material,Note\nOak," + b"x" * line + b"\n",
    }
    for suffix in (".md", ".txt", ".html", ".pdf", ".docx", ".xlsx", ".csv"):
        files[f"junk{suffix}"] = lambda: junk
    return files


def hidden_pages() -> dict[str, Callable[[], bytes]]:
    """{file name: how to make it}: a page hiding SECRET for each of HIDDEN_WAYS (not among the test fixtures:
    tests/core/ingest/test_html_hidden.py reads the same pages)."""
    pages = {}
    for name, (element, css) in HIDDEN_WAYS.items():
        page = (
            f"<html><head><title>Prices</title><style>{css}</style></head><body>{element.format(SECRET)}"
            "<p>Oak fronts cost 185 EUR per square metre.</p></body></html>"
        )
        pages[f"hidden-{name}.html"] = lambda page=page: page.encode()
    return pages


def write_fixtures(folder: Path) -> None:
    """The small versions, for tests/core/ingest/fixtures/hostile (see test_hostile_fixtures.py)."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, make in hostile_files(small=True).items():
        (folder / name).write_bytes(make())


def read_one(path: Path, limit: int) -> None:
    """In the child: read and fragment one file, print one JSON line with the outcome."""
    sys.path.insert(0, str(ROOT))
    from core.common.errors import DocumentError
    from core.ingest.fragments import fragment_document
    from core.ingest.readers import parse_document

    signal.alarm(limit)
    started = time.perf_counter()
    try:
        document = parse_document(path.name, path.read_bytes())
        fragments = fragment_document(document)
        outcome = f"read: {len(fragments)} fragments"
        if path.name.startswith("hidden-"):
            leaked = any(SECRET in f"{f.section_path} {f.text}" for f in fragments)
            outcome += ", hidden text LEAKED" if leaked else ", hidden text dropped"
    except DocumentError as exc:
        outcome = f"failed: {str(exc)[:90]}"
    except BaseException as exc:  # the finding this benchmark looks for: not one document's failure
        outcome = f"CRASH {type(exc).__name__}: {str(exc)[:80]}"
    print(json.dumps({"outcome": outcome, "seconds": time.perf_counter() - started}))


def _waited(command: list[str], limit: float) -> tuple[str, int | None, float, float]:
    """(stdout, exit code or None when killed after `limit` seconds, seconds, peak RSS in MiB) of `command`."""
    child = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    started = time.perf_counter()
    killed = False
    while True:
        pid, status, usage = os.wait4(child.pid, os.WNOHANG)
        if pid:
            break
        if time.perf_counter() - started > limit:
            child.kill()
            killed = True
        time.sleep(0.05)
    output = child.stdout.read() if child.stdout else ""
    peak = usage.ru_maxrss / 1024  # KiB on Linux
    code = None if killed else os.waitstatus_to_exitcode(status)
    return output, code, time.perf_counter() - started, peak


def measure(path: Path, limit: int) -> tuple[str, float, float]:
    """(outcome, seconds, peak RSS in MiB) of reading `path` in a process of its own."""
    command = [sys.executable, __file__, "--child", str(path), "--limit", str(limit)]
    output, code, seconds, peak = _waited(command, limit + 10)
    if code is None:
        return f"KILLED after {limit + 10} s", seconds, peak
    try:
        line = json.loads(output.strip().splitlines()[-1])
    except (IndexError, ValueError):
        return f"CRASH: exit {code}, no result", seconds, peak
    return line["outcome"], line["seconds"], peak


def nested_page(megabytes: float = 9.6) -> bytes:
    """A page of nested <div> around one sentence whose language can't be told, `megabytes` in all (10**6
    bytes, as the document limit counts them: under the default 10 MB)."""
    depth = int(megabytes * 1e6) // len(b"<div>")
    return b"<title>Deep</title>" + b"<div>" * depth + b"Oak fronts: 185 EUR/m2." + b"</div>" * 99


def second_run(limit: int) -> None:
    """`verbatim index` twice on a folder of one nested page: the seconds and peak RSS of each run."""
    print(f"{'run':<8} {'seconds':>8} {'peak RSS':>9}  outcome")
    with tempfile.TemporaryDirectory(prefix="verbatim-second-run-") as root:
        folder = Path(root, "kb")
        folder.mkdir()
        (folder / "nested.html").write_bytes(nested_page())
        command = [sys.executable, "-c", "from bot.cli import main; main()", "index"]
        command += ["--knowledge", str(folder), "--data", str(Path(root, "data"))]
        for run in ("first", "second"):
            output, code, seconds, peak = _waited(command, 10 * limit)
            lines = output.splitlines()
            summary = "; ".join(line.strip() for line in lines if line.startswith(("added ", "  failed: ")))
            outcome = f"KILLED after {10 * limit} s" if code is None else f"exit {code}: {summary}"
            print(f"{run:<8} {seconds:>8.2f} {peak:>7.0f}MB  {outcome}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=60, help="seconds a document may take (then SIGALRM)")
    parser.add_argument("--only", help="one file name")
    parser.add_argument("--hidden", action="store_true", help="only the pages that hide a sentence (seconds)")
    parser.add_argument("--second-run", action="store_true", help="only `verbatim index` twice on a nested page")
    parser.add_argument("--write-fixtures", type=Path, metavar="DIR", help="write the small versions and stop")
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return read_one(args.child, args.limit)
    if args.write_fixtures:
        return write_fixtures(args.write_fixtures)
    if args.second_run:
        return second_run(args.limit)
    files = {**hostile_files(), **hidden_pages()}
    names = [args.only] if args.only else list(hidden_pages()) if args.hidden else list(files)
    width = max(map(len, names))
    print(f"{'document':<{width}} {'size':>9} {'seconds':>8} {'peak RSS':>9}  outcome")
    with tempfile.TemporaryDirectory(prefix="verbatim-hostile-") as folder:
        for name in names:
            path = Path(folder) / name
            path.write_bytes(files[name]())
            outcome, seconds, peak = measure(path, args.limit)
            size = path.stat().st_size
            print(f"{name:<{width}} {size / MIB:>7.2f}MB {seconds:>8.2f} {peak:>7.0f}MB  {outcome}", flush=True)
            path.unlink()


if __name__ == "__main__":
    main()
