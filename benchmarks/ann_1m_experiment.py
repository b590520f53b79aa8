"""Approximate search at 1M synthetic fragments without a SQLite index: which configuration reaches recall@5 0.99.

Run: python benchmarks/ann_1m_experiment.py matrix N            # writes /tmp/verbatim-ann/matrix-N.npy
     python benchmarks/ann_1m_experiment.py diagnose N SCOPE_END  # exact top-k structure: gaps, ties, scores
     python benchmarks/ann_1m_experiment.py hnsw N SCOPE_END [--m 32] [--efc 80] [--flat]
     python benchmarks/ann_1m_experiment.py ivf N SCOPE_END [--nlist 4096] [--nprobe 8,16,32,64]
     python benchmarks/ann_1m_experiment.py product N   # core.vectors.approximate.build on scopes [0, N/4) and [0, N)
The matrix is made as benchmarks/scale.py makes its index (same generator, same order of draws), in the
order the store loads it (public documents first, then by path), so rows [0, N/4) are the public scope.
The check queries are those of core.vectors.approximate's build-time check (its `_sample_queries`, seed 0 →
the same 200 per scope as `build` draws for its first scope).
`hnsw` and `ivf` compare faiss indexes and need `pip install faiss-cpu` (no longer a dependency: the
product's k-means is numpy's); `product` times the product's own build.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
CACHE = Path("/tmp/verbatim-ann")
DIM = 384
PER_DOCUMENT = 100


def unit(a: np.ndarray) -> np.ndarray:
    return (a / np.linalg.norm(a, axis=-1, keepdims=True)).astype(np.float32)


def make_matrix(n: int) -> np.ndarray:
    """scale.py's vectors, public documents first (the store's load order: audience != 'public', path)."""
    rng = np.random.default_rng(0)
    topics = unit(rng.standard_normal((max(n // 2000, 8), DIM), dtype=np.float32))
    documents = n // PER_DOCUMENT
    blocks: list[np.ndarray] = []
    for _ in range(documents):
        centre = unit(0.6 * topics[rng.integers(len(topics))] + 0.8 * unit(rng.standard_normal(DIM)))
        blocks.append(unit(0.7 * centre + 0.71 * unit(rng.standard_normal((PER_DOCUMENT, DIM), dtype=np.float32))))
    order = [d for d in range(documents) if d % 4 == 0] + [d for d in range(documents) if d % 4 != 0]
    return np.concatenate([blocks[d] for d in order])


def matrix(n: int) -> np.ndarray:
    path = CACHE / f"matrix-{n}.npy"
    if not path.exists():
        CACHE.mkdir(exist_ok=True)
        started = time.perf_counter()
        np.save(path, make_matrix(n))
        print(f"matrix {n:,}: made in {time.perf_counter() - started:.0f} s", flush=True)
    return np.load(path)


def rss() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def check_queries(m: np.ndarray, scope_end: int) -> np.ndarray:
    """The build-time check's queries: core.vectors.approximate._sample_queries after the same draws as `build`."""
    from core.vectors import approximate

    rng = np.random.default_rng(0)
    # build() draws the graph's training sample first, then the queries: reproduce that order.
    rng.choice(scope_end, size=min(scope_end, 20_000), replace=False)
    return approximate._sample_queries(m, rng, approximate.SAMPLE)


def exact_scores(m: np.ndarray, end: int, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Top-k rows and scores per query in [0, end), sorted by score, descending."""
    rows_out = np.empty((len(queries), k), dtype=np.int64)
    scores_out = np.empty((len(queries), k), dtype=np.float32)
    view = m[:end]
    for start in range(0, len(queries), 16):
        s = view @ queries[start : start + 16].T
        best = np.argpartition(-s, k - 1, axis=0)[:k]
        for j in range(best.shape[1]):
            order = np.argsort(-s[best[:, j], j])
            rows_out[start + j] = best[order, j]
            scores_out[start + j] = s[best[order, j], j]
    return rows_out, scores_out


def percentiles(times: list[float]) -> str:
    return f"p50 {np.percentile(times, 50):.2f} ms p95 {np.percentile(times, 95):.2f} ms"


class Recall:
    """recall@5 strict (the check's), tie-aware (a returned row scoring ≥ the true 5th - eps counts), visited-set."""

    def __init__(self, m: np.ndarray, end: int, queries: np.ndarray) -> None:
        self.m, self.queries = m, queries
        self.rows, self.scores = exact_scores(m, end, queries, 50)
        self.fifth = self.scores[:, 4]
        self.source_in_scope = None

    def measure(self, candidates: list[np.ndarray]) -> dict[str, float]:
        strict = tie = visited = 0
        misses_by_fifth: list[float] = []
        for i, rows in enumerate(candidates):
            truth = set(self.rows[i, :5].tolist())
            scores = self.m[rows] @ self.queries[i]
            top = np.argsort(-scores)[:5]
            got = set(rows[top].tolist())
            hit = len(truth & got)
            strict += hit
            tie += int(np.sum(scores[top] >= self.fifth[i] - 1e-4))
            visited += len(truth & set(rows.tolist()))
            if hit < 5:
                misses_by_fifth.append(float(self.fifth[i]))
        n = 5 * len(candidates)
        out: dict[str, float] = {"strict": strict / n, "tie1e-4": tie / n}
        # split: queries with a relevant row (true top-1 ≥ 0.4, the default floor) and those without
        relevant = self.scores[:, 0] >= 0.4
        hits = np.array(
            [
                len(set(self.rows[i, :5].tolist()) & set(c[np.argsort(-(self.m[c] @ self.queries[i]))[:5]].tolist()))
                for i, c in enumerate(candidates)
            ]
        )
        best = np.array([float((self.m[c] @ self.queries[i]).max()) for i, c in enumerate(candidates)])
        out[f"relevant({int(relevant.sum())})"] = (
            round(float(hits[relevant].sum() / (5 * relevant.sum())), 4) if relevant.any() else 1.0
        )
        out[f"noise({int((~relevant).sum())})"] = (
            round(float(hits[~relevant].sum() / (5 * (~relevant).sum())), 4) if (~relevant).any() else 1.0
        )
        for gate in (0.3, 0.35, 0.4):  # a query whose best candidate scores below the gate is searched exactly
            exact = best < gate
            out[f"gate{gate}"] = round(float(np.where(exact, 5, hits).sum() / n), 4)
            out[f"gate{gate}_exact"] = int(exact.sum())
        if misses_by_fifth:
            out["missed_q_fifth_median"] = float(np.median(misses_by_fifth))
            out["missed_queries"] = len(misses_by_fifth)
        return out


def diagnose(m: np.ndarray, end: int) -> None:
    queries = check_queries(m, end)
    rows, scores = exact_scores(m, end, queries, 50)
    gap56 = scores[:, 4] - scores[:, 5]
    print(f"scope [0,{end:,}): 200 check queries")
    print("  top-1 score quantiles (10/50/90):", np.percentile(scores[:, 0], [10, 50, 90]).round(3))
    print("  5th score quantiles (10/50/90):", np.percentile(scores[:, 4], [10, 50, 90]).round(3))
    print("  gap 5th-6th quantiles (10/50/90):", np.percentile(gap56, [10, 50, 90]).round(5))
    for eps in (1e-5, 1e-4, 1e-3):
        print(f"  queries with 5th-6th gap < {eps:g}: {int(np.sum(gap56 < eps))}")
    print(f"  queries whose 5th score is < 0.4 (below the bot's floor): {int(np.sum(scores[:, 4] < 0.4))}")
    print(f"  queries whose 1st score is < 0.4: {int(np.sum(scores[:, 0] < 0.4))}")
    # how many of the top 5 share the top-1's document (100 rows a document, contiguous)
    same = [(rows[i, :5] // PER_DOCUMENT == rows[i, 0] // PER_DOCUMENT).sum() for i in range(len(rows))]
    print("  rows of the top-1's document in the top 5 (histogram 1..5):", np.bincount(same, minlength=6)[1:])


def timed_search(search, queries: np.ndarray) -> tuple[list[np.ndarray], list[float]]:
    out, times = [], []
    for q in queries:
        mark = time.perf_counter()
        rows = search(q)
        times.append((time.perf_counter() - mark) * 1000)
        out.append(rows)
    return out, times


def run_hnsw(m: np.ndarray, end: int, links: int, efc: int, flat: bool, efs: list[int]) -> None:
    import faiss

    view = m[:end]
    before = rss()
    started = time.perf_counter()
    if flat:
        index = faiss.IndexHNSWFlat(DIM, links, faiss.METRIC_INNER_PRODUCT)
    else:
        index = faiss.IndexHNSWSQ(DIM, faiss.ScalarQuantizer.QT_8bit, links, faiss.METRIC_INNER_PRODUCT)
    index.hnsw.efConstruction = efc
    faiss.omp_set_num_threads(2)
    rng = np.random.default_rng(0)
    index.train(view[rng.choice(end, size=min(end, 20_000), replace=False)])
    index.add(view)
    faiss.omp_set_num_threads(1)
    build = time.perf_counter() - started
    print(
        f"HNSW{'Flat' if flat else 'SQ8'} M={links} efC={efc} on {end:,}: built in {build:.0f} s, "
        f"+{rss() - before:.0f} MB RSS",
        flush=True,
    )
    recall = Recall(m, end, check_queries(m, end))
    for ef in efs:
        params = faiss.SearchParametersHNSW(efSearch=ef)

        def search(q: np.ndarray, ef: int = ef, params: Any = params) -> np.ndarray:
            _, labels = index.search(q.reshape(1, -1), ef, params=params)
            rows = labels[0]
            rows = rows[rows >= 0]
            _ = m[rows] @ q  # the exact rescoring, timed with the search
            return rows

        found, times = timed_search(search, recall.queries)
        print(f"  ef {ef}: {recall.measure(found)}  {percentiles(times)}", flush=True)


def run_ivf(m: np.ndarray, end: int, nlist: int, nprobes: list[int], train_points: int, niter: int) -> None:
    """In-house IVF over the matrix: k-means centroids, inverted lists of row ids, exact scores of probed rows."""
    import faiss

    view = m[:end]
    started = time.perf_counter()
    faiss.omp_set_num_threads(2)
    rng = np.random.default_rng(0)
    sample = view[np.sort(rng.choice(end, size=min(end, train_points), replace=False))]
    kmeans = faiss.Kmeans(DIM, nlist, niter=niter, spherical=True, seed=1, max_points_per_centroid=10**9)
    kmeans.train(sample)
    trained = time.perf_counter() - started
    quantizer = faiss.IndexFlatIP(DIM)
    quantizer.add(kmeans.centroids)
    assign = np.empty(end, dtype=np.int64)
    for start in range(0, end, 65536):
        _, a = quantizer.search(view[start : start + 65536], 1)
        assign[start : start + 65536] = a[:, 0]
    order = np.argsort(assign, kind="stable").astype(np.int32)
    bounds = np.searchsorted(assign[order], np.arange(nlist + 1))
    faiss.omp_set_num_threads(1)
    centroids = kmeans.centroids.copy()
    build = time.perf_counter() - started
    sizes = np.diff(bounds)
    print(
        f"IVF nlist={nlist} train {train_points:,} niter {niter} on {end:,}: built in {build:.0f} s "
        f"(k-means {trained:.0f} s), lists min/median/max {sizes.min()}/{int(np.median(sizes))}/{sizes.max()}, "
        f"+{(centroids.nbytes + order.nbytes + bounds.nbytes) / 1e6:.1f} MB",
        flush=True,
    )
    recall = Recall(m, end, check_queries(m, end))
    for nprobe in nprobes:

        def search(q: np.ndarray, nprobe: int = nprobe) -> np.ndarray:
            c = centroids @ q
            probe = np.argpartition(-c, nprobe - 1)[:nprobe]
            rows = np.concatenate([order[bounds[p] : bounds[p + 1]] for p in probe])
            _ = m[rows] @ q
            return rows

        found, times = timed_search(search, recall.queries)
        mean = np.mean([len(f) for f in found])
        print(f"  nprobe {nprobe}: {recall.measure(found)}  {percentiles(times)}  rows scored {mean:.0f}", flush=True)


def run_product(m: np.ndarray, n: int, scope_ends: list[int]) -> None:
    """core.vectors.approximate.build as the product runs it, then served recall@5 and latency on other queries."""
    from core.vectors import approximate

    scopes = [(0, end) for end in scope_ends]
    before = rss()
    started = time.perf_counter()
    built = approximate.build(m, 1, np.arange(n, dtype=np.int64), scopes)
    seconds = time.perf_counter() - started
    side = CACHE / f"side-{n}.ann"
    built.save(side)
    again = approximate.Approximate.load(side, 1, approximate.ids_digest(np.arange(n, dtype=np.int64)))
    assert again is not None
    print(
        f"build {seconds:.0f} s, +{rss() - before:.0f} MB RSS after, {side.stat().st_size / 1e6:.1f} MB on disk",
        flush=True,
    )
    print(f"  {built.summary()}", flush=True)
    rng = np.random.default_rng(2)
    queries = unit(
        0.7 * m[rng.choice(n, 200, replace=False)] + 0.71 * unit(rng.standard_normal((200, DIM), dtype=np.float32))
    )
    for first, end in scopes:
        part = again.serving(first, end)
        view = m[first:end]
        truth = [set(np.argpartition(-(view @ q), 4)[:5].tolist()) for q in queries]
        served, gated, fast, slow = 0, 0, [], []
        for q, want in zip(queries, truth, strict=True):
            mark = time.perf_counter()
            exact = part is None
            if part is not None:
                rows = np.sort(again.candidates(q, first, end))
                scores = m[rows] @ q
                exact = part.gate is not None and float(scores.max()) < part.gate
                if not exact:
                    top = rows[np.argpartition(-scores, 4)[:5]]
            if exact:
                scores = view @ q
                top = np.argpartition(-scores, 4)[:5] + first
            (slow if exact else fast).append((time.perf_counter() - mark) * 1000)
            gated += exact
            served += len(want & set(top.tolist()))
        times = fast + slow
        print(
            f"  scope [0, {end:,}): recall@5 as served {served / 1000:.3f} (200 queries), {gated} searched exactly;"
            f" all {percentiles(times)}" + (f"; served from lists {percentiles(fast)}" if fast else ""),
            flush=True,
        )


def main() -> None:
    from threadpoolctl import threadpool_limits

    parser = argparse.ArgumentParser()
    parser.add_argument("what", choices=["matrix", "diagnose", "hnsw", "ivf", "product"])
    parser.add_argument("n", type=int)
    parser.add_argument("end", type=int, nargs="?")
    parser.add_argument("--m", type=int, default=32)
    parser.add_argument("--efc", type=int, default=80)
    parser.add_argument("--flat", action="store_true")
    parser.add_argument("--ef", default="64,128,256,512,1024")
    parser.add_argument("--nlist", type=int, default=4096)
    parser.add_argument("--nprobe", default="8,16,32,64")
    parser.add_argument("--train", type=int, default=200_000)
    parser.add_argument("--niter", type=int, default=10)
    args = parser.parse_args()
    m = matrix(args.n)
    end = args.end or args.n
    print(f"matrix {m.shape}, {os.cpu_count()} CPUs", flush=True)
    with threadpool_limits(1, user_api="blas"):
        if args.what == "diagnose":
            diagnose(m, end)
        elif args.what == "hnsw":
            run_hnsw(m, end, args.m, args.efc, args.flat, [int(x) for x in args.ef.split(",")])
        elif args.what == "product":
            run_product(m, args.n, sorted({args.n // 4, args.n}))
        elif args.what == "ivf":
            run_ivf(m, end, args.nlist, [int(x) for x in args.nprobe.split(",")], args.train, args.niter)


if __name__ == "__main__":
    main()
