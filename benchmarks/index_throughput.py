"""Indexing throughput against the embedding model's own ceiling, in the same run.

Run: python benchmarks/index_throughput.py [FRAGMENTS]   (default 300)
Writes Markdown documents of real-ish text (paragraphs of the demo and the policies knowledge bases,
each document under its own title, so no fragment or sentence repeats), then times, alternately:
- the ceiling: `LocalEmbedder.embed` called directly on exactly the texts indexing embeds (every 256
  fragments across documents: their embedded texts and their distinct quotable sentences), all the
  fragments in one call and all the sentences in another: the least padding any batching can have;
- `core.ingest.sync` indexing the folder into a fresh SQLite index with the same model.
Prints fragments/s for both and the ratio (target ≥ 0.9); asserts nothing.
"""

from __future__ import annotations

import re
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from core.embeddings import LocalEmbedder  # noqa: E402
from core.ingest import FRAGMENT_BATCH, sync  # noqa: E402
from core.ingest.fragments import fragment_document, fragment_hash  # noqa: E402
from core.ingest.readers import parse_document  # noqa: E402
from core.retrieval import quotable_sentences  # noqa: E402
from core.store.sqlite import SQLiteIndex  # noqa: E402

SOURCES = [ROOT / "knowledge", ROOT / "evals" / "policies" / "knowledge"]
SECTIONS_PER_DOCUMENT = 10


def paragraphs() -> list[str]:
    found = []
    for folder in SOURCES:
        for path in sorted(folder.rglob("*.md")):
            body = re.sub(r"^---\n.*?\n---\n", "", path.read_text(encoding="utf-8"), flags=re.S)
            found += [p.strip() for p in body.split("\n\n") if len(p.strip()) > 80 and not p.lstrip().startswith("#")]
    return found


def write_folder(folder: Path, fragments: int) -> None:
    source = paragraphs()
    for d in range(fragments // SECTIONS_PER_DOCUMENT):
        sections = [
            f"## Topic {s}\n\n{source[(d * SECTIONS_PER_DOCUMENT + s) % len(source)]}"
            for s in range(SECTIONS_PER_DOCUMENT)
        ]
        text = f"---\ntitle: Handbook part {d}\naudience: public\n---\n" + "\n\n".join(sections) + "\n"
        (folder / f"part-{d:04d}.md").write_text(text, encoding="utf-8")


def calls_indexing_makes(folder: Path) -> tuple[int, list[list[str]]]:
    """The model calls `sync` makes for this folder, without the index: every FRAGMENT_BATCH fragments
    (across documents), one call with their texts and one with their distinct quotable sentences."""
    fragments = []
    for path in sorted(folder.glob("*.md")):
        fragments += fragment_document(parse_document(path.name, path.read_bytes(), {}, {}, ""))
    calls = []
    for start in range(0, len(fragments), FRAGMENT_BATCH):
        batch = list({fragment_hash(f): f for f in fragments[start : start + FRAGMENT_BATCH]}.values())
        calls.append([f.embedded_text for f in batch])
        calls.append(list(dict.fromkeys(e for f in batch for _, e in quotable_sentences(f))))
    return len(fragments), calls


def direct(embedder: LocalEmbedder, calls: list[list[str]]) -> float:
    """The model's best on these texts: all fragments in one call and all sentences in another, so each is
    sorted by length over the whole folder (the least padding any batching can have)."""
    started = time.perf_counter()
    embedder.embed([t for texts in calls[0::2] for t in texts])
    embedder.embed([t for texts in calls[1::2] for t in texts])
    return time.perf_counter() - started


def through_sync(embedder: LocalEmbedder, folder: Path) -> tuple[float, int]:
    with tempfile.TemporaryDirectory() as data:
        index = SQLiteIndex(Path(data) / "index.sqlite3")
        started = time.perf_counter()
        report = sync(folder, index, embedder)
        seconds = time.perf_counter() - started
        index.close()
    return seconds, report.embedded


def main(fragments: int) -> None:
    embedder = LocalEmbedder()
    embedder.embed(["warm up"])
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        write_folder(folder, fragments)
        count, calls = calls_indexing_makes(folder)
        texts = sum(len(c) for c in calls)
        print(f"{count} fragments in {len(list(folder.glob('*.md')))} documents; {texts} texts to embed in all")
        ceiling = [direct(embedder, calls)]
        indexed, embedded = through_sync(embedder, folder)
        ceiling.append(direct(embedder, calls))
        best = min(ceiling)
        print(
            f"model directly:  {best:6.1f} s ({count / best:5.1f} fragments/s; "
            f"runs {ceiling[0]:.1f} and {ceiling[1]:.1f} s)"
        )
        print(f"core.ingest.sync: {indexed:6.1f} s ({count / indexed:5.1f} fragments/s; {embedded} fragments embedded)")
        print(f"throughput ratio (sync / direct, against the faster direct run): {best / indexed:.2f}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 300)
