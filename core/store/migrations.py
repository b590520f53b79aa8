"""Schema migrations, llm-style: append-only functions, each recorded by name once applied; one runner.

Never edit or rename a migration that has shipped (databases record it by name); add the next one.
Each engine keeps the list it shipped (SQLite: the index file and the run-log file; PostgreSQL:
one database); they end in one schema, with the same tables and columns, which the shared SQL
(`core.store.index`, `core.store.runlog`) reads.
"""

from __future__ import annotations

import fcntl
import sqlite3
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from core.store.sql import Dialect

Migration = Callable[[Any], None]  # on the engine's own connection (sqlite3 or psycopg)


@contextmanager
def one_process_at_a_time(database: Path) -> Iterator[None]:
    """Processes opening one file at the same time (the Slack and Telegram bots after an upgrade)
    set it up one after the other: the journal mode and the migrations; the second finds the work done.

    A side file, never the database, carries the lock: closing a handle on a live SQLite file
    would drop this process's SQLite locks on it.
    """
    with database.with_name(database.name + ".lock").open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def migrate(db: Any, migrations: Sequence[Migration], dialect: Dialect) -> list[str]:
    """Apply, in order, the migrations this database has not seen, each in a transaction and recorded by
    name; the names applied. The caller keeps other processes out meanwhile (a file lock, an advisory lock)."""
    with dialect.transaction(db):
        db.execute("CREATE TABLE IF NOT EXISTS _migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")
    done = {row[0] for row in db.execute("SELECT name FROM _migrations")}
    applied = []
    for step in migrations:
        if step.__name__ not in done:
            with dialect.transaction(db):
                step(db)
                db.execute(dialect.sql(f"INSERT INTO _migrations VALUES (?, {dialect.now})"), (step.__name__,))
            applied.append(step.__name__)
    return applied


# --- the index file (rebuildable) ---------------------------------------------------------------


def _m001_initial(db: sqlite3.Connection) -> None:
    db.executescript(
        """
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE documents (
            id INTEGER PRIMARY KEY,
            path TEXT NOT NULL UNIQUE,
            title TEXT NOT NULL DEFAULT '',
            audience TEXT NOT NULL DEFAULT 'internal',
            owner TEXT, as_of TEXT, source TEXT,
            sha256 TEXT NOT NULL,
            size INTEGER NOT NULL,
            state TEXT NOT NULL CHECK (state IN ('queued', 'indexing', 'indexed', 'failed')),
            error TEXT,
            indexed_at TEXT
        );
        CREATE TABLE fragments (
            id INTEGER PRIMARY KEY,
            document_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
            position INTEGER NOT NULL,
            of INTEGER NOT NULL,
            section TEXT NOT NULL,  -- JSON list of headings
            text TEXT NOT NULL,
            vector BLOB NOT NULL
        );
        CREATE INDEX fragments_by_document ON fragments(document_id);
        """
    )


def _m002_fragment_hashes_pages_generation(db: sqlite3.Connection) -> None:
    """Per-fragment content hashes (re-embed only what changed), pages, sidecar metadata, a generation."""
    db.executescript(
        """
        ALTER TABLE fragments ADD COLUMN hash TEXT;
        ALTER TABLE fragments ADD COLUMN page INTEGER;
        CREATE INDEX fragments_by_hash ON fragments(hash);
        ALTER TABLE documents ADD COLUMN meta_sha256 TEXT NOT NULL DEFAULT '';
        """
    )
    # Starts at the clock, so an index rebuilt from scratch never repeats a generation a reader holds.
    db.execute("INSERT OR REPLACE INTO meta VALUES ('generation', ?)", (str(time.time_ns() // 1000),))


def _m003_staged_fragments(db: sqlite3.Connection) -> None:
    """A big document's new fragments are written in batches under a staging token (0: live), then swapped in."""
    db.execute("ALTER TABLE fragments ADD COLUMN staged INTEGER NOT NULL DEFAULT 0")


def _m004_provenance_register(db: sqlite3.Connection) -> None:
    """The register: a `removed` state (the row stays, its fragments go), licence, review period, the file's date.

    SQLite can't change a CHECK constraint in place, so the table is rebuilt the documented way:
    foreign keys off (or dropping it would cascade to every fragment), copy, drop, rename.
    """
    db.commit()
    db.execute("PRAGMA foreign_keys = OFF")  # a no-op inside a transaction, hence the commit above
    try:
        db.executescript(
            """
            BEGIN;
            DROP TABLE IF EXISTS documents_new;
            CREATE TABLE documents_new (
                id INTEGER PRIMARY KEY,
                path TEXT NOT NULL UNIQUE,
                title TEXT NOT NULL DEFAULT '',
                audience TEXT NOT NULL DEFAULT 'internal',
                owner TEXT, as_of TEXT, source TEXT,
                sha256 TEXT NOT NULL,
                size INTEGER NOT NULL,
                state TEXT NOT NULL CHECK (state IN ('queued', 'indexing', 'indexed', 'failed', 'removed')),
                error TEXT,
                indexed_at TEXT,
                meta_sha256 TEXT NOT NULL DEFAULT '',
                licence TEXT,
                review_every TEXT,
                modified TEXT
            );
            INSERT INTO documents_new (id, path, title, audience, owner, as_of, source, sha256, size, state, error,
                                       indexed_at, meta_sha256)
                SELECT id, path, title, audience, owner, as_of, source, sha256, size, state, error,
                       indexed_at, meta_sha256 FROM documents;
            DROP TABLE documents;
            ALTER TABLE documents_new RENAME TO documents;
            COMMIT;
            """
        )
    finally:
        db.execute("PRAGMA foreign_keys = ON")


def _m005_text_vectors(db: sqlite3.Connection) -> None:
    """Vectors of the sentences the extractive answerer scores, embedded at index time, by text hash."""
    db.execute("CREATE TABLE text_vectors (hash TEXT PRIMARY KEY, vector BLOB NOT NULL)")


def _m006_live_fragments_index(db: sqlite3.Connection) -> None:
    """Loading reads the live fragments' ids and documents from an index, not from rows with text and vectors."""
    db.execute("CREATE INDEX fragments_live ON fragments(staged, document_id)")


def _m007_fragment_columns_as_everywhere(db: sqlite3.Connection) -> None:
    """The fragment columns PostgreSQL always had: `of` is `total`, `vector` is `embedding` (one schema, one SQL).

    A rename in place: every row, its text and its vector stay as they are.
    """
    db.execute("ALTER TABLE fragments RENAME COLUMN of TO total")
    db.execute("ALTER TABLE fragments RENAME COLUMN vector TO embedding")


def _m008_document_language(db: sqlite3.Connection) -> None:
    """Each document's language (ISO 639-1, declared or detected), so the index knows what it holds."""
    db.execute("ALTER TABLE documents ADD COLUMN language TEXT")


INDEX_MIGRATIONS: list[Migration] = [
    _m001_initial,
    _m002_fragment_hashes_pages_generation,
    _m003_staged_fragments,
    _m004_provenance_register,
    _m005_text_vectors,
    _m006_live_fragments_index,
    _m007_fragment_columns_as_everywhere,
    _m008_document_language,
]


# --- the run-log file (user data, never dropped) ---------------------------------------------------


def _m001_entries(db: sqlite3.Connection) -> None:
    db.executescript(
        """
        CREATE TABLE entries (
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
            model_calls INTEGER NOT NULL
        );
        CREATE INDEX entries_by_conversation ON entries(conversation, at);
        CREATE TABLE feedback (
            answer_id TEXT NOT NULL,
            at TEXT NOT NULL,
            surface TEXT NOT NULL,
            value TEXT NOT NULL CHECK (value IN ('up', 'down')),
            who TEXT
        );
        """
    )


def _m002_bot_state(db: sqlite3.Connection) -> None:
    """The bots' shared memory: redelivered events, reply → conversation links, rate-limit slots."""
    db.executescript(
        """
        CREATE TABLE seen_events (key TEXT PRIMARY KEY, at REAL NOT NULL);
        CREATE INDEX seen_events_by_age ON seen_events(at);
        CREATE TABLE links (key TEXT PRIMARY KEY, conversation TEXT NOT NULL, at REAL NOT NULL);
        CREATE INDEX links_by_age ON links(at);
        CREATE TABLE rate_slots (key TEXT NOT NULL, at REAL NOT NULL);
        CREATE INDEX rate_slots_by_key ON rate_slots(key, at);
        """
    )


def _m003_report_reads(db: sqlite3.Connection) -> None:
    """The gap report reads entries by time and feedback by answer; the weekly digest keeps its last run."""
    db.executescript(
        """
        CREATE INDEX entries_by_time ON entries(at);
        CREATE INDEX feedback_by_answer ON feedback(answer_id);
        CREATE TABLE stamps (key TEXT PRIMARY KEY, at REAL NOT NULL);
        """
    )


def _m004_entries_calculations(db: sqlite3.Connection) -> None:
    """The calculations an answer showed, so an answer shown again from the log shows them too."""
    db.execute("ALTER TABLE entries ADD COLUMN calculations TEXT NOT NULL DEFAULT '[]'")


def _m005_entries_scope(db: sqlite3.Connection) -> None:
    """The audiences an answer could read, so it is never re-posted where a narrower scope applies."""
    db.execute("ALTER TABLE entries ADD COLUMN scope TEXT NOT NULL DEFAULT ''")


RUNLOG_MIGRATIONS: list[Migration] = [
    _m001_entries,
    _m002_bot_state,
    _m003_report_reads,
    _m004_entries_calculations,
    _m005_entries_scope,
]


# --- the PostgreSQL database (index, run log and state in one; the index's columns are the same) ------------


def _m001_index(db: Any) -> None:
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


def _m002_runlog_and_state(db: Any) -> None:
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


def _m003_text_vectors(db: Any) -> None:
    """Vectors of the sentences the extractive answerer scores, embedded at index time, by text hash."""
    db.execute("CREATE TABLE text_vectors (hash TEXT PRIMARY KEY, vector BYTEA NOT NULL)")


def _m004_entries_scope(db: Any) -> None:
    """The audiences an answer could read, so it is never re-posted where a narrower scope applies."""
    db.execute("ALTER TABLE entries ADD COLUMN scope TEXT NOT NULL DEFAULT ''")


def _m005_document_language(db: Any) -> None:
    """Each document's language (ISO 639-1, declared or detected), so the index knows what it holds."""
    db.execute("ALTER TABLE documents ADD COLUMN language TEXT")


def _m006_secrets(db: Any) -> None:
    """The installation's id key, shared by every replica (SQLite keeps its own in the data folder's id.key)."""
    db.execute("CREATE TABLE secrets (name TEXT PRIMARY KEY, value TEXT NOT NULL)")


POSTGRES_MIGRATIONS: list[Migration] = [
    _m001_index,
    _m002_runlog_and_state,
    _m003_text_vectors,
    _m004_entries_scope,
    _m005_document_language,
    _m006_secrets,
]
