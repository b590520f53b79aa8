"""The approximate index for big corpora: HNSW graphs over the loaded matrix, saved beside the SQLite index.

Exact search costs one matrix-vector product: 11 ms at 100,000 fragments, ~130 ms at 1M. Above
`APPROXIMATE_ROWS` rows in a scope, a faiss HNSW graph over 8-bit codes of the scope's vectors (about
640 bytes a fragment with its links, beside the matrix's 1,536) proposes the `ef` rows its search
visits best; they are scored exactly against the matrix (the 8-bit distances only order the walk),
and the floor and the per-document cap run on those scores as in exact search.

The audience filter stays in the query: a scope is a range of rows (stores load public rows first)
and each big scope has a graph of its own rows only, so a public question walks a graph that holds
no staff-only fragment. (One graph over every row with faiss's range filter was tried first: at a
quarter of the rows public it never reached recall@5 0.99, even at ef 1,024.)

Built at index time and checked then against exact search on a sample of queries: the smallest
`ef` reaching recall@5 ≥ `TARGET_RECALL` is kept per scope; a scope none reaches is searched
exactly, and the report says so. The file records the generation and a digest of the row ids it
was built for; one that doesn't match the corpus, or can't be read, is ignored.
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

# Below this many rows in a scope, exact search is fast enough (≤ ~6 ms at 50,000, less than embedding the
# question) and needs nothing built; above it the product grows past the question's embedding time.
APPROXIMATE_ROWS = 50_000
TARGET_RECALL = 0.99
# At least this many rows proposed (all the search's best `ef`, when more), scored exactly. Re-scoring only
# the 64 the 8-bit distances ranked first lost recall at 1M (0.972 at ef 1,024): their noise reorders
# near-equal scores; scoring all `ef` costs ~50 µs at ef 256.
CANDIDATES = 64
LINKS = 32  # HNSW M: 32 kept recall@5 ≥ 0.99 at 100,000 where 16 needed twice the ef (benchmarks/scale.py)
EF_CONSTRUCTION = 80
EF_CHOICES = (64, 128, 256, 512, 1024)  # ef tried at build time, cheapest first (never below CANDIDATES)
SAMPLE = 200  # queries per scope in the build-time check
QUERY_SIMILARITY = 0.7  # sample queries sit this close to a fragment, as a question does to its answer
FORMAT = 2


def ids_digest(ids: np.ndarray) -> str:
    """Which rows, in which order, an approximate index was built for."""
    return hashlib.sha256(np.ascontiguousarray(ids, dtype=np.int64).tobytes()).hexdigest()


def _faiss() -> Any:
    import faiss  # imported only for a big corpus: it costs a few hundred ms

    return faiss


@dataclass
class Part:
    """The graph of one scope's rows [first, end), and what the build-time check found for it."""

    first: int
    end: int
    index: Any  # labels are row numbers minus `first`; None when the check failed (not kept, not saved)
    recall: float  # recall@5 at `ef`, against exact search on the sample
    ef: int | None  # None: no ef reached the target, so this scope is searched exactly


@dataclass
class Approximate:
    """HNSW graphs over a corpus's big scopes, and which of them may serve."""

    parts: list[Part]
    generation: int
    digest: str
    build_seconds: float = 0.0

    def _part(self, first: int, end: int) -> Part | None:
        return next((p for p in self.parts if (p.first, p.end) == (first, end)), None)

    def ef_for(self, first: int, end: int) -> int | None:
        """The ef the check chose for the scope of rows [first, end); None when it must be searched exactly."""
        part = self._part(first, end)
        return None if part is None else part.ef

    def candidates(self, query: np.ndarray, first: int, end: int, ef: int) -> np.ndarray:
        """Row numbers in [first, end) the scope's graph finds nearest the query (unordered, at most max(ef, 64))."""
        part = self._part(first, end)
        if part is None or part.index is None:
            raise KeyError(f"no graph for rows {first}-{end}")
        faiss = _faiss()
        faiss.omp_set_num_threads(1)  # one query: threads cost more than they give (per calling thread in OpenMP)
        count = max(ef, CANDIDATES)
        params = faiss.SearchParametersHNSW(efSearch=count)
        _, labels = part.index.search(np.asarray(query, dtype=np.float32).reshape(1, -1), count, params=params)
        rows = labels[0]
        return rows[rows >= 0] + first

    def summary(self) -> str:
        """One line for the index report and the log."""
        served = [p for p in self.parts if p.ef is not None]
        parts = [
            f"{p.end - p.first:,} rows: recall@5 {p.recall:.3f}" + (f" (ef {p.ef})" if p.ef else " → exact search")
            for p in self.parts
        ]
        kind = "approximate search" if served else "exact search (the approximate index missed its recall target)"
        return f"{kind}, built in {self.build_seconds:.1f} s; " + "; ".join(parts)

    # --- the side file ------------------------------------------------------------------------

    def save(self, path: Path) -> None:
        """Write atomically: a header line (JSON), then each graph, so a reader sees the old file or the new."""
        faiss = _faiss()
        header = {
            "format": FORMAT,
            "generation": self.generation,
            "ids": self.digest,
            "build_seconds": self.build_seconds,
            "parts": [[p.first, p.end, p.recall, p.ef] for p in self.parts],
        }
        temporary = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        with temporary.open("wb") as handle:
            handle.write(json.dumps(header).encode() + b"\n")
            for part in self.parts:
                if part.index is None:
                    continue
                writer = faiss.PyCallbackIOWriter(handle.write)  # streamed: no second copy of a graph in memory
                faiss.write_index(part.index, writer)
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
            parts = []
            with path.open("rb") as handle:
                handle.readline(1 << 20)
                for first, end, recall, ef in header["parts"]:
                    index = None
                    if ef is not None:  # a graph that failed its check was not saved
                        # Streamed from the file: reading it whole first would hold it twice (650 MB at 1M).
                        index = faiss.read_index(faiss.PyCallbackIOReader(handle.read))
                        if index.ntotal != end - first:
                            raise ValueError(f"a graph of {index.ntotal} rows for {end - first}")
                    parts.append(Part(int(first), int(end), index, float(recall), None if ef is None else int(ef)))
        except Exception as exc:  # a damaged side file costs a rebuild, never an answer
            log.warning("the approximate index %s can't be read (%s); searching exactly until it is rebuilt", path, exc)
            return None
        return cls(parts, generation, digest, float(header.get("build_seconds", 0.0)))


def describe(path: Path, generation: int, scopes: Iterable[int]) -> str:
    """How a corpus whose scopes hold `scopes` rows is searched, read from the side file's header only
    (no graph is loaded, no faiss imported): for `verbatim status`, which changes nothing."""
    if max(scopes, default=0) < APPROXIMATE_ROWS:
        return f"exact search (an approximate index is built above {APPROXIMATE_ROWS:,} fragments in a scope)"
    header = Approximate.header(path)
    if header is None or header.get("generation") != generation:
        return "exact search until the approximate index is built for the index as it stands (at the next sync)"
    parts = [Part(int(first), int(end), None, float(recall), ef) for first, end, recall, ef in header["parts"]]
    return Approximate(parts, generation, str(header.get("ids")), float(header.get("build_seconds", 0.0))).summary()


def _sample_queries(matrix: np.ndarray, rng: np.random.Generator, count: int) -> np.ndarray:
    """Unit vectors at about QUERY_SIMILARITY from fragments, as questions are to their answers.

    Drawn from every row, not only the scope's: a customer's question may sit right on staff-only
    text, where the scope's nearest fragments are only loosely related.
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


def _graph(rows: np.ndarray, rng: np.random.Generator) -> Any:
    faiss = _faiss()
    index = faiss.IndexHNSWSQ(rows.shape[1], faiss.ScalarQuantizer.QT_8bit, LINKS, faiss.METRIC_INNER_PRODUCT)
    index.hnsw.efConstruction = EF_CONSTRUCTION
    faiss.omp_set_num_threads(os.cpu_count() or 1)
    try:
        index.train(rows[rng.choice(len(rows), size=min(len(rows), 20_000), replace=False)])
        index.add(rows)
    finally:
        faiss.omp_set_num_threads(1)
    return index


def build(
    matrix: np.ndarray, generation: int, ids: np.ndarray, scopes: Iterable[tuple[int, int]], seed: int = 0
) -> Approximate:
    """Build a graph for each scope (a range of rows) and check it against exact search."""
    started = time.perf_counter()
    rng = np.random.default_rng(seed)
    approximate = Approximate([], generation, ids_digest(ids))
    for first, end in dict.fromkeys(scopes):
        part = Part(first, end, _graph(matrix[first:end], rng), 0.0, None)
        approximate.parts.append(part)
        queries = _sample_queries(matrix, rng, SAMPLE)
        tops = exact_top5(matrix, first, end, queries)
        for ef in EF_CHOICES:
            part.recall = recall_at_5(approximate, matrix, first, end, ef, queries, tops)
            if part.recall >= TARGET_RECALL:
                part.ef = ef
                break
        if part.ef is None:
            part.index = None  # searched exactly: its graph would only take memory
    approximate.build_seconds = time.perf_counter() - started
    if any(p.ef is None for p in approximate.parts):
        log.warning("approximate index below recall@5 %.2f: %s", TARGET_RECALL, approximate.summary())
    else:
        log.info("approximate index: %s", approximate.summary())
    return approximate
