"""The searchable knowledge base: a store's index kept in line with the folder, and search over it.

KnowledgeBase           what bot/ and the pipeline use: sync, retrieve, titles
 ├── Indexer            keeps the index in line with the folder: sync, one indexer, the approximate index
 └── search             serves questions, one interface (`rank`) for two ways:
      ├── LoadedSearch      the store's current generation loaded and ranked in memory (SQLite)
      └── DatabaseSearch    ranked where the vectors are (PostgreSQL + pgvector); nothing is loaded
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from core.common.errors import IndexChanged, IndexFileError, StoreUnavailable, VerbatimError
from core.common.settings import Settings
from core.common.values import Hit, text_hash
from core.ingest import Progress, SyncReport
from core.retrieval.choosing import settled, suggestion
from core.retrieval.indexer import Indexer, side_file
from core.retrieval.search import Searcher
from core.store import IndexStore, SearchingIndex, Store, open_store
from core.vectors import approximate
from core.vectors.embeddings import CachedEmbedder, Embedder, make_embedder

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


# Terminal escape sequences (an arrow key typed where no line editing runs: "\x1b[D") and other control
# characters: never part of a question, and never stored in the run log or shown in the report.
_ESCAPES = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|[@-Z\\-_])|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def clean_question(text: str) -> str:
    """Control characters dropped and whitespace folded; raises VerbatimError for an empty or over-long
    question."""
    question = " ".join(_ESCAPES.sub("", text).split())
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


class KnowledgeBase:
    """Syncs the store's index with the folder (`Indexer`) and searches the generation it holds (`Search`).

    A store that ranks itself (PostgreSQL: `index.searching()`) is searched where it is, always at its
    current generation; nothing is loaded to answer. Otherwise the generation is loaded (`LoadedSearch`).
    """

    def __init__(self, settings: Settings, embedder: Embedder | None = None, store: Store | None = None) -> None:
        self.store = store or open_store(settings.data_dir, settings.database_url, settings.database_wait)
        if embedder is None:  # an unset VERBATIM_EMBEDDER is settled by the documents' language
            settings = settled(settings, self.store)
        self.settings = settings
        self._model = embedder or make_embedder(settings)
        self._languages: tuple[int, tuple[str, ...]] | None = None  # (generation, the documents' languages)
        self.embedder = CachedEmbedder(self._model, stored=self._stored_vectors)
        index = self.store.index
        self.loaded = LoadedSearch(index, on_unreadable=lambda: self.indexer.due_now())
        ranking = index.searching()
        self.search: Search = self.loaded if ranking is None else DatabaseSearch(index, ranking)
        self.indexer = Indexer(settings, index, self._model, self.loaded, SCOPES.values())

    def embedder_advice(self) -> str:
        """A sentence when the documents would be read better by another embedder than the index was built with."""
        return suggestion(self.settings, self.store)

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

    @property
    def last_sync(self) -> float | None:
        """When this process last read the folder (epoch seconds)."""
        return self.indexer.last_sync

    def sync(self, progress: Progress | None = None, wait: bool = True, replace: bool = False) -> SyncReport:
        """Re-index what changed in the knowledge folder and reload the search matrix if needed (see `Indexer`);
        `replace` lets another folder, or one that removes most of the index, through."""
        return self.indexer.sync(progress, wait, replace)

    def from_index(self) -> int:
        """Load what is indexed without reading the folder; the fragment count (see `Indexer.from_index`)."""
        return self.indexer.from_index()

    def _sync_first(self) -> None:
        """Before the first search: read the folder, unless another replica is at it (search what it has)."""
        if self.search is self.loaded:
            if self.loaded.current is None:
                self.sync()
        elif not self.indexer.synced_once:
            self.sync(wait=False)  # another replica indexing: search what it has committed so far

    @property
    def searcher(self) -> Searcher:
        """The in-memory search over the store's current generation (syncing first if nothing is loaded)."""
        if self.loaded.current is None:
            self.sync()
        return self.loaded.searcher()

    def _answering_searcher(self) -> Searcher:
        """As `searcher`, but a big corpus's new generation never makes the question wait for its load."""
        if self.loaded.current is None:
            self.sync()
        return self.loaded.searcher(wait=False)

    @property
    def loaded_generation(self) -> int | None:
        """The generation questions are answered from now (None before the first load); never loads."""
        searcher = self.loaded.current
        return None if searcher is None else searcher.corpus.generation

    def retrieve(self, question: str, scope: frozenset[str], floor: float | None = None) -> Retrieval:
        """Embed the question and rank the fragments the scope may read."""
        self._sync_first()
        self.indexer.resync_if_due()  # in a thread of its own: this question is answered from the index in use
        rank = self.search.rank()
        started = time.perf_counter()
        query = self.embedder.embed_queries([question])[0]
        embedded = time.perf_counter()
        hits = rank(query, scope, self.settings.min_similarity if floor is None else floor)
        done = time.perf_counter()
        return Retrieval(hits, (embedded - started) * 1000, (done - embedded) * 1000)

    def document_languages(self) -> tuple[str, ...]:
        """The languages of the indexed documents (ISO codes, most documents first; unknown ones left out)."""
        self._sync_first()
        generation = self.store.index.generation()
        if self._languages is None or self._languages[0] != generation:
            self._languages = (generation, tuple(code for code in self.store.index.languages() if code))
        return self._languages[1]

    def titles(self, scope: frozenset[str]) -> list[str]:
        """The titles of the documents a scope may read, for help texts that name no one product."""
        self._sync_first()
        return self.search.titles(scope)

    def close(self) -> None:
        self.indexer.stop()  # a resync under way stops at its next file
        with self.loaded.idle():  # a background reload finishes first: it reads through the store's connections
            self.store.close()
