"""Indexing PDFs: 50 generated PDFs of 20 pages each, read in the sandboxed child and indexed.

Run: OMP_NUM_THREADS=1 python benchmarks/index_pdfs.py [--documents 50] [--pages 20]
Prints, for reading alone (child process, layout, fragments) and for a full index build with
the embedded model: seconds, fragments/s, pages/s; the peak RSS of a PDF child and of this
process. Asserts nothing (shared machines are noisy). Linux only (reads /proc for the child).
"""

from __future__ import annotations

import argparse
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "scripts"))

from minipdf import Flow, PdfWriter  # noqa: E402

from core.common.settings import Settings  # noqa: E402
from core.ingest.fragments import fragment_document  # noqa: E402
from core.ingest.readers import parse_document, pdf  # noqa: E402
from core.retrieval.knowledge import KnowledgeBase  # noqa: E402
from core.vectors.embeddings import LocalEmbedder  # noqa: E402

ITEMS = ["oak front", "walnut worktop", "birch shelf", "beech table", "ash bench", "maple door", "pine stair tread"]
VERBS = ["is delivered", "is finished", "is measured", "is checked", "is packed", "is oiled", "is fitted"]
UNITS = ["EUR per m²", "EUR per running metre", "working days", "mm", "kg", "EUR each"]


def sentence(rng: random.Random) -> str:
    return (
        f"The {rng.choice(ITEMS)} {rng.choice(VERBS)} within {rng.randint(2, 90)} {rng.choice(UNITS)} "
        f"when order {rng.randint(1000, 9999)} reaches stage {rng.randint(1, 9)} of the workshop plan."
    )


def make_pdf(number: int, pages: int, rng: random.Random) -> bytes:
    """A price-list-like PDF: an outline entry per section, two sections a page, prose and bullets."""
    pdf = PdfWriter(title=f"Catalogue {number}")
    flow = Flow(pdf)
    for page in range(pages):
        flow.new_page()
        for part in (1, 2):
            flow.heading(f"Section {page + 1}.{part}", level=1)
            for _ in range(2):
                flow.paragraph(" ".join(sentence(rng) for _ in range(3)))
            for _ in range(3):
                flow.bullet(sentence(rng))
    if len(pdf.pages) != pages:
        raise SystemExit("a generated page overflowed: shorten the text")
    return pdf.to_bytes()


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # kilobytes on Linux


# The child's own high-water mark. getrusage(RUSAGE_CHILDREN) would report the parent's size: the
# child starts as a vfork of it, and Linux carries that peak across exec. VmHWM is per process image.
_MEASURE_CHILD = """
import runpy, sys
sys.argv = sys.argv[1:]
try:
    runpy.run_path(sys.argv[0], run_name="__main__")
except SystemExit:
    pass
hwm = [l for l in open("/proc/self/status") if l.startswith("VmHWM")][0].split()[1]
sys.stderr.write(hwm)
"""


def child_peak_mb(data: bytes) -> float:
    command = [sys.executable, "-I", "-c", _MEASURE_CHILD, str(pdf.WORKER), str(pdf.MEMORY_LIMIT), "60"]
    done = subprocess.run(command, input=data, capture_output=True, check=True, timeout=60)
    return int(done.stderr.decode().split()[-1]) / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=50)
    parser.add_argument("--pages", type=int, default=20)
    args = parser.parse_args()
    rng = random.Random(12)
    with tempfile.TemporaryDirectory(prefix="verbatim-pdfs-") as tmp:
        folder = Path(tmp) / "knowledge"
        folder.mkdir()
        started = time.perf_counter()
        for n in range(args.documents):
            (folder / f"catalogue-{n:02d}.pdf").write_bytes(make_pdf(n, args.pages, rng))
        total_mb = sum(p.stat().st_size for p in folder.iterdir()) / 1e6
        print(
            f"generated {args.documents} PDFs x {args.pages} pages ({total_mb:.1f} MB) "
            f"in {time.perf_counter() - started:.1f} s"
        )

        started = time.perf_counter()
        fragments = 0
        for path in sorted(folder.iterdir()):
            fragments += len(fragment_document(parse_document(path.name, path.read_bytes())))
        read = time.perf_counter() - started
        pages = args.documents * args.pages
        print(
            f"read only (child process per PDF, layout, fragments): {read:.1f} s, {fragments} fragments, "
            f"{fragments / read:.0f} fragments/s, {pages / read:.0f} pages/s, {read / args.documents * 1000:.0f} ms/PDF"
        )
        child = max(child_peak_mb(p.read_bytes()) for p in sorted(folder.iterdir())[:5])
        print(f"peak RSS: PDF child process {child:.0f} MB (largest of 5); this process {peak_mb():.0f} MB")

        embedder = LocalEmbedder()
        embedder.embed(["warm-up"])
        settings = Settings(knowledge_dir=folder, data_dir=Path(tmp) / "data")
        started = time.perf_counter()
        kb = KnowledgeBase(settings, embedder)
        report = kb.sync()
        build = time.perf_counter() - started
        kb.close()
        print(
            f"full index build (read, embed, store; model loaded beforehand): {build:.1f} s, "
            f"{report.fragments} fragments, {report.fragments / build:.0f} fragments/s, {pages / build:.1f} pages/s, "
            f"failed: {len(report.failed)}"
        )
    print(f"peak RSS after the full build: this process {peak_mb():.0f} MB (embedding model included)")


if __name__ == "__main__":
    main()
