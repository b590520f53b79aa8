"""The approximate index for big corpora: inverted lists over the loaded matrix, saved beside the SQLite index.

Exact search costs one matrix-vector product: 11 ms at 100,000 fragments, ~130 ms at 1M. Above
`APPROXIMATE_ROWS` rows in a scope, the scope's rows are clustered (k-means, about `LIST_ROWS` rows a
cluster) and a question scores the centroids, then exactly, against the matrix itself, the rows of
the `probes` clusters nearest it; the floor and the per-document cap run on those scores as in exact
search. The index holds only the centroids and the row numbers of each list (about 10 MB at 1M
fragments): no copy of the vectors.

An HNSW graph (faiss, 8-bit codes, M 32) served here before: +650 MB at 1M, and it missed its recall
target there (recall@5 0.986 for all rows, 0.965 for the public quarter, at ef 1,024, 496 s to build),
so 1M fell back to exact search. What it missed was not the codes' noise (a graph of float vectors
missed as much) nor ties (a 1e-4 tolerance changed 0.001): it was questions whose scope holds nothing
related, whose top 5 are the extremes of noise spread over the whole scope (scores ~0.21-0.26 on the
synthetic benchmark, far below the floor). No index finds those without scanning most of the rows:
probing an eighth of the lists still missed 2%. So below a score `gate`, chosen by the check, a
question is searched exactly: the best row its probes found scores under the gate, so it sits far
from anything in the scope. Questions near their answers are served from the lists (recall 1.000 at
4 probes on the benchmark's; figures in benchmarks/ann_1m_experiment.py).

The audience filter stays in the query: a scope is a range of rows (stores load public rows first)
and each big scope has lists of its own rows only, so a public question scores no staff-only fragment.

Built at index time and checked then against exact search on a sample of queries: the fewest probes,
then the lowest gate, reaching recall@5 ≥ `TARGET_RECALL` (as served: a query under the gate counts
as the exact search it gets) is kept per scope; a scope none reaches is searched exactly, and the
report says so. The file records the generation and a digest of the row ids it was built for; one that
doesn't match the corpus, or can't be read, is ignored.
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
from typing import Any, BinaryIO

import numpy as np

log = logging.getLogger(__name__)

# Below this many rows in a scope, exact search is fast enough (≤ ~6 ms at 50,000, less than embedding the
# question) and needs nothing built; above it the product grows past the question's embedding time.
APPROXIMATE_ROWS = 50_000
TARGET_RECALL = 0.99
LIST_ROWS = 256  # rows a list holds on average: 3,906 lists at 1M, whose centroids cost ~0.2 ms a question
TRAINING_ROWS = 50  # k-means trains on this many sample rows a list (all of them when fewer)
KMEANS_ITERATIONS = 10
PROBES = (4, 8, 16, 32, 64)  # lists scored per question, tried at build time, cheapest first
# Tried at build time, lowest first, for each number of probes: a question whose best probed row scores
# below the gate is searched exactly. None: never.
GATES: tuple[float | None, ...] = (None, 0.2, 0.25, 0.3, 0.35, 0.4)
SAMPLE = 200  # queries per scope in the build-time check
QUERY_SIMILARITY = 0.7  # sample queries sit this close to a fragment, as a question does to its answer
FORMAT = 3  # 2: HNSW graphs (faiss), ignored now


def ids_digest(ids: np.ndarray) -> str:
    """Which rows, in which order, an approximate index was built for."""
    return hashlib.sha256(np.ascontiguousarray(ids, dtype=np.int64).tobytes()).hexdigest()


@dataclass
class Lists:
    """A scope's clusters: centroids, and each list's row numbers (minus the scope's first) in `order`."""

    centroids: np.ndarray  # (lists, dim) float32
    order: np.ndarray  # (rows,) int32: the rows of list j are order[bounds[j]:bounds[j + 1]]
    bounds: np.ndarray  # (lists + 1,) int64

    def rows(self, query: np.ndarray, probes: int) -> np.ndarray:
        """The rows (minus the scope's first) of the `probes` lists whose centroids score best, unordered."""
        scores = self.centroids @ query
        nearest = np.argpartition(-scores, probes - 1)[:probes] if probes < len(scores) else np.arange(len(scores))
        return np.concatenate([self.order[self.bounds[j] : self.bounds[j + 1]] for j in nearest])


@dataclass
class Part:
    """The lists of one scope's rows [first, end), and what the build-time check found for them."""

    first: int
    end: int
    lists: Lists | None  # None when the check failed (not kept, not saved)
    recall: float  # recall@5 at `probes` and `gate`, as served, against exact search on the sample
    probes: int | None  # None: no setting reached the target, so this scope is searched exactly
    gate: float | None = None  # a question whose best probed row scores below it is searched exactly
    exact_share: float = 0.0  # share of the check's sample the gate sent to exact search
    count: int = 0  # lists built (kept in the header, so a summary needs no list loaded)

    def candidates(self, query: np.ndarray) -> np.ndarray:
        """Row numbers in [first, end) in the lists nearest the query (unordered); only for a part that serves."""
        if self.lists is None or self.probes is None:
            raise KeyError(f"no lists for rows {self.first}-{self.end}")
        return self.lists.rows(np.asarray(query, dtype=np.float32), self.probes) + self.first


@dataclass
class Approximate:
    """Inverted lists over a corpus's big scopes, and which of them may serve."""

    parts: list[Part]
    generation: int
    digest: str
    build_seconds: float = 0.0

    def serving(self, first: int, end: int) -> Part | None:
        """The scope of rows [first, end)'s part when its check passed; None when it must be searched exactly."""
        part = next((p for p in self.parts if (p.first, p.end) == (first, end)), None)
        return part if part is not None and part.probes is not None and part.lists is not None else None

    def candidates(self, query: np.ndarray, first: int, end: int) -> np.ndarray:
        """Row numbers in [first, end) in the lists nearest the query (unordered)."""
        part = self.serving(first, end)
        if part is None:
            raise KeyError(f"no lists for rows {first}-{end}")
        return part.candidates(query)

    def summary(self) -> str:
        """One line for the index report and the log."""
        served = [p for p in self.parts if p.probes is not None]
        parts = []
        for p in self.parts:
            line = f"{p.end - p.first:,} rows: recall@5 {p.recall:.3f}"
            if p.probes is None:
                line += " → exact search"
            else:
                line += f" ({p.probes} of {p.count:,} lists"
                if p.gate is not None:
                    line += f"; exact below {p.gate:.2f}: {p.exact_share:.0%} of the sample"
                line += ")"
            parts.append(line)
        kind = "approximate search" if served else "exact search (the approximate index missed its recall target)"
        return f"{kind}, built in {self.build_seconds:.1f} s; " + "; ".join(parts)

    # --- the side file ------------------------------------------------------------------------

    def save(self, path: Path) -> None:
        """Write atomically: a header line (JSON), then each part's arrays, so a reader sees the old file or the new."""
        header = {
            "format": FORMAT,
            "generation": self.generation,
            "ids": self.digest,
            "build_seconds": self.build_seconds,
            "parts": [[p.first, p.end, p.recall, p.probes, p.gate, p.exact_share, p.count] for p in self.parts],
        }
        temporary = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        with temporary.open("wb") as handle:
            handle.write(json.dumps(header).encode() + b"\n")
            for part in self.parts:
                if part.lists is None:
                    continue
                for array in (part.lists.centroids, part.lists.order, part.lists.bounds):
                    np.save(handle, array, allow_pickle=False)
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
            parts = []
            with path.open("rb") as handle:
                handle.readline(1 << 20)
                for entry in header["parts"]:
                    first, end, _, probes = entry[:4]
                    # Lists that failed their check were not saved.
                    lists = None if probes is None else _read_lists(handle, int(end) - int(first))
                    parts.append(_part(entry, lists))
        except Exception as exc:  # a damaged side file costs a rebuild, never an answer
            log.warning("the approximate index %s can't be read (%s); searching exactly until it is rebuilt", path, exc)
            return None
        return cls(parts, generation, digest, float(header.get("build_seconds", 0.0)))


def _part(entry: list[Any], lists: Lists | None) -> Part:
    """A part from its header entry: [first, end, recall, probes, gate, exact share, lists]."""
    first, end, recall, probes, gate, share, count = entry
    return Part(
        int(first),
        int(end),
        lists,
        float(recall),
        None if probes is None else int(probes),
        None if gate is None else float(gate),
        float(share),
        int(count),
    )


def _read_lists(handle: BinaryIO, rows: int) -> Lists:
    centroids, order, bounds = (np.load(handle, allow_pickle=False) for _ in range(3))
    count = len(centroids)
    if (
        centroids.dtype != np.float32
        or centroids.ndim != 2
        or order.dtype != np.int32
        or order.shape != (rows,)
        or bounds.shape != (count + 1,)
        or bounds[0] != 0
        or bounds[-1] != rows
        or np.any(np.diff(bounds) < 0)
    ):
        raise ValueError(f"lists that don't fit {rows} rows")
    if rows and (order.min() < 0 or order.max() >= rows):
        raise ValueError("rows out of the scope")
    return Lists(centroids, order, bounds.astype(np.int64))


def describe(path: Path, generation: int, scopes: Iterable[int]) -> str:
    """How a corpus whose scopes hold `scopes` rows is searched, read from the side file's header only
    (no list is loaded): for `verbatim status`, which changes nothing."""
    if max(scopes, default=0) < APPROXIMATE_ROWS:
        return f"exact search (an approximate index is built above {APPROXIMATE_ROWS:,} fragments in a scope)"
    header = Approximate.header(path)
    if header is None or header.get("generation") != generation:
        return "exact search until the approximate index is built for the index as it stands (at the next sync)"
    try:
        parts = [_part(entry, None) for entry in header["parts"]]
        summary = Approximate(parts, generation, str(header.get("ids")), float(header.get("build_seconds", 0.0)))
        return summary.summary()
    except (KeyError, TypeError, ValueError):  # a damaged header: as `load` would, search exactly until rebuilt
        return "exact search until the approximate index is rebuilt (its file can't be read)"


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
        best = np.argpartition(-scores, min(4, len(view) - 1), axis=0)[:5]
        tops.extend(set((best[:, j] + first).tolist()) for j in range(best.shape[1]))
    return tops


def check(
    lists: Lists, matrix: np.ndarray, first: int, probes: int, queries: np.ndarray, tops: list[set[int]]
) -> tuple[np.ndarray, np.ndarray]:
    """Per query: how many of the exact top 5 the probed rows, scored exactly, rank top 5 too, and their best score."""
    found = np.zeros(len(queries), dtype=np.int64)
    best = np.zeros(len(queries), dtype=np.float32)
    for i, (query, exact) in enumerate(zip(queries, tops, strict=True)):
        rows = lists.rows(query, probes) + first
        scores = matrix[rows] @ query
        found[i] = len(exact & set(rows[np.argsort(-scores)[:5]].tolist()))
        best[i] = scores.max() if len(scores) else -1.0
    return found, best


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


def _nearest(rows: np.ndarray, centroids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each row's nearest centroid and its score, a slice of rows at a time (8,192 x 3,906 scores: 128 MB)."""
    labels = np.empty(len(rows), dtype=np.int64)
    best = np.empty(len(rows), dtype=np.float32)
    for start in range(0, len(rows), _SLICE):
        scores = rows[start : start + _SLICE] @ centroids.T
        chosen = scores.argmax(axis=1)
        labels[start : start + _SLICE] = chosen
        best[start : start + _SLICE] = scores[np.arange(len(scores)), chosen]
    return labels, best


_SLICE = 8192


def _kmeans(sample: np.ndarray, count: int, rng: np.random.Generator) -> np.ndarray:
    """Spherical k-means (the vectors are unit length, so a centroid is its rows' normalised sum).

    Plain numpy: the work is one matrix product per iteration, which BLAS does as fast as faiss's k-means
    did (at 1M fragments the whole build took 61 s here, against 242 s with faiss). A cluster left empty
    restarts on a row its centroid served worst.
    """
    centroids = sample[rng.choice(len(sample), size=count, replace=False)].astype(np.float32)
    for _ in range(KMEANS_ITERATIONS):
        labels, best = _nearest(sample, centroids)
        counts = np.bincount(labels, minlength=count)
        sums = np.zeros_like(centroids)
        filled = counts > 0
        starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
        sums[filled] = np.add.reduceat(sample[np.argsort(labels, kind="stable")], starts[filled], axis=0)
        empty = np.flatnonzero(~filled)
        if len(empty):
            sums[empty] = sample[np.argsort(best)[: len(empty)]]
        norms = np.linalg.norm(sums, axis=1, keepdims=True)
        centroids = (sums / np.where(norms == 0, 1, norms)).astype(np.float32)
    return centroids


def _lists(rows: np.ndarray, rng: np.random.Generator) -> Lists:
    """k-means over a sample of the rows, then each row in its nearest centroid's list."""
    count = max(1, len(rows) // LIST_ROWS)
    sample = rows[np.sort(rng.choice(len(rows), size=min(len(rows), TRAINING_ROWS * count), replace=False))]
    centroids = _kmeans(np.ascontiguousarray(sample, dtype=np.float32), count, rng)
    del sample
    assigned, _ = _nearest(rows, centroids)
    order = np.argsort(assigned, kind="stable")
    bounds = np.searchsorted(assigned[order], np.arange(count + 1)).astype(np.int64)
    return Lists(centroids, order.astype(np.int32), bounds)


def build(
    matrix: np.ndarray, generation: int, ids: np.ndarray, scopes: Iterable[tuple[int, int]], seed: int = 0
) -> Approximate:
    """Build the lists for each scope (a range of rows) and check them against exact search."""
    started = time.perf_counter()
    rng = np.random.default_rng(seed)
    approximate = Approximate([], generation, ids_digest(ids))
    for first, end in dict.fromkeys(scopes):
        lists = _lists(matrix[first:end], rng)
        part = Part(first, end, lists, 0.0, None, count=len(lists.centroids))
        approximate.parts.append(part)
        queries = _sample_queries(matrix, rng, SAMPLE)
        tops = exact_top5(matrix, first, end, queries)
        expected = np.array([len(t) for t in tops])
        for probes in dict.fromkeys(min(p, len(lists.centroids)) for p in PROBES):
            found, best = check(lists, matrix, first, probes, queries, tops)
            for gate in GATES:
                exact = np.zeros(len(best), dtype=bool) if gate is None else best < gate
                recall = float(np.where(exact, expected, found).sum() / max(1, expected.sum()))
                part.recall = max(part.recall, recall)  # when none passes: the best it came to
                if recall >= TARGET_RECALL:
                    part.recall = recall
                    part.probes, part.gate, part.exact_share = probes, gate, float(exact.mean())
                    break
            if part.probes is not None:
                break
        if part.probes is None:
            part.lists = None  # searched exactly: its lists would only take memory
    approximate.build_seconds = time.perf_counter() - started
    if any(p.probes is None for p in approximate.parts):
        log.warning("approximate index below recall@5 %.2f: %s", TARGET_RECALL, approximate.summary())
    else:
        log.info("approximate index: %s", approximate.summary())
    return approximate
