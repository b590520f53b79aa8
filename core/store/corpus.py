"""One generation of the index as a store loads it: every fragment's id, vector, audience and document,
with the fragments' text in memory or read from the store on demand, and the selection of the best rows.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import overload

import numpy as np

from core.common.errors import IndexChanged
from core.common.values import Fragment


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
