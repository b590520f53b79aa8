"""The searchable knowledge base: the index kept in line with the folder, and search over it."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from core.embeddings import CachedEmbedder, Embedder
from core.errors import VerbatimError
from core.index import Hit, Index, SyncReport
from core.search import Searcher
from core.settings import Settings, make_embedder

log = logging.getLogger(__name__)

# A scope names what a surface may read; customers see public documents only.
SCOPES: dict[str, frozenset[str]] = {
    "public": frozenset({"public"}),
    "internal": frozenset({"public", "internal"}),
}
MAX_QUESTION_CHARS = 2000


def scope_of(name: str) -> frozenset[str]:
    try:
        return SCOPES[name]
    except KeyError:
        raise VerbatimError(f"The audience must be one of {', '.join(SCOPES)}, not {name!r}.") from None


@dataclass(frozen=True)
class Retrieval:
    """The hits for one question, with the time spent embedding and ranking."""

    hits: list[Hit]
    embed_ms: float
    search_ms: float


class KnowledgeBase:
    """Opens (or rebuilds) the index, syncs it with the folder and answers searches."""

    def __init__(self, settings: Settings, embedder: Embedder | None = None) -> None:
        self.settings = settings
        self._model = embedder or make_embedder(settings)
        self.embedder = CachedEmbedder(self._model)
        self.index, self.notice = Index.open_or_rebuild(settings.data_dir)
        self._lock = threading.Lock()
        self._searcher: Searcher | None = None
        self._synced_at = 0.0
        self.last_report: SyncReport | None = None

    def sync(self, progress: Callable[[int, int, str], None] | None = None) -> SyncReport:
        """Re-index what changed in the knowledge folder and reload the search matrix if needed."""
        with self._lock:
            # Indexing goes straight to the model: fragments embedded once would only crowd the cache.
            report = self.index.sync(Path(self.settings.knowledge_dir), self._model, progress)
            if report.changed or self._searcher is None:
                self._searcher = Searcher(self.index.load())
            self.last_report = report
            self._synced_at = time.monotonic()
            return report

    def _resync_if_due(self) -> None:
        """Pick up documents dropped into the folder while a bot runs; unchanged files cost a hash each."""
        every = self.settings.resync_seconds
        if not every or time.monotonic() - self._synced_at < every or self._lock.locked():
            return
        try:
            self.sync()
        except VerbatimError as exc:  # keep answering from the index as it stands
            log.warning("re-reading the knowledge folder failed: %s", exc)

    @property
    def searcher(self) -> Searcher:
        if self._searcher is None:
            self.sync()
        assert self._searcher is not None
        return self._searcher

    def retrieve(self, question: str, scope: frozenset[str], floor: float | None = None) -> Retrieval:
        """Embed the question and rank the fragments the scope may read."""
        self._resync_if_due()
        searcher = self.searcher
        started = time.perf_counter()
        query = self.embedder.embed([question])[0]
        embedded = time.perf_counter()
        hits = searcher.search(query, scope, self.settings.min_similarity if floor is None else floor)
        done = time.perf_counter()
        return Retrieval(hits, (embedded - started) * 1000, (done - embedded) * 1000)

    def close(self) -> None:
        self.index.close()
