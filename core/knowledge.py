"""The searchable knowledge base: a store's index kept in line with the folder, and search over it."""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from core import approximate
from core.embeddings import CachedEmbedder, Embedder
from core.errors import IndexChanged, IndexFileError, StoreUnavailable, VerbatimError
from core.ingest import Progress, SyncReport, sync
from core.retrieval import Hit, Searcher, text_hash
from core.settings import Settings, make_embedder
from core.store import SearchingIndex, Store, open_store

log = logging.getLogger(__name__)

# A scope names what a surface may read; customers see public documents only.
SCOPES: dict[str, frozenset[str]] = {
    "public": frozenset({"public"}),
    "internal": frozenset({"public", "internal"}),
}
MAX_QUESTION_CHARS = 2000
# From this many fragments, a new generation is loaded in the background while questions are answered from
# the one loaded (benchmarks/scale.py: a load takes 0.4–0.5 s at 100,000 fragments, 3.4–6.8 s at 1M).
BACKGROUND_RELOAD_ROWS = 50_000
RELOAD_RETRY_SECONDS = 30.0  # after a background load failed (memory, a damaged file), before the next try


def scope_of(name: str) -> frozenset[str]:
    try:
        return SCOPES[name]
    except KeyError:
        raise VerbatimError(f"The audience must be one of {', '.join(SCOPES)}, not {name!r}.") from None


def clean_question(text: str) -> str:
    """Whitespace folded; raises VerbatimError for an empty or over-long question."""
    question = " ".join(text.split())
    if not question:
        raise VerbatimError("The question is empty.")
    if len(question) > MAX_QUESTION_CHARS:
        raise VerbatimError(f"The question is {len(question):,} characters long; the limit is {MAX_QUESTION_CHARS:,}.")
    return question


@dataclass(frozen=True)
class Retrieval:
    """The hits for one question, with the time spent embedding and ranking."""

    hits: list[Hit]
    embed_ms: float
    search_ms: float


class KnowledgeBase:
    """Syncs the store's index with the folder and searches the generation it holds.

    Any process on the same store may re-index: every search first compares the store's
    generation with the loaded one and reloads when it moved, so no process answers from
    documents the index no longer holds. A store that ranks itself (PostgreSQL: a `SearchingIndex`)
    is searched where it is, always at its current generation; nothing is loaded to answer.
    """

    def __init__(self, settings: Settings, embedder: Embedder | None = None, store: Store | None = None) -> None:
        self.settings = settings
        self._model = embedder or make_embedder(settings)
        self.store = store or open_store(settings.data_dir, settings.database_url, settings.database_wait)
        self.embedder = CachedEmbedder(self._model, stored=self._stored_vectors)
        self._lock = threading.Lock()  # one sync at a time
        self._loading = threading.Lock()  # one reload at a time; answering never waits for a sync
        self._searcher: Searcher | None = None
        self._synced_at = 0.0
        self.last_sync: float | None = None  # when this process last read the folder (epoch seconds)
        self._holding = False  # set while a recovered index is refilled: keep searching what is loaded
        self._side_file_seen: tuple[int, int] | None = None  # the approximate index file last tried (mtime, size)
        self._synced_once = False  # whether this process has synced (or seen another process sync) yet
        self._load_failed_at = float("-inf")  # when a background load last failed (monotonic seconds)

    def _stored_vectors(self, texts: list[str]) -> dict[str, np.ndarray]:
        """Sentence vectors embedded at index time, for the texts the store holds (by model: a reset clears them)."""
        keys = {text_hash(t): t for t in texts}
        try:
            found = self.store.index.text_vectors(list(keys))
        except VerbatimError:  # a read problem costs model calls, never the answer
            return {}
        return {keys[k]: v for k, v in found.items()}

    @property
    def notice(self) -> str | None:
        """Set when a damaged index was moved aside and rebuilt."""
        return self.store.index.notice

    def sync(self, progress: Progress | None = None, wait: bool = True) -> SyncReport:
        """Re-index what changed in the knowledge folder and reload the search matrix if needed.

        On a store shared by replicas (PostgreSQL) one process indexes at a time: with `wait`
        False, a sync finding another one at work only reloads the generation it leaves.
        """
        with self.store.index.sole_indexer(wait) as mine:
            if mine:
                return self._sync(progress)
        with self._lock:
            self._synced_once = True
            self._reload_if_needed()
            return SyncReport()

    def from_index(self) -> int:
        """Load what is indexed without reading the folder (one that can't be listed); the fragment count.

        0, loading nothing, when the index was built by another embedding model: its vectors can't be searched
        with this one's questions."""
        if self.store.index.embedder_id() != self._model.id:
            return 0
        with self._lock:
            self._synced_once = True
            self._reload_if_needed()
            self._synced_at = time.monotonic()  # the next resync is at its time, not at every question
        return self.store.index.stats()[0]

    def _sync(self, progress: Progress | None) -> SyncReport:
        with self._lock:
            # A data folder deleted, or an index file overwritten, under a running bot: start it anew,
            # and answer from the documents already loaded until it is full again.
            self._holding = self.store.index.recover() and self._searcher is not None
            try:
                # Indexing goes straight to the model: fragments embedded once would only crowd the cache.
                limit = int(self.settings.max_document_mb * 1e6)
                report = sync(Path(self.settings.knowledge_dir), self.store.index, self._model, progress, limit)
            finally:
                self._holding = False
            self._synced_once = True
            self._reload_if_needed()
            report.search = self._build_approximate()
            self._synced_at = time.monotonic()
            self.last_sync = time.time()
            return report

    def _in_store(self) -> SearchingIndex | None:
        """The store's own search, when it ranks where the vectors are."""
        return self.store.index.searching()

    def _reload_if_needed(self) -> None:
        """After a sync: load the new generation, unless the store answers searches itself and nothing is loaded."""
        if self._searcher is not None or self._in_store() is None:
            self._reload_if_stale()

    def _reload_if_stale(self, wait: bool = True) -> Searcher:
        """The searcher of the store's current generation, loading it when it moved.

        With `wait` False (answering), a big corpus's new generation loads in a background thread
        while questions are answered from the one loaded: 3–7 s at 1M fragments would otherwise stall
        every question. That is safe because the old corpus is then distrusted: its cache of fragment
        text is dropped, so every hit's text is read from the store when shown and dropped when its row
        was re-indexed, removed or narrowed since the load (IndexChanged).
        """
        current = self._searcher
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
                generation = self.store.index.generation()
            except VerbatimError as exc:  # as `_reload_locked`: answer from what is loaded; the next question re-syncs
                log.warning("the index can't be read, answering from the documents loaded until it is rebuilt: %s", exc)
                self._synced_at = float("-inf")
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
            if self.store.index.generation() != searcher.corpus.generation:
                searcher.corpus.distrust()
        except VerbatimError:
            searcher.corpus.distrust()

    def _fresher_searcher(self, used: Searcher | None) -> Searcher:
        """After a hit was found re-indexed: the generation a load under way brings (waited for, never loaded
        twice), or the current one loaded now."""
        with self._loading:
            if self._searcher is not None and self._searcher is not used:
                return self._searcher  # a load landed while this question searched
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
        if self._holding and self._searcher is not None:
            return self._searcher
        try:
            generation = self.store.index.generation()
            if self._searcher is None or self._searcher.corpus.generation != generation:
                self._searcher = Searcher(self.store.index.load())
                self._side_file_seen = None
            self._attach_approximate(self._searcher)
        except (IndexFileError, StoreUnavailable) as exc:
            if self._searcher is None:
                raise
            # The documents loaded were checked when loaded; the next question re-syncs, which rebuilds.
            log.warning("the index can't be read, answering from the documents loaded until it is rebuilt: %s", exc)
            self._synced_at = float("-inf")
        return self._searcher

    def _side_file(self, searcher: Searcher) -> Path | None:
        """The approximate index's file when the corpus is big enough for one and the store keeps one (SQLite)."""
        path = self.store.index.approximate_path
        if path is None or len(searcher.corpus.ids) < approximate.APPROXIMATE_ROWS:
            return None
        return path

    def _attach_approximate(self, searcher: Searcher) -> None:
        """Use the approximate index saved for this generation, once it appears (another process may build it)."""
        path = self._side_file(searcher)
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

    def _build_approximate(self) -> str:
        """After a sync: build and save the approximate index when the loaded generation has none; its summary."""
        searcher = self._searcher
        path = self._side_file(searcher) if searcher is not None else None
        if searcher is None or path is None:
            return ""
        if searcher.approximate is None:
            corpus = searcher.corpus
            scopes = [searcher.scope_range(scope) for scope in SCOPES.values()]
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

    def _resync_if_due(self) -> None:
        """Pick up documents dropped into the folder while a bot runs; unchanged files cost a hash each."""
        every = self.settings.resync_seconds
        if not every or time.monotonic() - self._synced_at < every or self._lock.locked():
            return
        try:
            self.sync(wait=False)  # a question never waits for another replica's indexing
        except VerbatimError as exc:  # keep answering from the index as it stands
            log.warning("re-reading the knowledge folder failed: %s", exc)

    @property
    def searcher(self) -> Searcher:
        """The search over the store's current generation (syncing first if nothing is loaded)."""
        if self._searcher is None:
            self.sync()
        return self._reload_if_stale()

    def retrieve(self, question: str, scope: frozenset[str], floor: float | None = None) -> Retrieval:
        """Embed the question and rank the fragments the scope may read."""
        self._resync_if_due()
        in_store = self._in_store()
        if in_store is not None and not self._synced_once:
            self.sync(wait=False)  # another replica indexing: search what it has committed so far
        searcher = self._answering_searcher() if in_store is None else None
        started = time.perf_counter()
        query = self.embedder.embed([question])[0]
        embedded = time.perf_counter()
        floor = self.settings.min_similarity if floor is None else floor
        if in_store is not None:
            hits = in_store.search(query, scope, floor)
        elif searcher is not None:
            try:
                hits = searcher.search(query, scope, floor)
            except IndexChanged as exc:
                # Another process re-indexed since the corpus answering was loaded: search the generation it
                # left. This question waits for that load (one under way in the background included): the
                # re-indexed document's new text may be its answer. Questions that hit nothing re-indexed
                # never wait. Should the generation move again meanwhile, keep the hits still valid.
                log.info("%s; searching the new generation", exc)
                try:
                    hits = self._fresher_searcher(searcher).search(query, scope, floor)
                except IndexChanged as again:
                    log.warning("%s; answering from the hits still valid", again)
                    hits = again.hits
        done = time.perf_counter()
        return Retrieval(hits, (embedded - started) * 1000, (done - embedded) * 1000)

    @property
    def loaded_generation(self) -> int | None:
        """The generation questions are answered from now (None before the first load); never loads."""
        searcher = self._searcher
        return None if searcher is None else searcher.corpus.generation

    def _answering_searcher(self) -> Searcher:
        """As `searcher`, but a big corpus's new generation never makes the question wait for its load."""
        if self._searcher is None:
            self.sync()
        return self._reload_if_stale(wait=False)

    def titles(self, scope: frozenset[str]) -> list[str]:
        """The titles of the documents a scope may read, for help texts that name no one product."""
        if self._in_store() is None:
            return self.searcher.corpus.titles(scope)
        if not self._synced_once:
            self.sync(wait=False)
        # What a search can find, in the corpus's order (public first, by path), without loading it.
        searched = [r for r in self.store.index.register() if r.state in ("indexed", "indexing") and r.fragments]
        searched.sort(key=lambda r: (r.audience != "public", r.path.encode()))
        return list(dict.fromkeys(r.title for r in searched if r.audience in scope))

    def close(self) -> None:
        with self._loading:  # a background reload finishes first: it reads through the store's connections
            self.store.close()
