"""Big knowledge bases on one machine: open + load time and memory, exact and approximate search.

Run: python benchmarks/scale.py [SIZES...] [--code DIR] [--keep DIR] [--queries N]   (default sizes: 10000 100000)
Builds a SQLite index of N synthetic fragments once per size in a temporary folder: 384-d unit
vectors shaped like embeddings (documents of 100 fragments around a document vector, documents
around 1 of N/2,000 topics; a quarter of the documents public). Then, each in a fresh process with
the embedding model loaded (memory is counted over the loaded model, as in a bot):
- open + load: seconds, peak RSS growth (VmHWM, reset before) and RSS after;
- exact search p50/p95 for the public and the staff scope, with 1 and 2 BLAS threads, each query
  right after a real embedding call (as in a bot), and the bare matrix-vector product over the
  same rows in the same run;
- the approximate index: build time, its build-time check (recall@5, probes, gate per scope), recall@5
  and "same hits as exact" (floor 0.4, cap 3) on another 200 queries, p50/p95 per scope;
- start-up with the saved approximate index: open + load + reading it, seconds and peak RSS.
`--code DIR` measures only open + load, with another checkout's code and then this one's (before/after).
`--keep DIR` keeps the built index files there and reuses them (1M fragments take ~2 GB and minutes).
`--queries N`: the queries timed per scope and thread count (default 40; each comes after two real embeddings).
Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
DIM = 384
PER_DOCUMENT = 100
QUERIES = 40


def unit(a: np.ndarray) -> np.ndarray:
    return (a / np.linalg.norm(a, axis=-1, keepdims=True)).astype(np.float32)


def build(path: Path, n: int) -> None:
    from core.common.values import Document, Fragment, Section
    from core.store.sqlite import SQLiteIndex

    rng = np.random.default_rng(0)
    topics = unit(rng.standard_normal((max(n // 2000, 8), DIM), dtype=np.float32))
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
        centre = unit(0.6 * topics[rng.integers(len(topics))] + 0.8 * unit(rng.standard_normal(DIM)))
        vectors = unit(0.7 * centre + 0.71 * unit(rng.standard_normal((PER_DOCUMENT, DIM), dtype=np.float32)))
        index.mark_indexing(doc)
        index.stage(name, fragments, [f"{name}:{k}" for k in range(PER_DOCUMENT)], vectors)
        index.commit(doc, PER_DOCUMENT)
    index.close()


# --- measured in a child process ------------------------------------------------------------------


def status(field: str) -> float:
    """VmRSS / VmHWM of this process, in MB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return 0.0


def reset_peak() -> None:
    Path("/proc/self/clear_refs").write_text("5")  # VmHWM := VmRSS


def percentiles(times: list[float]) -> str:
    return f"p50 {np.percentile(times, 50):6.2f} ms  p95 {np.percentile(times, 95):6.2f} ms"


def sample_queries(matrix: np.ndarray, count: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    rows = rng.choice(len(matrix), count, replace=False)
    return unit(0.7 * matrix[rows] + 0.71 * unit(rng.standard_normal((count, matrix.shape[1]), dtype=np.float32)))


def measure(path: Path, load_only: bool, start_up: bool, count: int = QUERIES) -> None:
    from threadpoolctl import threadpool_limits

    from core.store.sqlite import SQLiteIndex
    from core.vectors.embeddings import LocalEmbedder

    embedder = LocalEmbedder()
    embedder.embed(["warm up"])
    before = status("VmRSS")
    reset_peak()
    started = time.perf_counter()
    index = SQLiteIndex(path)
    opened = time.perf_counter()
    corpus = index.load()
    loaded = time.perf_counter()
    approximate = None
    if start_up:
        from core.vectors.approximate import Approximate, ids_digest

        side = path.with_name(path.name + ".hnsw")
        approximate = Approximate.load(side, corpus.generation, ids_digest(corpus.ids))
    done = time.perf_counter()
    what = "open + load + approximate index" if start_up else "open + load"
    print(
        f"  {what}: open {(opened - started) * 1000:.1f} ms, load {(loaded - opened) * 1000:.0f} ms"
        + (f", approximate index {(done - loaded) * 1000:.0f} ms" if start_up else "")
        + f"; peak RSS +{status('VmHWM') - before:.0f} MB, after +{status('VmRSS') - before:.0f} MB"
        + ("" if approximate is not None or not start_up else " (NO APPROXIMATE INDEX FOUND)"),
        flush=True,
    )
    if load_only or start_up:
        return

    from core.common.questions import SCOPES
    from core.retrieval.search import Searcher
    from core.vectors.approximate import build as build_approximate

    searcher = Searcher(corpus)
    queries = sample_queries(corpus.matrix, count, seed=1)
    questions = [f"question {i} about part {i % 7}" for i in range(count)]

    def latencies(scope: frozenset[str], threads: int) -> tuple[list[float], list[float]]:
        view = searcher._view(scope).matrix
        search, bare = [], []
        with threadpool_limits(threads, user_api="blas"):
            for i, query in enumerate(queries):
                embedder.embed([questions[i]])  # as in a bot: the search comes right after the ONNX call
                mark = time.perf_counter()
                searcher.search(query, scope, floor=0.4)
                search.append((time.perf_counter() - mark) * 1000)
                embedder.embed([questions[i] + "?"])
                mark = time.perf_counter()
                _ = view @ query
                bare.append((time.perf_counter() - mark) * 1000)
        return search, bare

    for name in ("public", "internal"):
        for threads in (1, 2):
            search, bare = latencies(SCOPES[name], threads)
            figures = f"{percentiles(search)}   bare {percentiles(bare)}"
            print(f"  exact       {name:<8} {threads} BLAS: {figures}", flush=True)

    scopes = [searcher.scope_range(s) for s in SCOPES.values()]
    started = time.perf_counter()
    built = build_approximate(corpus.matrix, corpus.generation, corpus.ids, [r for r in scopes if r])
    build_seconds = time.perf_counter() - started
    side = path.with_name(path.name + ".hnsw")
    built.save(side)
    size = side.stat().st_size / 1e6
    print(f"  approximate index: built in {build_seconds:.1f} s, {size:.0f} MB on disk", flush=True)
    print(f"    {built.summary()}", flush=True)
    exact = Searcher(corpus)
    searcher.approximate = built
    check = sample_queries(corpus.matrix, 200, seed=2)
    for name in ("public", "internal"):
        scope = SCOPES[name]
        first, end = searcher.scope_range(scope) or (0, 0)
        part = built.serving(first, end)
        if part is None:
            print(f"    {name}: searched exactly (below the size or the check failed)")
            continue
        found = same = gated = 0
        for query in check:
            view = corpus.matrix[first:end]
            truth = set((np.argpartition(-(view @ query), 5)[:5] + first).tolist())
            rows = built.candidates(query, first, end)
            scores = corpus.matrix[rows] @ query
            if part.gate is not None and scores.max() < part.gate:  # searched exactly, as the searcher does
                gated += 1
                found += 5
            else:
                found += len(truth & set(rows[np.argsort(-scores)[:5]].tolist()))
            want = [h.fragment_id for h in exact.search(query, scope, 0.4)]
            same += want == [h.fragment_id for h in searcher.search(query, scope, 0.4)]
        print(
            f"    {name}: recall@5 {found / (5 * len(check)):.3f} as served ({gated} of {len(check)} below the gate,"
            f" searched exactly), same hits as exact {same}/{len(check)}"
        )
        for threads in (1, 2):
            search, bare = latencies(scope, threads)
            figures = f"{percentiles(search)}   bare {percentiles(bare)}"
            print(f"  approximate {name:<8} {threads} BLAS: {figures}", flush=True)
    print(f"  RSS after building it: +{status('VmRSS') - before:.0f} MB", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("sizes", nargs="*", type=int, default=[10_000, 100_000])
    parser.add_argument("--code", type=Path, help="measure open + load only, with this checkout's core")
    parser.add_argument("--keep", type=Path, help="keep the built index files in this folder and reuse them")
    parser.add_argument("--queries", type=int, default=QUERIES, help="queries timed per scope and thread count")
    parser.add_argument("--measure", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--load-only", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--start-up", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        measure(args.measure, args.load_only, args.start_up, args.queries)
        return
    sys.path.insert(0, str(ROOT))
    script = str(Path(__file__).resolve())
    for n in args.sizes:
        with tempfile.TemporaryDirectory() as tmp:
            path = (args.keep or Path(tmp)) / f"index-{n}.sqlite3"
            if not path.exists():
                path.parent.mkdir(parents=True, exist_ok=True)
                started = time.perf_counter()
                build(path, n)
                print(f"{n:,} fragments: built in {time.perf_counter() - started:.0f} s", end="")
            else:
                print(f"{n:,} fragments: reused {path}", end="")
            print(f", {path.stat().st_size / 1e6:.0f} MB", flush=True)

            def child(*flags: str, tree: Path = ROOT, index: Path = path) -> None:
                command = [sys.executable, script, "--measure", str(index), "--queries", str(args.queries), *flags]
                subprocess.run(command, cwd=tree, env={**os.environ, "PYTHONPATH": str(tree)}, check=True)

            if args.code:
                print(f"  with the code in {args.code}:")
                child("--load-only", tree=args.code.resolve())
                print("  with this checkout:")
                child("--load-only")
                continue
            child()
            child("--start-up")


if __name__ == "__main__":
    main()
