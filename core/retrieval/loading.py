"""How questions are searched, two ways behind one interface (`Search.rank`):

LoadedSearch      the store's current generation loaded and ranked in memory (SQLite), reloaded when it moves
DatabaseSearch    ranked where the vectors are (PostgreSQL + pgvector); nothing is loaded

The indexer writes what these read; it tells LoadedSearch when a sync committed a new generation.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Protocol

import numpy as np

from core.common.errors import IndexChanged, IndexFileError, StoreUnavailable, VerbatimError
from core.common.values import Hit
from core.retrieval.search import Searcher
from core.store import IndexStore, SearchingIndex
from core.vectors import approximate

log = logging.getLogger(__name__)

# From this many fragments, a new generation is loaded in the background while questions are answered from
# the one loaded (benchmarks/scale.py: a load takes 0.4–0.5 s at 100,000 fragments, 3.4–6.8 s at 1M).
BACKGROUND_RELOAD_ROWS = 50_000
RELOAD_RETRY_SECONDS = 30.0  # after a background load failed (memory, a damaged file), before the next try


def side_file(index: IndexStore, searcher: Searcher) -> Path | None:
    """The approximate index's file when the corpus is big enough for one and the store keeps one (SQLite)."""
    path = index.approximate_path
    if path is None or len(searcher.corpus.ids) < approximate.APPROXIMATE_ROWS:
        return None
    return path


Rank = Callable[[np.ndarray, Iterable[str], float], list[Hit]]  # (unit query vector, scope, floor) → hits


class Search(Protocol):
    """How questions are searched: in memory over a loaded generation, or in the database."""

    def rank(self) -> Rank:
        """What this question is ranked by; a big corpus's new generation never makes it wait for the load."""
        ...

    def titles(self, scope: frozenset[str]) -> list[str]:
        """The titles of the documents a scope may read, in the corpus's order (public first, by path)."""
        ...


class DatabaseSearch:
    """Ranked where the vectors are (PostgreSQL + pgvector), always at the store's current generation."""

    def __init__(self, index: IndexStore, ranking: SearchingIndex) -> None:
        self.index, self.ranking = index, ranking

    def rank(self) -> Rank:
        return self.ranking.search

    def titles(self, scope: frozenset[str]) -> list[str]:
        # What a search can find, in the corpus's order (public first, by path), without loading it.
        searched = [r for r in self.index.register() if r.state in ("indexed", "indexing") and r.fragments]
        searched.sort(key=lambda r: (r.audience != "public", r.path.encode()))
        return list(dict.fromkeys(r.title for r in searched if r.audience in scope))


class LoadedSearch:
    """The store's current generation loaded in memory and searched there, reloaded when the generation moves.

    Any process on the same store may re-index: every search first compares the store's generation
    with the loaded one and reloads when it moved, so no process answers from documents the index no
    longer holds. `on_unreadable` is told when the index can't be read and the loaded one goes on answering.
    """

    def __init__(self, index: IndexStore, on_unreadable: Callable[[], None]) -> None:
        self.index = index
        self._on_unreadable = on_unreadable
        self._loading = threading.Lock()  # one reload at a time; answering never waits for a sync
        self.current: Searcher | None = None
        self._holding = False  # set while a recovered index is refilled: keep searching what is loaded
        self._side_file_seen: tuple[int, int] | None = None  # the approximate index file last tried (mtime, size)
        self._load_failed_at = float("-inf")  # when a background load last failed (monotonic seconds)

    @contextmanager
    def holding(self, recover: Callable[[], bool]) -> Iterator[None]:
        """Run `recover` (True: the index was started anew) with no load under way, and keep answering from what
        is loaded while the block refills a recovered index: a question never loads one half refilled."""
        with self._loading:
            self._holding = recover() and self.current is not None
        try:
            yield
        finally:
            self._holding = False

    @contextmanager
    def idle(self) -> Iterator[None]:
        """No load runs while the block does (one under way finishes first)."""
        with self._loading:
            yield

    def refresh(self, only_if_loaded: bool = False) -> None:
        """After a sync: load the new generation (with `only_if_loaded`, only when one is loaded already)."""
        if self.current is not None or not only_if_loaded:
            self.searcher()

    def rank(self) -> Rank:
        searcher = self.searcher(wait=False)
        return lambda query, scope, floor: self._search(searcher, query, scope, floor)

    def titles(self, scope: frozenset[str]) -> list[str]:
        return self.searcher().corpus.titles(scope)

    def _search(self, searcher: Searcher, query: np.ndarray, scope: Iterable[str], floor: float) -> list[Hit]:
        try:
            return searcher.search(query, scope, floor)
        except IndexChanged as exc:
            # Another process re-indexed since the corpus answering was loaded: search the generation it
            # left. This question waits for that load (one under way in the background included): the
            # re-indexed document's new text may be its answer. Questions that hit nothing re-indexed
            # never wait. Should the generation move again meanwhile, keep the hits still valid.
            log.info("%s; searching the new generation", exc)
            try:
                return self._fresher_searcher(searcher).search(query, scope, floor)
            except IndexChanged as again:
                log.warning("%s; answering from the hits still valid", again)
                return again.hits

    def searcher(self, wait: bool = True) -> Searcher:
        """The searcher of the store's current generation, loading it when it moved.

        With `wait` False (answering), a big corpus's new generation loads in a background thread
        while questions are answered from the one loaded: 3–7 s at 1M fragments would otherwise stall
        every question. That is safe because the old corpus is then distrusted: its cache of fragment
        text is dropped, so every hit's text is read from the store when shown and dropped when its row
        was re-indexed, removed or narrowed since the load (IndexChanged).
        """
        current = self.current
        if wait or current is None or len(current.corpus.ids) < BACKGROUND_RELOAD_ROWS:
            with self._loading:
                return self._reload_locked()
        if not self._loading.acquire(blocking=False):
            # A load is under way (in the background, or a sync's): answer from what is loaded, checked.
            self._distrust_if_stale(current)
            return current
        handed_over = False  # once the thread has started, it releases `_loading`
        try:
            try:
                generation = self.index.generation()
            except VerbatimError as exc:  # as `_reload_locked`: answer from what is loaded; the next question re-syncs
                log.warning("the index can't be read, answering from the documents loaded until it is rebuilt: %s", exc)
                self._on_unreadable()
                generation = current.corpus.generation
            if generation == current.corpus.generation:
                self._attach_approximate(current)  # one built since, by this process or another
                return current
            current.corpus.distrust()
            if time.monotonic() - self._load_failed_at < RELOAD_RETRY_SECONDS:
                return current  # the last load failed just now: don't start another multi-second one per question
            threading.Thread(target=self._reload_in_background, name="verbatim-reload", daemon=True).start()
            handed_over = True
            return current
        finally:
            if not handed_over:
                self._loading.release()

    def _distrust_if_stale(self, searcher: Searcher) -> None:
        try:
            if self.index.generation() != searcher.corpus.generation:
                searcher.corpus.distrust()
        except VerbatimError:
            searcher.corpus.distrust()

    def _fresher_searcher(self, used: Searcher | None) -> Searcher:
        """After a hit was found re-indexed: the generation a load under way brings (waited for, never loaded
        twice), or the current one loaded now."""
        with self._loading:
            if self.current is not None and self.current is not used:
                return self.current  # a load landed while this question searched
            return self._reload_locked()

    def _reload_in_background(self) -> None:
        """Runs with `_loading` held by the thread that started it; releases it when done."""
        try:
            started = time.perf_counter()
            self._reload_locked()
            log.info("loaded the new index generation in the background in %.1f s", time.perf_counter() - started)
        except Exception:
            self._load_failed_at = time.monotonic()
            log.exception("loading the new index generation failed; answering from the one loaded")
        finally:
            self._loading.release()

    def _reload_locked(self) -> Searcher:
        """Load the current generation if it moved (the caller holds `_loading`)."""
        if self._holding and self.current is not None:
            return self.current
        try:
            generation = self.index.generation()
            if self.current is None or self.current.corpus.generation != generation:
                self.current = Searcher(self.index.load())
                self._side_file_seen = None
            self._attach_approximate(self.current)
        except (IndexFileError, StoreUnavailable) as exc:
            if self.current is None:
                raise
            # The documents loaded were checked when loaded; the next question re-syncs, which rebuilds.
            log.warning("the index can't be read, answering from the documents loaded until it is rebuilt: %s", exc)
            self._on_unreadable()
        return self.current

    def _attach_approximate(self, searcher: Searcher) -> None:
        """Use the approximate index saved for this generation, once it appears (another process may build it)."""
        path = side_file(self.index, searcher)
        if path is None or searcher.approximate is not None:
            return
        try:
            info = path.stat()
        except OSError:
            return
        if self._side_file_seen == (info.st_mtime_ns, info.st_size):
            return  # tried already: a stat per question, not a read
        self._side_file_seen = (info.st_mtime_ns, info.st_size)
        corpus = searcher.corpus
        searcher.approximate = approximate.Approximate.load(path, corpus.generation, approximate.ids_digest(corpus.ids))
