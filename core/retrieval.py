"""Retrieval values and ranking: fragments, hits, the loaded corpus, and the search over it.

Nothing here knows how the corpus is stored; a store's `load()` produces a `Corpus`.
"""

from __future__ import annotations

import functools
import hashlib
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, NamedTuple, overload

import numpy as np

from core.approximate import Approximate, Part
from core.errors import IndexChanged
from core.text import SECTION_SEPARATOR, caption, split_sentences

TOP_K = 5
PER_DOCUMENT = 3


@dataclass(frozen=True)
class Fragment:
    """A quotable piece of a document; `position` counts from 1 up to `of`."""

    document: str  # the document's path
    title: str
    audience: str
    section: tuple[str, ...]
    position: int
    of: int
    text: str
    page: int | None = None  # for paged formats (PDF): where the fragment starts
    as_of: str | None = None  # the document's `as_of`, as its metadata gives it (see core.review.dated)
    review_every: str | None = None  # the document's own review period (`180d`, `6 months`), if it sets one
    modified: str | None = None  # the file's date when it was indexed (ISO): the review clock without `as_of`

    @property
    def section_path(self) -> str:
        return SECTION_SEPARATOR.join(self.section)

    @property
    def heading(self) -> str:
        """`Document › Section`: how a fragment is named to a model or in a refusal."""
        return SECTION_SEPARATOR.join((self.title, *self.section))

    @property
    def caption(self) -> str:
        return caption(self.title, self.section, self.position, self.of, self.page)

    @property
    def embedded_text(self) -> str:
        """What is embedded: headings give a bare paragraph its meaning."""
        parts = [self.title]
        if self.section:
            parts.append(self.section_path)
        parts.append(self.text)
        return ". ".join(parts)


_BULLET = re.compile(r"^\s*(?:[-*+•]|\d+[.)])\s+")


def quotable_sentences(fragment: Fragment) -> list[tuple[str, str]]:
    """(sentence, what is embedded for it) for each sentence an answerer may quote on its own.

    The sentence is embedded with its document and section, as fragments are. Too short to say
    anything alone ("Staff only.") or a list's lead-in ("…finished:") is left out. Ingestion
    embeds these at index time, so an answer never waits for a fragment seen the first time.
    """
    context = ". ".join([fragment.title, *([fragment.section_path] if fragment.section else [])])
    out = []
    for sentence in split_sentences(fragment.text):
        bare = _BULLET.sub("", sentence).strip()
        if len(bare.split()) >= 3 and not bare.endswith(":"):
            out.append((bare, f"{context}. {bare}"))
    return out


def text_hash(text: str) -> str:
    """The key of a stored text vector."""
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class Hit:
    """A fragment found for a question, with its cosine similarity."""

    fragment_id: int
    fragment: Fragment
    score: float


def find_rows(ordered: np.ndarray, order: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Where each of `values` is in an array whose sorted copy is `ordered` (`order` its argsort), and whether
    it is there at all (the row given for a value that isn't means nothing)."""
    if len(ordered) == 0:
        return np.zeros(len(values), dtype=np.int64), np.zeros(len(values), dtype=bool)
    at = np.minimum(np.searchsorted(ordered, values), len(ordered) - 1)
    return order[at], ordered[at] == values


# What a store reads for the rows asked: each row's fragment, or None when it is no longer what the row
# was loaded as (deleted, swapped out by a re-index, narrowed to another audience since the load).
FragmentReader = Callable[[Sequence[int]], list["Fragment | None"]]


class StoredFragments(Sequence[Fragment]):
    """A corpus's fragments, read from the store when asked for: only the hits' text is ever held.

    A small LRU cache keeps the fragments asked for lately (popular questions hit the same ones);
    iteration reads in chunks, so walking every fragment (the gap report) holds one chunk at a time.
    Indexing or iterating raises IndexChanged for a row that vanished since the load; `at` gives None.
    """

    CHUNK = 500

    def __init__(self, count: int, read: FragmentReader, cache: int = 2048) -> None:
        self._count = count
        self._read = read
        self._cache: OrderedDict[int, Fragment] = OrderedDict()
        self._cache_size = cache
        self._lock = threading.Lock()
        self._trusted = True

    def __len__(self) -> int:
        return self._count

    def at(self, rows: Sequence[int]) -> list[Fragment | None]:
        """The fragments of these rows (None for one gone since the load), read in one go for those not cached."""
        if not self._trusted:
            return self._read(rows)
        found: dict[int, Fragment | None] = {}
        with self._lock:
            for row in rows:
                if row in self._cache:
                    self._cache.move_to_end(row)
                    found[row] = self._cache[row]
        missing = [r for r in dict.fromkeys(rows) if r not in found]
        if missing:
            for row, fragment in zip(missing, self._read(missing), strict=True):
                found[row] = fragment
            with self._lock:
                for row in missing:
                    fragment = found[row]
                    if fragment is not None:
                        self._cache[row] = fragment
                while len(self._cache) > self._cache_size:
                    self._cache.popitem(last=False)
        return [found[r] for r in rows]

    def distrust(self) -> None:
        """The store has moved on since the load: drop the cache and check every row against the store from now
        on (a cached text may have been re-indexed or narrowed to another audience since)."""
        with self._lock:
            self._trusted = False
            self._cache.clear()

    def read(self, rows: Sequence[int]) -> list[Fragment | None]:
        """`at` past the cache: a walk over everything would only evict what searches use."""
        return self._read(rows)

    def _one(self, row: int) -> Fragment:
        fragment = self.at([row])[0]
        if fragment is None:
            raise IndexChanged(f"fragment row {row} was re-indexed since the corpus was loaded")
        return fragment

    @overload
    def __getitem__(self, index: int) -> Fragment: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[Fragment]: ...

    def __getitem__(self, index: int | slice) -> Fragment | Sequence[Fragment]:
        if isinstance(index, slice):
            return [self._one(r) for r in range(*index.indices(self._count))]
        row = index + self._count if index < 0 else index
        if not 0 <= row < self._count:
            raise IndexError(index)
        return self._one(row)

    def __iter__(self) -> Iterator[Fragment]:
        for start in range(0, self._count, self.CHUNK):
            rows = list(range(start, min(start + self.CHUNK, self._count)))
            for row, fragment in zip(rows, self.read(rows), strict=True):
                if fragment is None:
                    raise IndexChanged(f"fragment row {row} was re-indexed since the corpus was loaded")
                yield fragment


@dataclass(frozen=True)
class Corpus:
    """Every fragment with its vector, loaded once: rows of `matrix` match `fragments`.

    `fragments` may be a tuple (everything in memory) or `StoredFragments`, read from the store
    on demand: what ranking needs (ids, vectors, audiences, document numbers) is in memory either way.
    """

    ids: np.ndarray  # int64 fragment ids
    fragments: Sequence[Fragment]
    matrix: np.ndarray  # float32, (n, dim), unit rows
    audiences: np.ndarray  # str, one per row
    documents: np.ndarray  # int, document number per row (for the per-document cap)
    generation: int = 0  # the store's generation this corpus was loaded at
    document_titles: Mapping[int, str] | None = None  # document number → title, when the store gives them

    def distrust(self) -> None:
        """Answer only what the store still holds as loaded: see StoredFragments.distrust (an in-memory corpus
        has no store behind it to ask)."""
        if isinstance(self.fragments, StoredFragments):
            self.fragments.distrust()

    def fragments_at(self, rows: Sequence[int]) -> list[Fragment | None]:
        """The fragments of these rows; None for one re-indexed since the load (never for an in-memory corpus)."""
        if isinstance(self.fragments, StoredFragments):
            return self.fragments.at(rows)
        return [self.fragments[r] for r in rows]

    def each(self) -> Iterator[tuple[int, Fragment]]:
        """(fragment id, fragment) of every row still as loaded, read a chunk at a time."""
        step = StoredFragments.CHUNK
        for start in range(0, len(self.ids), step):
            rows = list(range(start, min(start + step, len(self.ids))))
            if isinstance(self.fragments, StoredFragments):
                read: Sequence[Fragment | None] = self.fragments.read(rows)  # past the cache
            else:
                read = [self.fragments[row] for row in rows]
            for row, fragment in zip(rows, read, strict=True):
                if fragment is not None:
                    yield int(self.ids[row]), fragment

    def by_ids(self, ids: Iterable[int]) -> dict[int, Fragment]:
        """The fragments with these ids that the corpus holds (and that are still as loaded)."""
        wanted = np.fromiter(set(ids), dtype=np.int64)
        if len(wanted) == 0 or len(self.ids) == 0:
            return {}
        order = np.argsort(self.ids, kind="stable")
        found, present = find_rows(self.ids[order], order, wanted)
        rows = [int(r) for r in found[present]]
        return {
            int(self.ids[row]): fragment
            for row, fragment in zip(rows, self.fragments_at(rows), strict=True)
            if fragment is not None
        }

    def titles(self, scope: Iterable[str]) -> list[str]:
        """The titles of the documents a scope may read, in row order, without reading any fragment's text."""
        mask = np.isin(self.audiences, list(scope))
        if self.document_titles is None:
            return list(dict.fromkeys(self.fragments[int(r)].title for r in np.flatnonzero(mask)))
        documents = self.documents[mask]
        _, first = np.unique(documents, return_index=True)
        return list(dict.fromkeys(self.document_titles[int(d)] for d in documents[np.sort(first)]))


def select(scores: np.ndarray, documents: np.ndarray, floor: float, k: int, per_document: int) -> list[int]:
    """Row numbers of the best `k` scores ≥ `floor`, at most `per_document` from one document.

    The floor is applied first, so at a realistic floor only a handful of rows go further.
    A partition then finds the m-th best of those in O(n) without sorting them, so only the
    rows at or above it are sorted; m doubles in the rare case the cap leaves fewer than k among them.
    """
    eligible = np.flatnonzero(scores >= floor)
    if len(eligible) == 0 or k <= 0:
        return []
    values = scores[eligible]
    m = min(len(eligible), k * per_document)
    while True:
        if m < len(eligible):
            cut = np.partition(values, len(values) - m)[len(values) - m]
            # Rows tied with the m-th best may sit on either side of the cut: take them all.
            top = eligible[values >= cut]
        else:
            top = eligible
        # Stable order: higher score first, then lower row number, so ties are deterministic.
        top = top[np.lexsort((top, -scores[top]))]
        chosen: list[int] = []
        taken: dict[int, int] = {}
        for row in top:
            doc = int(documents[row])
            if taken.get(doc, 0) < per_document:
                taken[doc] = taken.get(doc, 0) + 1
                chosen.append(int(row))
                if len(chosen) == k:
                    return chosen
        if m >= len(eligible):
            return chosen
        m = min(len(eligible), m * 2)


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
            return None  # far from every probed row: the scope's best are noise no index ranks (core.approximate)
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
