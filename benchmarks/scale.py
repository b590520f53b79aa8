"""Big knowledge bases on one machine: open + load time and memory, and search latency, with synthetic fragments.

Run: python benchmarks/scale.py [SIZES...]   (default: 10000 100000)
Builds a SQLite index of N synthetic fragments (random unit vectors, 384 dimensions, a quarter
of the documents public) once per size in a temporary folder, then measures in the same run:
- opening the index and loading the corpus (seconds, RSS growth);
- search p50/p95 for the public and the staff scope, with 1 and with 2 BLAS threads, each
  query right after a real embedding call (as in a bot), and the bare matrix-vector product.
Prints figures; asserts nothing.
"""

from __future__ import annotations

import hashlib
import resource
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from core.embeddings import LocalEmbedder  # noqa: E402
from core.ingest.documents import Document, Section  # noqa: E402
from core.knowledge import SCOPES  # noqa: E402
from core.retrieval import Fragment, Searcher  # noqa: E402
from core.store import INDEX_FILE  # noqa: E402
from core.store.sqlite import SQLiteIndex  # noqa: E402

DIM = 384
PER_DOCUMENT = 100


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def build(path: Path, n: int, rng: np.random.Generator) -> None:
    index = SQLiteIndex(path)
    index.reset("synthetic")
    for d in range(n // PER_DOCUMENT):
        audience = "public" if d % 4 == 0 else "internal"
        name = f"doc-{d:06d}.md"
        doc = Document(
            name, f"Document {d}", audience, (Section((), "x"),), hashlib.sha256(name.encode()).hexdigest(), 1
        )
        fragments = [
            Fragment(name, doc.title, audience, ("Part",), k, PER_DOCUMENT, f"Fragment {k} of document {d}.")
            for k in range(1, PER_DOCUMENT + 1)
        ]
        vectors = rng.normal(size=(PER_DOCUMENT, DIM)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        index.mark_indexing(doc)
        index.put(doc, fragments, [f"{name}:{k}" for k in range(PER_DOCUMENT)], vectors)
    index.close()


def percentiles(times: list[float]) -> str:
    return f"p50 {np.percentile(times, 50):7.2f} ms  p95 {np.percentile(times, 95):7.2f} ms"


def main(sizes: list[int]) -> None:
    embedder = LocalEmbedder()
    embedder.embed(["warm up"])
    rng = np.random.default_rng(0)
    for n in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / INDEX_FILE
            started = time.perf_counter()
            build(path, n, rng)
            print(
                f"{n:,} fragments: built in {time.perf_counter() - started:.1f} s, {path.stat().st_size / 1e6:.0f} MB"
            )
            before = rss_mb()
            started = time.perf_counter()
            index = SQLiteIndex(path)
            opened = time.perf_counter()
            corpus = index.load()
            loaded = time.perf_counter()
            print(
                f"  open {(opened - started) * 1000:7.1f} ms   load {(loaded - opened) * 1000:7.1f} ms   "
                f"peak RSS +{rss_mb() - before:.0f} MB"
            )
            searcher = Searcher(corpus)
            for scope in ("public", "internal"):
                for threads in (1, 2):
                    search, bare = [], []
                    with threadpool_limits(threads, user_api="blas"):
                        for i in range(40):
                            query = embedder.embed([f"question {i} about part {i % 7}"])[0]
                            mark = time.perf_counter()
                            searcher.search(query, SCOPES[scope], floor=0.1)
                            search.append((time.perf_counter() - mark) * 1000)
                            query = embedder.embed([f"another question {i}"])[0]
                            mark = time.perf_counter()
                            _ = corpus.matrix @ query
                            bare.append((time.perf_counter() - mark) * 1000)
                    figures = f"search {percentiles(search)}   bare {percentiles(bare)}"
                    print(f"  {scope:<8} {threads} BLAS thread(s): {figures}")
            index.close()


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [10_000, 100_000])
