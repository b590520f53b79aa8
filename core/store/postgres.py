"""The shared store for several replicas: one PostgreSQL database with pgvector.

Chosen by `VERBATIM_DATABASE_URL=postgresql://…`; it mirrors the SQLite store's semantics
(`core/store/sqlite.py`) so any replica can take any event: seen event ids have a unique key,
rate slots are counted under a per-key advisory lock, the run log is one table for all.

Schema migrations are append-only functions recorded in `_migrations`, applied at start-up
under an advisory lock so two replicas starting together don't both apply them. The vector
column gets its dimension (and its HNSW index) from the first batch embedded, and loses them
again when the embedder changes (`reset`).

Errors from psycopg are converted at the boundary: a database that can't be reached at
start-up is tried again for a while (`VERBATIM_DATABASE_WAIT`), then a `ConfigError` sentence;
one that drops mid-run is a `StoreUnavailable` sentence for that use, and the pool reconnects
on the next.
"""

from __future__ import annotations

import json
import logging
import secrets
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager, suppress
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import numpy as np

try:
    import psycopg
    from pgvector.psycopg import register_vector
    from psycopg_pool import ConnectionPool, PoolTimeout
except ImportError as exc:  # pragma: no cover - depends on the installed extra
    from core.errors import ConfigError

    raise ConfigError(
        "VERBATIM_DATABASE_URL names PostgreSQL, but its client isn't installed: pip install 'verbatim[postgres]'."
    ) from exc

from core.answers import Answer, Turn
from core.errors import ConfigError, IndexFileError, StoreUnavailable
from core.retrieval import PER_DOCUMENT, TOP_K, Corpus, Fragment, Hit, select
from core.review import dated
from core.store import DocumentRecord, Entry, KnownDocument, Logged, Unreferenced, conversation_hash
from core.store.rows import (
    ANSWER_COLUMNS,
    ENTRY_COLUMNS,
    answer_from,
    document_values,
    entry_from,
    entry_values,
    logged_from,
    now,
    turns_from,
)

if TYPE_CHECKING:
    from core.ingest.readers import Document

log = logging.getLogger(__name__)
# psycopg_pool warns at every failed reconnection attempt; an outage is told once per use that meets it.
logging.getLogger("psycopg.pool").setLevel(logging.ERROR)

# Advisory lock keys (any 64-bit numbers, the same in every replica).
MIGRATION_LOCK = 0x5645_5242_4D49_4701  # applying schema migrations
INDEXER_LOCK = 0x5645_5242_494E_4401  # one indexer at a time

Migration = Callable[["psycopg.Connection[Any]"], None]


def _where(url: str) -> str:
    """The server a URL names, without its password, for a sentence a person reads."""
    parts = urlsplit(url)
    host = parts.hostname or "the local socket"
    return f"{host}:{parts.port}" if parts.port else host


# --- migrations (append-only: never edit or rename one that has shipped) ----------------------------


def _m001_index(db: psycopg.Connection[Any]) -> None:
    db.execute("CREATE EXTENSION IF NOT EXISTS vector")
    db.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    # Starts at the clock, so a database rebuilt from scratch never repeats a generation a reader holds.
    db.execute("INSERT INTO meta VALUES ('generation', %s)", (str(time.time_ns() // 1000),))
    db.execute(
        """
        CREATE TABLE documents (
            id BIGSERIAL PRIMARY KEY,
            path TEXT NOT NULL UNIQUE,
            title TEXT NOT NULL DEFAULT '',
            audience TEXT NOT NULL DEFAULT 'internal',
            owner TEXT, as_of TEXT, source TEXT,
            sha256 TEXT NOT NULL,
            size BIGINT NOT NULL,
            state TEXT NOT NULL CHECK (state IN ('queued', 'indexing', 'indexed', 'failed', 'removed')),
            error TEXT,
            indexed_at TEXT,
            meta_sha256 TEXT NOT NULL DEFAULT '',
            licence TEXT,
            review_every TEXT,
            modified TEXT
        )
        """
    )
    # `embedding` has no dimension until the first batch is embedded (see `_ensure_dimension`).
    db.execute(
        """
        CREATE TABLE fragments (
            id BIGSERIAL PRIMARY KEY,
            document_id BIGINT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
            position INTEGER NOT NULL,
            total INTEGER NOT NULL,
            section TEXT NOT NULL,
            text TEXT NOT NULL,
            embedding vector NOT NULL,
            hash TEXT NOT NULL,
            page INTEGER,
            staged BIGINT NOT NULL DEFAULT 0
        )
        """
    )
    db.execute("CREATE INDEX fragments_by_document ON fragments(document_id, staged)")
    db.execute("CREATE INDEX fragments_by_hash ON fragments(hash)")


def _m002_runlog_and_state(db: psycopg.Connection[Any]) -> None:
    db.execute(
        """
        CREATE TABLE entries (
            seq BIGSERIAL UNIQUE,
            id TEXT PRIMARY KEY,
            at TEXT NOT NULL,
            surface TEXT NOT NULL,
            conversation TEXT,
            question TEXT NOT NULL,
            standalone_question TEXT,
            kind TEXT NOT NULL,
            reason TEXT,
            statements TEXT NOT NULL,
            discarded INTEGER NOT NULL,
            fragments TEXT NOT NULL,
            timings TEXT NOT NULL,
            answerer TEXT NOT NULL,
            model_calls INTEGER NOT NULL,
            calculations TEXT NOT NULL DEFAULT '[]'
        )
        """
    )
    db.execute("CREATE INDEX entries_by_conversation ON entries(conversation, at)")
    db.execute("CREATE INDEX entries_by_time ON entries(at)")
    db.execute(
        "CREATE TABLE feedback (answer_id TEXT NOT NULL, at TEXT NOT NULL, surface TEXT NOT NULL, "
        "value TEXT NOT NULL CHECK (value IN ('up', 'down')), who TEXT)"
    )
    db.execute("CREATE INDEX feedback_by_answer ON feedback(answer_id)")
    db.execute("CREATE TABLE seen_events (key TEXT PRIMARY KEY, at DOUBLE PRECISION NOT NULL)")
    db.execute("CREATE INDEX seen_events_by_age ON seen_events(at)")
    db.execute("CREATE TABLE links (key TEXT PRIMARY KEY, conversation TEXT NOT NULL, at DOUBLE PRECISION NOT NULL)")
    db.execute("CREATE INDEX links_by_age ON links(at)")
    db.execute("CREATE TABLE rate_slots (key TEXT NOT NULL, at DOUBLE PRECISION NOT NULL)")
    db.execute("CREATE INDEX rate_slots_by_key ON rate_slots(key, at)")
    db.execute("CREATE TABLE stamps (key TEXT PRIMARY KEY, at DOUBLE PRECISION NOT NULL)")


def _m003_text_vectors(db: psycopg.Connection[Any]) -> None:
    """Vectors of the sentences the extractive answerer scores, embedded at index time, by text hash."""
    db.execute("CREATE TABLE text_vectors (hash TEXT PRIMARY KEY, vector BYTEA NOT NULL)")


def _m004_entries_scope(db: psycopg.Connection[Any]) -> None:
    """The audiences an answer could read, so it is never re-posted where a narrower scope applies."""
    db.execute("ALTER TABLE entries ADD COLUMN scope TEXT NOT NULL DEFAULT ''")


MIGRATIONS: list[Migration] = [_m001_index, _m002_runlog_and_state, _m003_text_vectors, _m004_entries_scope]


def migrate(db: psycopg.Connection[Any], migrations: list[Migration] = MIGRATIONS) -> list[str]:
    """Apply the migrations this database has not seen, under an advisory lock; the names applied."""
    applied: list[str] = []
    db.execute("SELECT pg_advisory_lock(%s)", (MIGRATION_LOCK,))
    try:
        with db.transaction():
            db.execute("CREATE TABLE IF NOT EXISTS _migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")
        done = {row[0] for row in db.execute("SELECT name FROM _migrations")}
        for step in migrations:
            if step.__name__ not in done:
                with db.transaction():
                    step(db)
                    db.execute("INSERT INTO _migrations VALUES (%s, %s)", (step.__name__, now()))
                applied.append(step.__name__)
    finally:
        db.execute("SELECT pg_advisory_unlock(%s)", (MIGRATION_LOCK,))
    return applied


# --- the shared connection pool ---------------------------------------------------------------------


# How long one use waits for a connection. A pool of short transactions never waits this long unless
# the server can't be reached, and a question caught by a restart of a few seconds is answered late, not lost.
CONNECTION_WAIT = 10.0
# Slack wants an event acknowledged within 3 s, and whether it was seen is asked before the acknowledgement.
ACK_WAIT = 2.0
# The pool gives up a failing reconnection after this long, so the next use starts a fresh attempt at once:
# with psycopg_pool's default (5 minutes, backing off to 2 minutes between attempts) a database back up
# could wait that long to be noticed.
RECONNECT_WINDOW = 10.0


def _transient(exc: psycopg.Error) -> bool:
    """Whether an error may go away by itself: the server down or starting, not a wrong name or password."""
    if not isinstance(exc, psycopg.OperationalError):
        return False
    text = str(exc)
    refused = ("does not exist", "authentication failed", "no pg_hba.conf entry")
    return (exc.sqlstate or "").startswith(("08", "57P")) or not any(word in text for word in refused)


class _Database:
    """A connection pool on one database; each `use` is one transaction, an unreachable server `StoreUnavailable`."""

    def __init__(self, url: str, wait: float = 30.0, max_size: int = 8) -> None:
        self.url = url
        self.where = _where(url)
        self.down = False  # set by a use that found the server unreachable; cleared once the pool reconnects
        applied = self._migrate(wait)
        if applied:
            log.info("database migrations applied: %s", ", ".join(applied))
        self.pool = ConnectionPool(
            url,
            min_size=1,
            max_size=max_size,
            open=True,
            configure=register_vector,
            check=ConnectionPool.check_connection,  # a connection dropped by a server restart is replaced
            kwargs={"connect_timeout": 5},
            timeout=CONNECTION_WAIT,
            reconnect_timeout=RECONNECT_WINDOW,
        )

    def _migrate(self, wait: float) -> list[str]:
        """Connect and apply the migrations; a server that is down or starting is tried again for `wait` s."""
        deadline = time.monotonic() + wait
        delay = 0.5
        while True:
            try:
                with psycopg.connect(self.url, autocommit=True, connect_timeout=5) as db:
                    return migrate(db)
            except psycopg.Error as exc:
                if not _transient(exc) or time.monotonic() + delay > deadline:
                    tried = f", tried for {wait:.0f} s" if _transient(exc) and wait >= 1 else ""
                    raise ConfigError(
                        f"The PostgreSQL database at {self.where} can't be used ({_reason(exc)}{tried}): check "
                        "VERBATIM_DATABASE_URL and that the server is running; the next start tries again."
                    ) from exc
                if delay == 0.5:  # once: the operator reads one sentence, not one per attempt
                    log.warning(
                        "The PostgreSQL database at %s can't be reached (%s); trying again for up to %.0f s.",
                        self.where,
                        _reason(exc),
                        wait,
                    )
                time.sleep(delay)
                delay = min(delay * 2, 5.0)

    @contextmanager
    def use(self, wait: float | None = None) -> Iterator[psycopg.Connection[Any]]:
        """A pooled connection in one transaction (committed on success, rolled back on an exception)."""
        if self.down and self.pool.get_stats().get("pool_available"):
            self.down = False  # the pool has reconnected
        try:
            if self.down:
                with self._direct(wait) as db:
                    yield db
            else:
                with self.pool.connection(timeout=wait) as db:
                    yield db
        except (psycopg.OperationalError, PoolTimeout) as exc:
            self.down = True
            with suppress(psycopg.Error):  # other idle connections died with this one: drop them now, not one by one
                self.pool.check()
            raise StoreUnavailable(
                f"The PostgreSQL database at {self.where} can't be reached ({_reason(exc)}); it is tried again "
                "on the next use."
            ) from exc

    @contextmanager
    def _direct(self, wait: float | None) -> Iterator[psycopg.Connection[Any]]:
        """One connection of its own, for a use between an outage and the pool's reconnecting.

        The pool backs off between reconnection attempts (up to `RECONNECT_WINDOW`), so a use would
        wait `CONNECTION_WAIT` for it during an outage; a direct connection is refused at once while the
        server is down, and serves the use as soon as it is back, while the pool catches up.
        """
        # libpq's shortest connect timeout is 2 s: enough for a server that is up, in time for Slack's ack.
        with psycopg.connect(self.url, connect_timeout=max(2, int(wait or 5))) as db:  # committed, closed on leaving
            with suppress(psycopg.Error):
                self.pool.check()  # the server is back: the pool tries to connect now, not after its back-off
            register_vector(db)
            yield db

    def close(self) -> None:
        self.pool.close()


def _reason(exc: Exception) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


# --- the index ----------------------------------------------------------------------------------------


_FRAGMENT_COLUMNS = (
    "f.id, d.path, d.title, d.audience, f.section, f.position, f.total, f.text, f.embedding, d.id, "
    "f.page, d.as_of, d.modified, d.review_every"
)
_SEARCHED = "f.staged = 0 AND d.state IN ('indexed', 'indexing')"
# A hit's columns: `_FRAGMENT_COLUMNS` without the vector, which a hit doesn't need.
_HIT_COLUMNS = _FRAGMENT_COLUMNS.replace("f.embedding", "NULL")
# How wide the HNSW search is (its `ef_search`): how many rows it considers, before the audience filter.
# Measured on 1M clustered vectors (benchmarks/pgvector_scale.py): recall@5 0.84 at 100, 0.96 at 200, 0.985
# at 400 (p50 5.3 / 6.8 / 8.7 ms); at 100,000, 100 already gave 0.995-1.000.
SEARCH_EF = 400
# How many of the nearest rows the scope may read are handed over for the floor, top k and per-document cap:
# the best of a search SEARCH_EF wide, so widening the search costs no more rows to sort and fetch.
CANDIDATES = 100
# How the HNSW graph is built. pgvector's default ef_construction (64) gave recall@5 0.84 / 0.93 at ef_search
# 40 / 100 on 100,000 clustered vectors (benchmarks/pgvector_scale.py --ef-construction 64); 128 gave 0.96 /
# 1.00, for a build 1.5 times as long.
HNSW = "WITH (m = 16, ef_construction = 128)"


def _array(vector: Any) -> np.ndarray:
    """A float32 array from what pgvector returns (a `Vector` since pgvector-python 0.4, an array before)."""
    return np.asarray(vector.to_numpy() if hasattr(vector, "to_numpy") else vector, dtype=np.float32)


def _fragment(r: Sequence[Any]) -> Fragment:
    return Fragment(r[1], r[2], r[3], tuple(json.loads(r[4])), r[5], r[6], r[7], r[10], dated(r[11], r[12]), r[13])


class PostgresIndex:
    """Documents, fragments and their vectors in PostgreSQL; see `IndexStore`."""

    notice: str | None = None

    def __init__(self, database: _Database) -> None:
        self.database = database
        self.exact_searches = 0  # searches whose HNSW candidates fell short, ranked exactly instead
        self._staging: dict[str, int] = {}  # document path → the token of its batches being written

    def _use(self) -> Any:
        return self.database.use()

    def _meta(self, db: psycopg.Connection[Any], key: str) -> str | None:
        row = db.execute("SELECT value FROM meta WHERE key = %s", (key,)).fetchone()
        return row[0] if row else None

    def _bump(self, db: psycopg.Connection[Any]) -> None:
        db.execute("UPDATE meta SET value = (value::bigint + 1)::text WHERE key = 'generation'")

    def generation(self) -> int:
        with self._use() as db:
            return int(self._meta(db, "generation") or 0)

    def recover(self) -> bool:
        return False  # nothing on this host's disk to lose: the database is the index

    @contextmanager
    def sole_indexer(self, wait: bool = True) -> Iterator[bool]:
        """Hold the indexer lock while the block runs; False (without waiting) when another process holds it."""
        with self.database.use() as db:
            db.autocommit = True  # a session lock, held across the sync's many transactions
            if wait:
                db.execute("SELECT pg_advisory_lock(%s)", (INDEXER_LOCK,))
                mine = True
            else:
                mine = bool(db.execute("SELECT pg_try_advisory_lock(%s)", (INDEXER_LOCK,)).fetchone()[0])  # type: ignore[index]
            try:
                yield mine
            finally:
                if mine:
                    db.execute("SELECT pg_advisory_unlock(%s)", (INDEXER_LOCK,))
                db.autocommit = False

    def embedder_id(self) -> str | None:
        with self._use() as db:
            return self._meta(db, "embedder")

    def reset(self, embedder_id: str) -> None:
        with self._use() as db:
            db.execute("DELETE FROM documents")
            db.execute("DELETE FROM text_vectors")
            db.execute(
                "INSERT INTO meta VALUES ('embedder', %s) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (embedder_id,),
            )
            # Another model's vectors may have another dimension: the column and its index start over.
            db.execute("DROP INDEX IF EXISTS fragments_by_embedding")
            db.execute("ALTER TABLE fragments ALTER COLUMN embedding TYPE vector")
            db.execute("DELETE FROM meta WHERE key = 'dimension'")
            self._bump(db)

    def _ensure_dimension(self, db: psycopg.Connection[Any], dim: int) -> None:
        """Give the vector column its dimension and an HNSW (cosine) index once the first batch is embedded."""
        db.execute("SELECT pg_advisory_xact_lock(%s)", (INDEXER_LOCK + 1,))
        known = self._meta(db, "dimension")
        if known == str(dim):
            return
        if known is not None:
            raise IndexFileError(f"The index holds {known}-dimension vectors, not {dim}: re-index from scratch.")
        db.execute(f"ALTER TABLE fragments ALTER COLUMN embedding TYPE vector({dim:d})")
        db.execute(f"CREATE INDEX fragments_by_embedding ON fragments USING hnsw (embedding vector_cosine_ops) {HNSW}")
        db.execute("INSERT INTO meta VALUES ('dimension', %s)", (str(dim),))

    def known(self) -> dict[str, KnownDocument]:
        with self._use() as db:
            rows = db.execute(
                "SELECT path, sha256, meta_sha256, state, error FROM documents WHERE state != 'removed'"
            ).fetchall()
        return {r[0]: KnownDocument(r[1], r[2], r[3], r[4]) for r in rows}

    def vectors_for(self, hashes: Sequence[str]) -> dict[str, np.ndarray]:
        unique = list(dict.fromkeys(hashes))
        if not unique:
            return {}
        with self._use() as db:
            rows = db.execute(
                "SELECT DISTINCT ON (hash) hash, embedding FROM fragments WHERE hash = ANY(%s)", (unique,)
            ).fetchall()
        return {digest: _array(vector) for digest, vector in rows}

    def text_vectors(self, hashes: Sequence[str]) -> dict[str, np.ndarray]:
        unique = list(dict.fromkeys(hashes))
        if not unique:
            return {}
        with self._use() as db:
            rows = db.execute("SELECT hash, vector FROM text_vectors WHERE hash = ANY(%s)", (unique,)).fetchall()
        return {digest: np.frombuffer(bytes(blob), dtype=np.float32) for digest, blob in rows}

    def put_text_vectors(self, items: Sequence[tuple[str, np.ndarray]]) -> None:
        if not items:
            return
        with self._use() as db:
            db.cursor().executemany(
                "INSERT INTO text_vectors VALUES (%s, %s) ON CONFLICT (hash) DO NOTHING",
                [(digest, vector.astype(np.float32).tobytes()) for digest, vector in items],
            )

    def mark_indexing(self, document: Document) -> None:
        with self._use() as db:
            db.execute(
                "INSERT INTO documents (path, sha256, size, state) VALUES (%s, %s, %s, 'queued') "
                "ON CONFLICT (path) DO NOTHING",
                (document.path, document.sha256, document.size),
            )
            db.execute("UPDATE documents SET state = 'indexing' WHERE path = %s", (document.path,))
            if document.audience != "public":
                # Narrowing takes effect now: the old version stays searchable until the swap, never to the public.
                narrowed = db.execute(
                    "UPDATE documents SET audience = %s WHERE path = %s AND audience != %s",
                    (document.audience, document.path, document.audience),
                ).rowcount
                if narrowed:
                    self._bump(db)
            # Batches left staged by a run that died half-way are never swapped in, but they are kept until this
            # run commits (which drops every row but its own): their vectors are found by hash, not embedded again.
        self._staging[document.path] = secrets.randbits(62) | 1  # this run's batches; 0 marks live fragments

    def _token(self, path: str) -> int:
        try:
            return self._staging[path]
        except KeyError:
            raise IndexFileError(f"{path} is written to the index without mark_indexing.") from None

    def stage(self, path: str, fragments: Sequence[Fragment], hashes: Sequence[str], vectors: np.ndarray) -> None:
        token = self._token(path)
        with self._use() as db:
            if len(vectors):
                self._ensure_dimension(db, int(vectors.shape[1]))
            doc_id = db.execute("SELECT id FROM documents WHERE path = %s", (path,)).fetchone()[0]
            with db.cursor() as cur:
                cur.executemany(
                    "INSERT INTO fragments (document_id, position, total, section, text, embedding, hash, page, "
                    "staged) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)",
                    [
                        (
                            doc_id,
                            f.position,
                            f.of,
                            json.dumps(f.section),
                            f.text,
                            np.asarray(v, dtype=np.float32),
                            h,
                            f.page,
                            token,
                        )
                        for f, h, v in zip(fragments, hashes, vectors, strict=True)
                    ],
                )

    def commit(self, document: Document, count: int) -> None:
        token = self._token(document.path)
        with self._use() as db:  # one transaction: readers see the old fragments or the new, never neither
            doc_id = db.execute("SELECT id FROM documents WHERE path = %s FOR UPDATE", (document.path,)).fetchone()[0]
            staged = db.execute(
                "SELECT count(*) FROM fragments WHERE document_id = %s AND staged = %s", (doc_id, token)
            ).fetchone()[0]
            if staged != count:
                raise IndexFileError(
                    f"{document.path} was re-indexed by another process at the same time; its version is kept."
                )
            db.execute("DELETE FROM fragments WHERE document_id = %s AND staged != %s", (doc_id, token))
            db.execute("UPDATE fragments SET staged = 0 WHERE document_id = %s", (doc_id,))
            db.execute(
                "UPDATE documents SET title = %s, audience = %s, owner = %s, as_of = %s, source = %s, sha256 = %s, "
                "meta_sha256 = %s, size = %s, state = 'indexed', error = NULL, "
                "indexed_at = to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS'), "
                "licence = %s, review_every = %s, modified = %s WHERE id = %s",
                (*document_values(document), doc_id),
            )
            self._bump(db)
        del self._staging[document.path]

    def put(
        self, document: Document, fragments: Sequence[Fragment], hashes: Sequence[str], vectors: np.ndarray
    ) -> None:
        self.stage(document.path, fragments, hashes, vectors)
        self.commit(document, len(fragments))

    def abort(self, path: str) -> None:
        token = self._staging.pop(path, None)
        with self._use() as db:
            if token is not None:
                db.execute(
                    "DELETE FROM fragments WHERE staged = %s "
                    "AND document_id = (SELECT id FROM documents WHERE path = %s)",
                    (token, path),
                )
            db.execute(
                "UPDATE documents SET state = CASE WHEN indexed_at IS NULL THEN 'queued' ELSE 'indexed' END "
                "WHERE path = %s",
                (path,),
            )

    def fail(self, path: str, sha256: str, size: int, reason: str) -> None:
        with self._use() as db:
            # A document that no longer parses stops being quoted; its register row stays.
            db.execute("DELETE FROM fragments WHERE document_id = (SELECT id FROM documents WHERE path = %s)", (path,))
            db.execute(
                "INSERT INTO documents (path, sha256, size, state, error) VALUES (%s, %s, %s, 'failed', %s) "
                "ON CONFLICT (path) DO UPDATE SET sha256 = excluded.sha256, size = excluded.size, state = 'failed', "
                "error = excluded.error, meta_sha256 = '', indexed_at = NULL",
                (path, sha256, size, reason),
            )
            self._bump(db)

    def remove(self, paths: Sequence[str]) -> None:
        if not paths:
            return
        with self._use() as db:
            db.execute(
                "DELETE FROM fragments WHERE document_id IN (SELECT id FROM documents WHERE path = ANY(%s))",
                (list(paths),),
            )
            db.execute(
                "UPDATE documents SET state = 'removed', error = NULL, indexed_at = NULL WHERE path = ANY(%s)",
                (list(paths),),
            )
            self._bump(db)

    def failures(self) -> dict[str, str]:
        with self._use() as db:
            rows = db.execute(
                "SELECT path, error FROM documents WHERE state = 'failed' ORDER BY path COLLATE \"C\""
            ).fetchall()
        return {r[0]: r[1] for r in rows}

    def register(self) -> list[DocumentRecord]:
        with self._use() as db:
            rows = db.execute(
                "SELECT d.path, d.state, d.title, d.audience, d.owner, d.as_of, d.source, d.licence, "
                "d.review_every, d.sha256, d.size, d.error, "
                "(SELECT count(*) FROM fragments f WHERE f.document_id = d.id AND f.staged = 0), "
                'd.indexed_at, d.modified FROM documents d ORDER BY d.path COLLATE "C"'
            ).fetchall()
        return [DocumentRecord(*row) for row in rows]

    # The same three kinds of leftovers as the SQLite store (see there).
    _ORPHANS = "FROM fragments WHERE document_id NOT IN (SELECT id FROM documents)"
    _UNINDEXED = (
        "FROM fragments WHERE document_id IN (SELECT id FROM documents WHERE state IN ('removed', 'failed', 'queued'))"
    )
    _STALE_BATCHES = (
        "FROM fragments WHERE staged != 0 AND document_id IN (SELECT id FROM documents WHERE state = 'indexed')"
    )

    def _unreferenced(self, db: psycopg.Connection[Any]) -> Unreferenced:
        def count(where: str) -> int:
            return int(db.execute(f"SELECT count(*) {where}").fetchone()[0])  # type: ignore[index]

        removed = tuple(
            r[0] for r in db.execute("SELECT path FROM documents WHERE state = 'removed' ORDER BY path COLLATE \"C\"")
        )
        return Unreferenced(count(self._ORPHANS), count(self._UNINDEXED), count(self._STALE_BATCHES), removed)

    def unreferenced(self) -> Unreferenced:
        with self._use() as db:
            return self._unreferenced(db)

    def drop_unreferenced(self) -> Unreferenced:
        with self._use() as db:
            found = self._unreferenced(db)
            for where in (self._ORPHANS, self._UNINDEXED, self._STALE_BATCHES):
                db.execute(f"DELETE {where}")
            db.execute("DELETE FROM documents WHERE state = 'removed'")
        return found

    def stats(self) -> tuple[int, float, int]:
        with self._use() as db:
            count, mean, longest = db.execute(
                "SELECT count(*), avg(length(text)), max(length(text)) FROM fragments WHERE staged = 0"
            ).fetchone()
        return int(count), float(mean or 0.0), int(longest or 0)

    def load(self) -> Corpus:
        with self._use() as db, db.transaction():
            # One snapshot: the generation and the rows it names.
            db.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            generation = int(self._meta(db, "generation") or 0)
            dim = int(self._meta(db, "dimension") or 0)
            rows = db.execute(
                f"SELECT {_FRAGMENT_COLUMNS} FROM fragments f JOIN documents d ON d.id = f.document_id "
                f"WHERE {_SEARCHED} "
                # Public rows first: the public scope is then a slice of the matrix, not a copy of it.
                # COLLATE "C": the same byte order as SQLite, whatever the database's locale.
                "ORDER BY d.audience != 'public', d.path COLLATE \"C\", f.position"
            ).fetchall()
        matrix = np.vstack([_array(r[8]) for r in rows]) if rows else np.zeros((0, dim), dtype=np.float32)
        return Corpus(
            ids=np.array([r[0] for r in rows], dtype=np.int64),
            fragments=tuple(_fragment(r) for r in rows),
            matrix=matrix,
            audiences=np.array([r[3] for r in rows], dtype=object),
            documents=np.array([r[9] for r in rows], dtype=np.int64),
            generation=generation,
        )

    def search(
        self,
        query: np.ndarray,
        scope: Iterable[str],
        floor: float,
        k: int = TOP_K,
        per_document: int = PER_DOCUMENT,
    ) -> list[Hit]:
        """The hits for a unit query vector, ranked in the database: rows outside `scope` are never scored.

        The HNSW index, searching `SEARCH_EF` wide, gives the scope's `CANDIDATES` nearest rows (the
        audience filter is in the same query as the ranking); the floor, top k and per-document cap
        are then `select()`'s, on the candidates in the in-memory corpus's order, so both searches
        keep the same hits.

        HNSW stops after `hnsw.ef_search` rows, before the filter: a scope holding a small share of
        the rows can get fewer candidates than asked. When the candidates neither fill the k hits
        nor reach below the floor, they may have been cut short, and the scope is ranked exactly.
        """
        vector = np.asarray(query, dtype=np.float32)
        audiences = sorted(set(scope))
        if k <= 0 or not audiences:
            return []
        with self._use() as db:
            db.execute(f"SET LOCAL hnsw.ef_search = {max(SEARCH_EF, CANDIDATES):d}")
            rows = self._candidates(db, vector, audiences, CANDIDATES, exact=False)
            chosen = select(np.array([r[1] for r in rows]), np.array([r[2] for r in rows]), floor, k, per_document)
            if len(chosen) < k and not (rows and rows[-1][1] < floor):
                self.exact_searches += 1
                limit = max(CANDIDATES, 4 * k * per_document)
                while True:
                    rows = self._candidates(db, vector, audiences, limit, exact=True)
                    scores = np.array([r[1] for r in rows])
                    chosen = select(scores, np.array([r[2] for r in rows]), floor, k, per_document)
                    # Done unless the per-document cap used up every row above the floor in a full window.
                    if len(chosen) == k or len(rows) < limit or scores[-1] < floor:
                        break
                    limit *= 4
            ids = [rows[i][0] for i in chosen]
            found = {
                r[0]: _fragment(r)
                for r in db.execute(
                    f"SELECT {_HIT_COLUMNS} FROM fragments f JOIN documents d ON d.id = f.document_id "
                    "WHERE f.id = ANY(%s)",
                    (ids,),
                    prepare=False,
                )
            }
        return [Hit(int(rows[i][0]), found[rows[i][0]], float(rows[i][1])) for i in chosen]

    def _candidates(
        self, db: psycopg.Connection[Any], vector: np.ndarray, audiences: list[str], limit: int, exact: bool
    ) -> list[tuple[int, float, int]]:
        """(fragment id, score, document id) of the scope's `limit` nearest rows, in the corpus's order on ties.

        `exact` orders by an expression the HNSW index can't serve, so the planner scans the scope.
        Never a prepared statement: a plan cached under one setting would be reused under another
        (the benchmark once timed sequential scans as HNSW that way), and planning costs ~0.1 ms.
        """
        order = "1 - (f.embedding <=> %(q)s) DESC" if exact else "f.embedding <=> %(q)s"
        rows = db.execute(
            f"""
            SELECT id, score, document_id FROM (
                SELECT f.id, f.document_id, 1 - (f.embedding <=> %(q)s) AS score,
                       d.audience != 'public' AS internal, d.path, f.position
                FROM fragments f JOIN documents d ON d.id = f.document_id
                WHERE {_SEARCHED} AND d.audience = ANY(%(audiences)s)
                ORDER BY {order}
                LIMIT %(limit)s
            ) nearest
            -- select() breaks ties by row, so the rows come in the corpus's order: public first, by path.
            ORDER BY score DESC, internal, path COLLATE "C", position
            """,
            {"q": vector, "audiences": audiences, "limit": limit},
            prepare=False,
        ).fetchall()
        return [(int(r[0]), float(r[1]), int(r[2])) for r in rows]

    def close(self) -> None:
        pass  # the pool is the store's, closed with it


# --- the run log and the bots' state --------------------------------------------------------------------


class PostgresLog:
    """The run log (append-only) and the bots' shared state; see `RunLogStore` and `StateStore`."""

    path = None  # no file: the run log is in the database

    def __init__(self, database: _Database) -> None:
        self.database = database
        self._next_sweep = 0.0

    def _use(self, wait: float | None = None) -> Any:
        return self.database.use(wait)

    def record(self, answer: Answer, surface: str, conversation: str | None) -> None:
        row = entry_values(answer, surface, conversation)
        with self._use() as db:
            db.execute(
                f"INSERT INTO entries ({ENTRY_COLUMNS}) "
                "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
                row,
            )

    def feedback(self, answer_id: str, value: str, surface: str, who: str | None = None) -> bool:
        if value not in ("up", "down"):
            raise ValueError(f"feedback must be 'up' or 'down', not {value!r}")
        with self._use() as db:
            if not db.execute("SELECT 1 FROM entries WHERE id = %s", (answer_id,)).fetchone():
                return False
            db.execute(
                "INSERT INTO feedback VALUES (%s, %s, %s, %s, %s)",
                (answer_id, now(), surface, value, conversation_hash(who) if who else None),
            )
        return True

    def history(self, conversation: str, limit: int = 3) -> list[Turn]:
        with self._use() as db:
            rows = db.execute(
                "SELECT question, kind, statements FROM entries WHERE conversation = %s "
                "ORDER BY at DESC, seq DESC LIMIT %s",
                (conversation_hash(conversation), limit),
            ).fetchall()
        return turns_from(rows)

    def answer(self, answer_id: str) -> Answer | None:
        with self._use() as db:
            row = db.execute(
                f"SELECT {ANSWER_COLUMNS} FROM entries WHERE id = %s",
                (answer_id,),
            ).fetchone()
        return None if row is None else answer_from(row)

    def tail(self, n: int = 10) -> list[Entry]:
        with self._use() as db:
            rows = db.execute(
                "SELECT e.id, e.at, e.surface, e.question, e.kind, e.reason, e.statements, e.discarded, e.answerer, "
                "e.timings, (SELECT string_agg(value, ',') FROM feedback f WHERE f.answer_id = e.id) "
                "FROM entries e ORDER BY e.at DESC, e.seq DESC LIMIT %s",
                (n,),
            ).fetchall()
        return [entry_from(r) for r in reversed(rows)]

    def since(self, at: str) -> list[Logged]:
        with self._use() as db:
            rows = db.execute(
                "SELECT e.id, e.at, e.surface, e.question, coalesce(e.standalone_question, e.question), e.kind, "
                "e.reason, e.statements, e.fragments, e.timings, "
                "(SELECT count(*) FROM feedback f WHERE f.answer_id = e.id AND f.value = 'up'), "
                "(SELECT count(*) FROM feedback f WHERE f.answer_id = e.id AND f.value = 'down') "
                "FROM entries e WHERE e.at >= %s ORDER BY e.at, e.seq",
                (at,),
            ).fetchall()
        return [logged_from(r) for r in rows]

    # --- bot state --------------------------------------------------------------------------------

    def _sweep(self, db: psycopg.Connection[Any], now: float) -> None:
        """Forget state older than a day (links: 30 days) now and then, so the tables stay small."""
        if now < self._next_sweep:
            return
        self._next_sweep = now + 600
        db.execute("DELETE FROM seen_events WHERE at < %s", (now - 86_400,))
        db.execute("DELETE FROM rate_slots WHERE at < %s", (now - 86_400,))
        db.execute("DELETE FROM links WHERE at < %s", (now - 30 * 86_400,))

    def first_time(self, key: str, ttl: float = 3600.0) -> bool:
        now = time.time()
        key = conversation_hash(key)
        with self._use(ACK_WAIT) as db:  # asked before Slack's acknowledgement: fail in time for a redelivery
            self._sweep(db, now)
            db.execute("DELETE FROM seen_events WHERE key = %s AND at < %s", (key, now - ttl))
            # The unique key decides: a replica racing us waits for our commit, then inserts nothing.
            inserted = db.execute(
                "INSERT INTO seen_events VALUES (%s, %s) ON CONFLICT (key) DO NOTHING", (key, now)
            ).rowcount
        return inserted == 1

    def link(self, key: str, conversation: str) -> None:
        with self._use() as db:
            db.execute(
                "INSERT INTO links VALUES (%s, %s, %s) ON CONFLICT (key) DO UPDATE "
                "SET conversation = excluded.conversation, at = excluded.at",
                (conversation_hash(key), conversation, time.time()),
            )

    def linked(self, key: str) -> str | None:
        with self._use() as db:
            row = db.execute("SELECT conversation FROM links WHERE key = %s", (conversation_hash(key),)).fetchone()
        return row[0] if row else None

    def take_slot(self, key: str, limit: int, window: float = 60.0) -> float:
        now = time.time()
        key = conversation_hash(key)
        with self._use() as db:
            # Count and insert as one step: replicas asking for the same key queue on this lock.
            db.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (key,))
            self._sweep(db, now)
            count, oldest = db.execute(
                "SELECT count(*), min(at) FROM rate_slots WHERE key = %s AND at > %s", (key, now - window)
            ).fetchone()
            if count >= limit:
                wait = window - (now - oldest)
            else:
                db.execute("INSERT INTO rate_slots VALUES (%s, %s)", (key, now))
                wait = 0.0
        return max(wait, 0.0)

    def stamped(self, key: str) -> float | None:
        with self._use() as db:
            row = db.execute("SELECT at FROM stamps WHERE key = %s", (key,)).fetchone()
        return float(row[0]) if row else None

    def claim(self, key: str, every: float, now: float) -> bool:
        with self._use() as db:
            # One statement decides and stamps, so two replicas asking at once can't both win.
            changed = db.execute(
                "INSERT INTO stamps VALUES (%s, %s) ON CONFLICT (key) DO UPDATE SET at = excluded.at "
                "WHERE stamps.at <= %s",
                (key, now, now - every),
            ).rowcount
        return changed == 1

    def close(self) -> None:
        pass  # the pool is the store's, closed with it


class PostgresStore:
    """The index, the run log and the bots' state in one PostgreSQL database, shared by every replica.

    A server that can't be reached at start-up is tried again for `wait` seconds, then a `ConfigError`.
    """

    def __init__(self, url: str, wait: float = 30.0) -> None:
        self.database = _Database(url, wait)
        self.index = PostgresIndex(self.database)
        log_ = PostgresLog(self.database)
        self.runlog = log_
        self.state = log_

    def close(self) -> None:
        self.database.close()
