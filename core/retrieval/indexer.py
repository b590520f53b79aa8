"""Keeping a store's index in line with the knowledge folder: sync, resync, one indexer, the approximate index.

The searches it serves are `core.retrieval.loading`'s (`LoadedSearch`); this module only writes the index
and tells the loaded search when there is a new generation to load. A resync runs in a thread of its own,
beside the questions, which are answered from the generation in use until each document's new version is
swapped in (SQLite's WAL: readers never wait for the writer). One that fails is tried again later and later
(exponential backoff), and why it failed is kept in the store for `status` to say, once.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from core.common.errors import VerbatimError
from core.common.settings import Settings
from core.common.values import Document
from core.ingest import Progress, SyncReport, sync
from core.retrieval.loading import LoadedSearch, side_file
from core.store import IndexStore
from core.vectors import approximate
from core.vectors.embeddings import Embedder

log = logging.getLogger("core.retrieval.knowledge")

# After a failed resync the next waits VERBATIM_RESYNC_SECONDS (at least RETRY_FIRST_SECONDS), then twice as
# long after each failure in a row, up to RETRY_MAX_SECONDS (or VERBATIM_RESYNC_SECONDS, when longer): a full
# disk or a missing folder is not read every second.
RETRY_FIRST_SECONDS = 1.0
RETRY_MAX_SECONDS = 900.0
STOP_WAIT_SECONDS = 10.0  # closing waits this long for a resync to stop at its next file


class ResyncStopped(Exception):
    """Raised inside a resync when the knowledge base closes: the sync drops what it staged and ends."""


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
        sample: Mapping[str, Document] | None = None,
    ) -> None:
        self.settings, self.index, self.model, self.loaded = settings, index, model, loaded
        self.sample = dict(sample or {})  # documents already parsed (the embedder's choice): the first sync's
        self.scopes = list(scopes)  # an approximate index is built for each big enough
        self.in_database = index.searching() is not None
        self.lock = threading.Lock()  # one sync at a time
        self.synced_once = False  # whether this process has synced (or seen another process sync) yet
        self.synced_at = 0.0  # monotonic: when the folder was last read, for the next resync
        self.last_sync: float | None = None  # when this process last read the folder (epoch seconds)
        self.clock: Callable[[], float] = time.monotonic  # when resyncs are due (a test's clock may stand in)
        self.failures = 0  # resyncs failed in a row
        self.retry_at = 0.0  # monotonic: after a failed resync, the next not before this
        self.problem: str | None = None  # why the last resync failed, as said in the log
        self._starting = threading.Lock()  # two questions finding a resync due start one
        self._thread: threading.Thread | None = None  # the resync under way
        self._closing = threading.Event()

    def due_now(self) -> None:
        """The index can't be read: the next question re-syncs, which rebuilds it."""
        self.synced_at = float("-inf")
        self.retry_at = 0.0

    def sync(self, progress: Progress | None = None, wait: bool = True, replace: bool = False) -> SyncReport:
        """Re-index what changed in the knowledge folder and reload the search matrix if needed.

        On a store shared by replicas (PostgreSQL) one process indexes at a time: with `wait`
        False, a sync finding another one at work only reloads the generation it leaves. `replace` lets
        another folder, or one that removes most of the index, through (`core.ingest.guard`).
        """
        # The documents parsed to choose the embedder serve the first sync only, and only one that indexes: held
        # no longer than that (a replica that never indexes drops them at once).
        sample, self.sample = self.sample, {}
        with self.index.sole_indexer(wait) as mine:
            if mine:
                return self._sync(progress, replace, sample)
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
            self.synced_at = self.clock()  # the next resync is at its time, not at every question
        return self.index.stats()[0]

    def resync_if_due(self) -> None:
        """Pick up documents dropped into the folder while a bot runs, in a thread of its own: the question that
        finds it due is answered from the index in use, never waiting for it. Unchanged files cost a hash each."""
        every = self.settings.resync_seconds
        now = self.clock()
        if not every or now - self.synced_at < every or now < self.retry_at or self._closing.is_set():
            return
        with self._starting:
            if self.lock.locked() or self.resyncing:
                return  # a sync is under way: an admin's, or the last resync
            self._thread = threading.Thread(target=self._resync, name="verbatim-resync", daemon=True)
            self._thread.start()

    @property
    def resyncing(self) -> bool:
        """Whether a resync is under way."""
        return self._thread is not None and self._thread.is_alive()

    def wait_for_resync(self, timeout: float | None = None) -> None:
        """Until the resync under way, if any, is over."""
        thread = self._thread
        if thread is not None:
            thread.join(timeout)

    def stop(self) -> None:
        """No resync from now on; one under way stops at its next file, its staged batches dropped."""
        self._closing.set()
        self.wait_for_resync(STOP_WAIT_SECONDS)

    def _resync(self) -> None:
        try:
            self.sync(self._unless_closing, wait=False)  # never waits for another replica's indexing
        except ResyncStopped:
            log.info("the resync stopped: the knowledge base is closing")
            return
        except VerbatimError as exc:  # keep answering from the index as it stands
            self._failed(str(exc))
            return
        except Exception as exc:  # a bug or a store error: said, and tried again later, never every question
            log.exception("re-reading the knowledge folder failed")
            self._failed(f"Re-reading the knowledge folder failed ({type(exc).__name__}: {exc}).")

    def _failed(self, problem: str) -> None:
        """A resync failed: said once (a repeat is logged at debug), and the next one waits twice as long."""
        every = self.settings.resync_seconds
        wait = min(max(every, RETRY_FIRST_SECONDS) * 2 ** min(self.failures, 20), max(every, RETRY_MAX_SECONDS))
        self.failures += 1
        self.retry_at = self.clock() + wait
        if problem != self.problem:
            log.warning("re-reading the knowledge folder failed: %s", problem)
        else:
            log.debug(
                "re-reading the knowledge folder failed again (%d in a row); next try in %.0f s", self.failures, wait
            )
        self.problem = problem

    def _unless_closing(self, done: int, total: int, name: str) -> None:
        if self._closing.is_set():
            raise ResyncStopped(name)

    def _note(self, problem: str | None) -> None:
        """Keep why the last sync failed in the store (None: it succeeded), for `status` in any process."""
        try:
            if problem is not None or self.index.sync_problem() is not None:
                self.index.set_sync_problem(problem)
        except VerbatimError as exc:  # a full disk may refuse even this: the log has said it
            log.debug("the sync's outcome can't be kept in the store: %s", exc)

    def _sync(
        self, progress: Progress | None, replace: bool = False, sample: dict[str, Document] | None = None
    ) -> SyncReport:
        with self.lock:
            # A data folder deleted, or an index file overwritten, under a running bot: start it anew,
            # and answer from the documents already loaded until it is full again.
            try:
                with self.loaded.holding(self.index.recover):
                    # Indexing goes straight to the model: fragments embedded once would only crowd the cache.
                    limit = self.settings.max_document_bytes
                    folder = Path(self.settings.knowledge_dir)
                    report = sync(folder, self.index, self.model, progress, limit, replace, sample)
            except VerbatimError as exc:
                self._note(str(exc))
                raise
            self._note(None)
            if self.problem is not None:
                log.info("the knowledge folder is read again (it had failed %d times in a row)", self.failures)
            self.failures, self.retry_at, self.problem = 0, 0.0, None
            self.synced_once = True
            self._refresh()
            report.search = self._build_approximate()
            self.synced_at = self.clock()
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
