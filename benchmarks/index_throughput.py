"""Indexing throughput against the embedding model's own ceiling, in the same run.

Run: python benchmarks/index_throughput.py [FRAGMENTS]   (default 300)
Writes Markdown documents of real-ish text (paragraphs of the demo and the policies knowledge bases,
each document under its own title, so no fragment or sentence repeats), then times, alternately:
- the ceiling: `LocalEmbedder.embed` called directly on exactly the texts indexing embeds (each
  fragment's embedded text and each quotable sentence in context), 256 at a time;
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
from core.ingest.fragments import fragment_document  # noqa: E402
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


def texts_indexing_embeds(folder: Path) -> tuple[int, list[str]]:
    fragments, texts = 0, []
    for path in sorted(folder.glob("*.md")):
        doc = parse_document(path.name, path.read_bytes(), {}, {}, "")
        parts = fragment_document(doc)
        fragments += len(parts)
        for start in range(0, len(parts), FRAGMENT_BATCH):  # as `_put`: a batch's fragments, then its sentences
            batch = parts[start : start + FRAGMENT_BATCH]
            texts += [f.embedded_text for f in batch]
            texts += list(dict.fromkeys(e for f in batch for _, e in quotable_sentences(f)))
    return fragments, texts


def direct(embedder: LocalEmbedder, texts: list[str]) -> float:
    started = time.perf_counter()
    for start in range(0, len(texts), FRAGMENT_BATCH):
        embedder.embed(texts[start : start + FRAGMENT_BATCH])
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
        count, texts = texts_indexing_embeds(folder)
        print(f"{count} fragments in {len(list(folder.glob('*.md')))} documents; {len(texts)} texts to embed in all")
        ceiling = [direct(embedder, texts)]
        indexed, embedded = through_sync(embedder, folder)
        ceiling.append(direct(embedder, texts))
        best = min(ceiling)
        print(
            f"model directly:  {best:6.1f} s ({count / best:5.1f} fragments/s; "
            f"runs {ceiling[0]:.1f} and {ceiling[1]:.1f} s)"
        )
        print(f"core.ingest.sync: {indexed:6.1f} s ({count / indexed:5.1f} fragments/s; {embedded} fragments embedded)")
        print(f"throughput ratio (sync / direct, against the faster direct run): {best / indexed:.2f}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 300)
