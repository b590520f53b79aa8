"""The searchable knowledge base: a store's index kept in line with the folder, and search over it.

KnowledgeBase           what bot/ and the pipeline use: sync, retrieve, titles
 ├── Indexer            keeps the index in line with the folder: sync, one indexer, the approximate index
 │                      (core.retrieval.indexer)
 └── search             serves questions, one interface (`rank`) for two ways (core.retrieval.loading):
      ├── LoadedSearch      the store's current generation loaded and ranked in memory (SQLite)
      └── DatabaseSearch    ranked where the vectors are (PostgreSQL + pgvector); nothing is loaded

The scopes and how a question is cleaned are core.common.questions', imported here for the surfaces.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

import numpy as np

from core.common.errors import VerbatimError
from core.common.questions import SCOPES
from core.common.settings import Settings
from core.common.values import Document, Hit, text_hash
from core.ingest import Progress, SyncReport
from core.retrieval.choosing import settled, suggestion
from core.retrieval.indexer import Indexer
from core.retrieval.loading import DatabaseSearch, LoadedSearch, Search
from core.retrieval.search import Searcher
from core.store import Store, open_store
from core.vectors.embeddings import CachedEmbedder, Embedder, make_embedder

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Retrieval:
    """The hits for one question, with the time spent embedding and ranking."""

    hits: list[Hit]
    embed_ms: float
    search_ms: float


class KnowledgeBase:
    """Syncs the store's index with the folder (`Indexer`) and searches the generation it holds (`Search`).

    A store that ranks itself (PostgreSQL: `index.searching()`) is searched where it is, always at its
    current generation; nothing is loaded to answer. Otherwise the generation is loaded (`LoadedSearch`).
    """

    def __init__(self, settings: Settings, embedder: Embedder | None = None, store: Store | None = None) -> None:
        self.store = store or open_store(settings.data_dir, settings.database_url, settings.database_wait)
        sample: dict[str, Document] = {}  # documents read to settle the embedder: the first sync reuses them
        if embedder is None:  # an unset VERBATIM_EMBEDDER is settled by the documents' language
            settings, sample = settled(settings, self.store)
        self.settings = settings
        self._model = embedder or make_embedder(settings)
        self._languages: tuple[int, tuple[str, ...]] | None = None  # (generation, the documents' languages)
        self.embedder = CachedEmbedder(self._model, stored=self._stored_vectors)
        index = self.store.index
        self.loaded = LoadedSearch(index, on_unreadable=lambda: self.indexer.due_now())
        ranking = index.searching()
        self.search: Search = self.loaded if ranking is None else DatabaseSearch(index, ranking)
        self.indexer = Indexer(settings, index, self._model, self.loaded, SCOPES.values(), sample)

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

    def retrieve(self, question: str, scope: frozenset[str], floor: float) -> Retrieval:
        """Embed the question and rank the fragments the scope may read that are at least `floor` similar (the
        answer policy's `min_similarity`, for the pipeline)."""
        self._sync_first()
        self.indexer.resync_if_due()  # in a thread of its own: this question is answered from the index in use
        rank = self.search.rank()
        started = time.perf_counter()
        query = self.embedder.embed_queries([question])[0]
        embedded = time.perf_counter()
        hits = rank(query, scope, floor)
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
