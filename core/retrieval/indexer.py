"""Keeping a store's index in line with the knowledge folder: sync, one indexer, the approximate index.

The searches it serves are `core.retrieval.knowledge`'s (`LoadedSearch`); this module only writes the index
and tells the loaded search when there is a new generation to load.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from core.common.errors import VerbatimError
from core.common.settings import Settings
from core.ingest import Progress, SyncReport, sync
from core.retrieval.search import Searcher
from core.store import IndexStore
from core.vectors import approximate
from core.vectors.embeddings import Embedder

if TYPE_CHECKING:
    from core.retrieval.knowledge import LoadedSearch

log = logging.getLogger("core.retrieval.knowledge")


def side_file(index: IndexStore, searcher: Searcher) -> Path | None:
    """The approximate index's file when the corpus is big enough for one and the store keeps one (SQLite)."""
    path = index.approximate_path
    if path is None or len(searcher.corpus.ids) < approximate.APPROXIMATE_ROWS:
        return None
    return path


class Indexer:
    """Keeps the store's index in line with the knowledge folder: one sync at a time in this process, one
    indexer at a time on a shared store, and the approximate index built for the generation loaded."""

    def __init__(
        self,
        settings: Settings,
        index: IndexStore,
        model: Embedder,
        loaded: LoadedSearch,
        scopes: Iterable[frozenset[str]],
    ) -> None:
        self.settings, self.index, self.model, self.loaded = settings, index, model, loaded
        self.scopes = list(scopes)  # an approximate index is built for each big enough
        self.in_database = index.searching() is not None
        self.lock = threading.Lock()  # one sync at a time
        self.synced_once = False  # whether this process has synced (or seen another process sync) yet
        self.synced_at = 0.0  # monotonic: when the folder was last read, for the next resync
        self.last_sync: float | None = None  # when this process last read the folder (epoch seconds)

    def due_now(self) -> None:
        """The index can't be read: the next question re-syncs, which rebuilds it."""
        self.synced_at = float("-inf")

    def sync(self, progress: Progress | None = None, wait: bool = True, replace: bool = False) -> SyncReport:
        """Re-index what changed in the knowledge folder and reload the search matrix if needed.

        On a store shared by replicas (PostgreSQL) one process indexes at a time: with `wait`
        False, a sync finding another one at work only reloads the generation it leaves. `replace` lets
        another folder, or one that removes most of the index, through (`core.ingest.guard`).
        """
        with self.index.sole_indexer(wait) as mine:
            if mine:
                return self._sync(progress, replace)
        with self.lock:
            self.synced_once = True
            self._refresh()
            return SyncReport()

    def from_index(self) -> int:
        """Load what is indexed without reading the folder (one that can't be listed); the fragment count.

        0, loading nothing, when the index was built by another embedding model: its vectors can't be searched
        with this one's questions."""
        if self.index.embedder_id() != self.model.id:
            return 0
        with self.lock:
            self.synced_once = True
            self._refresh()
            self.synced_at = time.monotonic()  # the next resync is at its time, not at every question
        return self.index.stats()[0]

    def resync_if_due(self, sync: Callable[[], object]) -> None:
        """Pick up documents dropped into the folder while a bot runs; unchanged files cost a hash each."""
        every = self.settings.resync_seconds
        if not every or time.monotonic() - self.synced_at < every or self.lock.locked():
            return
        try:
            sync()
        except VerbatimError as exc:  # keep answering from the index as it stands
            log.warning("re-reading the knowledge folder failed: %s", exc)

    def _sync(self, progress: Progress | None, replace: bool = False) -> SyncReport:
        with self.lock:
            # A data folder deleted, or an index file overwritten, under a running bot: start it anew,
            # and answer from the documents already loaded until it is full again.
            with self.loaded.holding(self.index.recover()):
                # Indexing goes straight to the model: fragments embedded once would only crowd the cache.
                limit = int(self.settings.max_document_mb * 1e6)
                report = sync(Path(self.settings.knowledge_dir), self.index, self.model, progress, limit, replace)
            self.synced_once = True
            self._refresh()
            report.search = self._build_approximate()
            self.synced_at = time.monotonic()
            self.last_sync = time.time()
            return report

    def _refresh(self) -> None:
        """After a sync: load the new generation, unless the store answers searches itself and nothing is loaded."""
        self.loaded.refresh(only_if_loaded=self.in_database)

    def _build_approximate(self) -> str:
        """After a sync: build and save the approximate index when the loaded generation has none; its summary."""
        searcher = self.loaded.current
        path = side_file(self.index, searcher) if searcher is not None else None
        if searcher is None or path is None:
            return ""
        if searcher.approximate is None:
            corpus = searcher.corpus
            scopes = [searcher.scope_range(scope) for scope in self.scopes]
            big = [r for r in scopes if r is not None and r[1] - r[0] >= approximate.APPROXIMATE_ROWS]
            try:
                with approximate.building(path) as mine:
                    if not mine:
                        return "exact search until another process has built the approximate index"
                    log.info("building the approximate index over %s fragments", f"{len(corpus.ids):,}")
                    searcher.approximate = approximate.build(corpus.matrix, corpus.generation, corpus.ids, big)
                    searcher.approximate.save(path)
            except OSError as exc:  # this process searches with it all the same; the next sync saves it again
                log.warning("the approximate index can't be saved to %s: %s", path, exc)
                if searcher.approximate is None:
                    return f"exact search: the approximate index can't be built ({exc.strerror})"
        return searcher.approximate.summary()
