"""What a store does, as protocols (the engines in core.store.sqlite and core.store.postgres implement them):
the index, the searching index, the run log, the bots' shared state, and the Store that bundles them."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import numpy as np

from core.common.values import PER_DOCUMENT, TOP_K, Fragment, Hit, LogRecord
from core.store.corpus import Corpus
from core.store.records import Disk, DocumentRecord, KnownDocument, Logged, Unreferenced

if TYPE_CHECKING:
    from core.common.values import Document
    from core.store.pg_search import Method

# Slack wants an event acknowledged within 3 s, and the store is asked about it before the acknowledgement:
# a state call on that path waits at most this long for a connection, and fails in time for Slack's redelivery.
ACK_WAIT = 2.0


class IndexStore(Protocol):
    """Documents, their fragments and vectors; rebuildable from the folder at any time."""

    notice: str | None  # set when a damaged index was moved aside and started anew

    @property
    def approximate_path(self) -> Path | None:
        """Where the approximate index of the loaded corpus is saved (see core.vectors.approximate); None when the
        store keeps none (it ranks in the database)."""
        ...

    def searching(self) -> SearchingIndex | None:
        """The store's own ranking, when it ranks where the vectors are (PostgreSQL); None when the corpus
        is loaded and searched in memory."""
        ...

    def damaged_copies(self) -> list[Path]:
        """Damaged copies of the index set aside beside it (`*.corrupt-*`), for `verbatim sweep`."""
        ...

    def disk(self) -> Disk | None:
        """The disk the index is written to, for a sync to check it has room (`core.ingest.space`); None when it is
        not this machine's (PostgreSQL) or can't be told."""
        ...

    def dimension(self) -> int | None:
        """The length of the stored vectors; None before any is stored."""
        ...

    def sync_problem(self) -> str | None:
        """Why the last sync of the folder failed, as a sentence for `status`; None when it succeeded."""
        ...

    def set_sync_problem(self, problem: str | None) -> None:
        """Remember why a sync failed (None: it succeeded), for every process on the store to show."""
        ...

    def generation(self) -> int:
        """A number that changes whenever the indexed content changes (any process, any writer)."""
        ...

    def recover(self) -> bool:
        """Reopen when the file was deleted, replaced or damaged since opened (a damaged one moved aside,
        a notice set); True when it did, and the next sync must refill the index."""
        ...

    def load(self) -> Corpus:
        """Every indexed fragment and its vector, for the search."""
        ...

    def sole_indexer(self, wait: bool = True) -> AbstractContextManager[bool]:
        """Hold the right to index while the block runs; yields False, without waiting, when another
        process holds it (with `wait` False). One process on one file has it always."""
        ...

    def embedder_id(self) -> str | None: ...

    def folder(self) -> str | None:
        """The knowledge folder (resolved path) the index was last synced with; None before the first sync."""
        ...

    def set_folder(self, folder: str) -> None: ...

    def reset(self, embedder_id: str) -> None:
        """Forget every document: the vectors of another model mean nothing to this one."""
        ...

    def known(self) -> dict[str, KnownDocument]: ...

    def vectors_for(self, hashes: Sequence[str]) -> dict[str, np.ndarray]:
        """Vectors already stored for these fragment hashes: unchanged text is never embedded twice."""
        ...

    def text_vectors(self, hashes: Sequence[str]) -> dict[str, np.ndarray]:
        """Stored vectors of texts the answerers score (sentences in context), by `text_hash`."""
        ...

    def put_text_vectors(self, items: Sequence[tuple[str, np.ndarray]]) -> None: ...

    def mark_indexing(self, document: Document) -> None:
        """Start writing a new version of the document (staged, invisible to readers until `commit`)."""
        ...

    def stage(self, path: str, fragments: Sequence[Fragment], hashes: Sequence[str], vectors: np.ndarray) -> None:
        """Add one batch of the new version's fragments; readers go on seeing the old version."""
        ...

    def commit(self, document: Document, count: int, replaces: str | None = None) -> None:
        """Swap the `count` staged fragments in, in one transaction: readers see the old or the new, never neither.
        `replaces` names the document's path before it was renamed: it is removed in the same transaction."""
        ...

    def abort(self, path: str) -> None:
        """Undo `mark_indexing` after a failure: the staged batches go, the previous version stays searchable."""
        ...

    def fail(self, path: str, sha256: str, size: int, reason: str) -> None:
        """Record a document that can't be read; its old fragments stop being quoted."""
        ...

    def remove(self, paths: Sequence[str]) -> None:
        """Documents gone from the folder: their fragments go, their register rows stay, marked `removed`."""
        ...

    def languages(self) -> dict[str, int]:
        """Indexed documents per language code ("" for those whose language couldn't be told), most first."""
        ...

    def inherit_language(self, language: str) -> None:
        """Give the indexed documents whose language couldn't be told this one (the folder's main language)."""
        ...

    def register(self) -> list[DocumentRecord]:
        """Every document the index has seen, removed and failed ones included, by path."""
        ...

    def unreferenced(self) -> Unreferenced:
        """Fragments, vectors and rows that nothing refers to; nothing is changed."""
        ...

    def drop_unreferenced(self) -> Unreferenced:
        """Delete what `unreferenced` finds, in one transaction; what was deleted."""
        ...

    def stats(self) -> tuple[int, float, int]:
        """Fragment count, mean and max length in characters."""
        ...

    def close(self) -> None: ...


class SearchingIndex(Protocol):
    """An index that ranks in the store itself (PostgreSQL + pgvector), so no process loads every vector
    to answer; `KnowledgeBase` searches through it when the store's index offers it (`searching()`)."""

    def search(
        self, query: np.ndarray, scope: Iterable[str], floor: float, k: int = TOP_K, per_document: int = PER_DOCUMENT
    ) -> list[Hit]:
        """The same hits as `Searcher.search` on the loaded corpus: rows outside `scope` never scored."""
        ...

    def method(self) -> Method:
        """How its searches keep their recall on this server (pgvector's version decides), as `status` says."""
        ...


class RunLogStore(Protocol):
    """Append-only: every question and its answer, and feedback on answers."""

    def record(self, entry: LogRecord, surface: str, conversation: str | None) -> None:
        """Append an answer; the conversation key is kept only hashed."""
        ...

    def feedback(self, answer_id: str, value: str, surface: str, who: str | None = None) -> bool:
        """Record 👍 (`up`) or 👎 (`down`); False when the answer is unknown."""
        ...

    def history(self, conversation: str, limit: int = 3) -> list[Logged]:
        """The conversation's last `limit` answers, oldest first."""
        ...

    def answer(self, answer_id: str) -> Logged | None:
        """A logged answer, for showing again."""
        ...

    def tail(self, n: int = 10) -> list[Logged]:
        """The last `n` entries, oldest first (`verbatim log`)."""
        ...

    def since(self, at: str) -> list[Logged]:
        """Every entry logged at or after `at` (ISO 8601 UTC), oldest first, with its feedback counts."""
        ...


class StateStore(Protocol):
    """The bots' memory that must outlive a restart and be shared by every process on the store."""

    def hashed(self, key: str) -> str:
        """`key` (a conversation key, a user id) as the store keeps it: HMAC-SHA256 under the installation's
        secret, the same in every process on the store, and not reversible without that secret."""
        ...

    def first_time(self, key: str, ttl: float = 3600.0) -> bool:
        """True exactly once per key within `ttl` seconds, whichever process asks."""
        ...

    def link(self, key: str, conversation: str) -> None:
        """Remember that `key` (e.g. a bot message) belongs to `conversation`."""
        ...

    def linked(self, key: str, wait: float | None = None) -> str | None:
        """The conversation `key` was linked to, or None; `wait` bounds the wait for a connection (`ACK_WAIT`
        on Slack's acknowledgement path), else the store's own."""
        ...

    def take_slot(self, key: str, limit: int, window: float = 60.0) -> float:
        """0 and a slot used when `key` made fewer than `limit` requests in `window` s; else the wait."""
        ...

    def stamped(self, key: str) -> float | None:
        """When `key` was last claimed (seconds since the epoch); None when never."""
        ...

    def claim(self, key: str, every: float, now: float) -> bool:
        """True, and `key` stamped `now`, when it was never claimed or last claimed `every` s before `now`
        or earlier; one process wins when several ask at once."""
        ...


class Store(Protocol):
    where: str  # what a person reads: the data folder, or "the PostgreSQL database at host:port"

    @property
    def index(self) -> IndexStore: ...

    @property
    def runlog(self) -> RunLogStore: ...

    @property
    def state(self) -> StateStore: ...

    def close(self) -> None: ...
