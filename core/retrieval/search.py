"""Retrieval values and ranking: fragments, hits, the loaded corpus, and the search over it.

Nothing here knows how the corpus is stored; a store's `load()` produces a `Corpus`.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any, NamedTuple

import numpy as np

from core.common.errors import IndexChanged
from core.common.values import PER_DOCUMENT, TOP_K, Hit
from core.store.corpus import Corpus, select
from core.vectors.approximate import Approximate, Part

# Measured on 2 cores right after an ONNX embedding call (which leaves OpenBLAS's second thread asleep):
# one BLAS thread answers 2,000 rows in 0.13 ms, 10,000 in 0.7 ms and 100,000 in 10.6 ms (p50); two threads
# take 3.6, 4.6 and 12.0 ms, because waking the other thread costs more than the product. Above this size
# the product is long enough for a second thread to pay off on a quiet machine.
SINGLE_THREAD_ROWS = 200_000


def _pin_blas_threads(rows: int) -> None:
    """One BLAS thread for corpora where waking a second costs more than it gives (process-wide, set once)."""
    if rows > SINGLE_THREAD_ROWS:
        return
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # an optional speed-up, never a reason to fail
        return
    threadpool_limits(limits=1, user_api="blas")


@functools.cache
def _blas_controller() -> Any:
    """threadpoolctl's controller, found once: limiting through it costs ~16 µs a call (a fresh
    `threadpool_limits` looks the libraries up again: ~240 µs). None without threadpoolctl."""
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:
        return None
    return ThreadpoolController()


@contextmanager
def _one_blas_thread(rows: int) -> Iterator[None]:
    """One BLAS thread for the small products of an approximate search (centroids and a few lists) in a
    corpus big enough to keep two for exact search: at 1M fragments, 1.26 ms p50 against 2.45 with two
    (benchmarks/scale.py). Below SINGLE_THREAD_ROWS the process is pinned already."""
    controller = _blas_controller() if rows > SINGLE_THREAD_ROWS else None
    if controller is None:
        yield
        return
    # The limit is process-wide and restored on exit: two searches overlapping would restore out of order
    # and leave the process on one thread, so they take turns (about a millisecond each).
    with _BLAS_LIMIT, controller.limit(limits=1, user_api="blas"):
        yield


_BLAS_LIMIT = threading.Lock()


class _Scope(NamedTuple):
    rows: np.ndarray  # the scope's row numbers in the corpus
    matrix: np.ndarray  # their vectors: a view when the rows are contiguous
    documents: np.ndarray
    first: int | None  # the first row when the rows are contiguous (a range), else None


class Searcher:
    """Searches one loaded corpus; each scope's rows are found once and kept.

    A scope whose rows are contiguous (stores load public rows first, so every scope is) is a
    view of the matrix, never a copy: at 1M fragments a copy per scope cost 1.1 GB. With an
    `approximate` index attached, a big scope it was checked for is searched through it.
    """

    def __init__(self, corpus: Corpus) -> None:
        self.corpus = corpus
        _pin_blas_threads(len(corpus.ids))
        self._views: dict[frozenset[str], _Scope] = {}
        self._lock = threading.Lock()
        self.approximate: Approximate | None = None

    def _view(self, scope: frozenset[str]) -> _Scope:
        with self._lock:
            if scope not in self._views:
                rows = np.flatnonzero(np.isin(self.corpus.audiences, list(scope)))
                if len(rows) and rows[-1] - rows[0] + 1 == len(rows):  # contiguous: a view, rows outside never scored
                    first, end = int(rows[0]), int(rows[-1]) + 1
                    view = _Scope(rows, self.corpus.matrix[first:end], self.corpus.documents[first:end], first)
                else:  # a copy, so the scope's filter costs nothing per question
                    matrix = np.ascontiguousarray(self.corpus.matrix[rows])
                    view = _Scope(rows, matrix, self.corpus.documents[rows], None)
                self._views[scope] = view
            return self._views[scope]

    def scope_range(self, scope: Iterable[str]) -> tuple[int, int] | None:
        """The rows [first, end) a scope reads when they are contiguous; None otherwise."""
        view = self._view(frozenset(scope))
        return None if view.first is None else (view.first, view.first + len(view.rows))

    def search(
        self,
        query: np.ndarray,
        scope: Iterable[str],
        floor: float,
        k: int = TOP_K,
        per_document: int = PER_DOCUMENT,
    ) -> list[Hit]:
        """The hits for a unit query vector; fragments outside `scope` are never scored.

        Raises IndexChanged (with the hits still valid) when a chosen fragment was re-indexed
        since the corpus was loaded: the caller reloads and asks again, or keeps those hits.
        """
        view = self._view(frozenset(scope))
        if len(view.rows) == 0:
            return []
        query = query.astype(np.float32)
        approximate = self.approximate
        if approximate is not None and view.first is not None:  # it serves the big scopes its check passed
            part = approximate.serving(view.first, view.first + len(view.rows))
            if part is not None:
                found = self._search_approximately(part, query, floor, k, per_document)
                if found is not None:
                    return found
        scores = view.matrix @ query
        chosen = select(scores, view.documents, floor, k, per_document)
        return self._hits([int(view.rows[i]) for i in chosen], [float(scores[i]) for i in chosen])

    def _search_approximately(self, part: Part, query: np.ndarray, floor: float, k: int, cap: int) -> list[Hit] | None:
        """The probed lists' rows scored exactly, through the same floor and cap; None when exact search must decide."""
        with _one_blas_thread(len(self.corpus.ids)):  # small products: not the disk reads below
            # Sorted rows: ties then go to the lower row, as in exact search.
            rows = np.sort(part.candidates(query))
            scores = self.corpus.matrix[rows] @ query
        if len(rows) == 0 or (part.gate is not None and float(scores.max()) < part.gate):
            return (
                None  # far from every probed row: the scope's best are noise no index ranks (core.vectors.approximate)
            )
        chosen = select(scores, self.corpus.documents[rows], floor, k, cap)
        if len(chosen) < k and scores.min() >= floor:
            return None  # the cap set aside every candidate above the floor: rows past them may still qualify
        return self._hits([int(rows[i]) for i in chosen], [float(scores[i]) for i in chosen])

    def _hits(self, rows: list[int], scores: list[float]) -> list[Hit]:
        fragments = self.corpus.fragments_at(rows)
        hits = [
            Hit(int(self.corpus.ids[row]), fragment, score)
            for row, fragment, score in zip(rows, fragments, scores, strict=True)
            if fragment is not None
        ]
        if len(hits) < len(rows):
            raise IndexChanged(f"{len(rows) - len(hits)} of the fragments found were re-indexed since loaded", hits)
        return hits
