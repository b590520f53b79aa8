"""The approximate index for big corpora: HNSW over the loaded matrix, saved beside the SQLite index.

Exact search costs one matrix-vector product: 16 ms at 100,000 fragments, ~200 ms at 1M. Above
`APPROXIMATE_ROWS` a faiss HNSW graph over 8-bit codes of the vectors (640 bytes a fragment with
the graph, beside the matrix's 1,536) proposes `CANDIDATES` rows; they are scored exactly against
the matrix, and the floor and the per-document cap run on those scores as in exact search.

The audience filter stays in the query: the graph's labels are row numbers, a scope is a range of
rows (stores load public rows first), and faiss only returns labels inside the range it is given.

Built at index time and checked then against exact search on a sample of queries: the smallest
`ef` reaching recall@5 ≥ `TARGET_RECALL` on every scope it serves is kept; a scope none reaches
is searched exactly, and the report says so. The file records the generation and a digest of the
row ids it was built for; one that doesn't match the corpus, or can't be read, is ignored.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import logging
import os
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

log = logging.getLogger(__name__)

# Below this many rows in a scope, exact search is fast enough (≤ ~7 ms at 50,000, less than embedding the
# question) and needs nothing built; above it the product grows past the question's embedding time.
APPROXIMATE_ROWS = 50_000
TARGET_RECALL = 0.99
CANDIDATES = 64  # rows the graph proposes, scored exactly; the cap looks past at most this many
LINKS = 32  # HNSW M: 32 kept recall@5 ≥ 0.99 at 100,000 where 16 needed twice the ef (benchmarks/scale.py)
EF_CONSTRUCTION = 80
EF_CHOICES = (64, 128, 256, 512, 1024)  # ef tried at build time, cheapest first (never below CANDIDATES)
SAMPLE = 200  # queries per scope in the build-time check
QUERY_SIMILARITY = 0.7  # sample queries sit this close to a fragment, as a question does to its answer
FORMAT = 1


def ids_digest(ids: np.ndarray) -> str:
    """Which rows, in which order, an approximate index was built for."""
    return hashlib.sha256(np.ascontiguousarray(ids, dtype=np.int64).tobytes()).hexdigest()


def _faiss() -> Any:
    import faiss  # imported only for a big corpus: it costs a few hundred ms

    return faiss


@dataclass
class Check:
    """What the build-time check found for one scope (a range of rows)."""

    first: int
    end: int
    recall: float  # recall@5 at `ef`, against exact search on the sample
    ef: int | None  # None: no ef reached the target, so this scope is searched exactly


@dataclass
class Approximate:
    """An HNSW index over a corpus's rows, and which scopes it may serve."""

    index: Any
    generation: int
    digest: str
    checks: list[Check]
    build_seconds: float = 0.0

    def ef_for(self, first: int, end: int) -> int | None:
        """The ef the check chose for the scope of rows [first, end); None when it must be searched exactly."""
        for check in self.checks:
            if (check.first, check.end) == (first, end):
                return check.ef
        return None

    def candidates(self, query: np.ndarray, first: int, end: int, ef: int, count: int = CANDIDATES) -> np.ndarray:
        """Row numbers in [first, end) the graph finds nearest the query (unordered, at most `count`)."""
        faiss = _faiss()
        faiss.omp_set_num_threads(1)  # one query: threads cost more than they give (per calling thread in OpenMP)
        selector = faiss.IDSelectorRange(first, end)
        params = faiss.SearchParametersHNSW(sel=selector, efSearch=max(ef, count))
        _, labels = self.index.search(np.asarray(query, dtype=np.float32).reshape(1, -1), count, params=params)
        rows = labels[0]
        return rows[rows >= 0]

    def summary(self) -> str:
        """One line for the index report and the log."""
        served = [c for c in self.checks if c.ef is not None]
        parts = [
            f"{c.end - c.first:,} rows: recall@5 {c.recall:.3f}" + (f" (ef {c.ef})" if c.ef else " → exact search")
            for c in self.checks
        ]
        kind = "approximate search" if served else "exact search (the approximate index missed its recall target)"
        return f"{kind}, built in {self.build_seconds:.1f} s; " + "; ".join(parts)

    # --- the side file ------------------------------------------------------------------------

    def save(self, path: Path) -> None:
        """Write atomically: a header line (JSON) and the faiss index, so a reader sees the old file or the new."""
        faiss = _faiss()
        header = {
            "format": FORMAT,
            "generation": self.generation,
            "ids": self.digest,
            "build_seconds": self.build_seconds,
            "checks": [[c.first, c.end, c.recall, c.ef] for c in self.checks],
        }
        temporary = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        with temporary.open("wb") as handle:
            handle.write(json.dumps(header).encode() + b"\n")
            writer = faiss.PyCallbackIOWriter(handle.write)  # streamed: no second copy of the index in memory
            faiss.write_index(self.index, writer)
            del writer  # flushes
        os.replace(temporary, path)

    @staticmethod
    def header(path: Path) -> dict[str, Any] | None:
        """The file's header; None when there is no file or it can't be read."""
        try:
            with path.open("rb") as handle:
                line = handle.readline(1 << 20)
            header = json.loads(line)
        except (OSError, ValueError):
            return None
        return header if isinstance(header, dict) and header.get("format") == FORMAT else None

    @classmethod
    def load(cls, path: Path, generation: int, digest: str) -> Approximate | None:
        """The index saved for exactly this generation and these rows; None (and a log line) otherwise."""
        header = cls.header(path)
        if header is None or header.get("generation") != generation or header.get("ids") != digest:
            return None
        try:
            faiss = _faiss()
            with path.open("rb") as handle:
                handle.readline(1 << 20)
                # Streamed from the file: reading it whole first would hold it twice (650 MB at 1M fragments).
                index = faiss.read_index(faiss.PyCallbackIOReader(handle.read))
            checks = [Check(int(a), int(b), float(r), None if e is None else int(e)) for a, b, r, e in header["checks"]]
        except Exception as exc:  # a damaged side file costs a rebuild, never an answer
            log.warning("the approximate index %s can't be read (%s); searching exactly until it is rebuilt", path, exc)
            return None
        return cls(index, generation, digest, checks, float(header.get("build_seconds", 0.0)))


def _sample_queries(matrix: np.ndarray, rng: np.random.Generator, count: int) -> np.ndarray:
    """Unit vectors at about QUERY_SIMILARITY from fragments, as questions are to their answers.

    Drawn from every row, not only the scope's: a customer's question may sit right on staff-only
    text, where a filtered graph search has the fewest allowed neighbours to walk through.
    """
    rows = rng.choice(len(matrix), size=min(count, len(matrix)), replace=False)
    noise = rng.standard_normal((len(rows), matrix.shape[1])).astype(np.float32)
    noise /= np.linalg.norm(noise, axis=1, keepdims=True)
    queries = QUERY_SIMILARITY * matrix[rows] + np.sqrt(1 - QUERY_SIMILARITY**2) * noise
    return (queries / np.linalg.norm(queries, axis=1, keepdims=True)).astype(np.float32)


def exact_top5(matrix: np.ndarray, first: int, end: int, queries: np.ndarray) -> list[set[int]]:
    """Each query's 5 best rows in [first, end), no floor, no cap: a few queries per product, so memory stays small."""
    view = matrix[first:end]
    tops: list[set[int]] = []
    for start in range(0, len(queries), 16):
        scores = view @ queries[start : start + 16].T
        best = np.argpartition(-scores, 4, axis=0)[:5]
        tops.extend(set((best[:, j] + first).tolist()) for j in range(best.shape[1]))
    return tops


def recall_at_5(
    approximate: Approximate,
    matrix: np.ndarray,
    first: int,
    end: int,
    ef: int,
    queries: np.ndarray,
    tops: list[set[int]],
) -> float:
    """Share of the exact top 5 that the candidates, scored exactly, rank top 5 too."""
    found = 0
    for query, exact in zip(queries, tops, strict=True):
        rows = approximate.candidates(query, first, end, ef)
        scores = matrix[rows] @ query
        found += len(exact & set(rows[np.argsort(-scores)[:5]].tolist()))
    return found / (5 * len(queries))


@contextmanager
def building(path: Path) -> Iterator[bool]:
    """Whether this process may build the side file now: False while another process builds it."""
    with path.with_name(path.name + ".lock").open("a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def build(
    matrix: np.ndarray, generation: int, ids: np.ndarray, scopes: Iterable[tuple[int, int]], seed: int = 0
) -> Approximate:
    """Build the graph over every row and check each scope (a range of rows) against exact search."""
    faiss = _faiss()
    started = time.perf_counter()
    rows, dim = matrix.shape
    index = faiss.IndexHNSWSQ(dim, faiss.ScalarQuantizer.QT_8bit, LINKS, faiss.METRIC_INNER_PRODUCT)
    index.hnsw.efConstruction = EF_CONSTRUCTION
    rng = np.random.default_rng(seed)
    faiss.omp_set_num_threads(os.cpu_count() or 1)
    try:
        index.train(matrix[rng.choice(rows, size=min(rows, 20_000), replace=False)])
        index.add(matrix)
    finally:
        faiss.omp_set_num_threads(1)
    approximate = Approximate(index, generation, ids_digest(ids), [])
    for first, end in dict.fromkeys(scopes):
        queries = _sample_queries(matrix, rng, SAMPLE)
        tops = exact_top5(matrix, first, end, queries)
        recall, chosen = 0.0, None
        for ef in EF_CHOICES:
            recall = recall_at_5(approximate, matrix, first, end, ef, queries, tops)
            if recall >= TARGET_RECALL:
                chosen = ef
                break
        approximate.checks.append(Check(first, end, recall, chosen))
    approximate.build_seconds = time.perf_counter() - started
    if any(c.ef is None for c in approximate.checks):
        log.warning("approximate index below recall@5 %.2f: %s", TARGET_RECALL, approximate.summary())
    else:
        log.info("approximate index: %s", approximate.summary())
    return approximate
