"""The embedded store: two SQLite files in the data folder.

`index.sqlite3` is rebuildable (a damaged one is moved aside and started anew);
`runlog.sqlite3` holds user data and the bots' shared state, and is never dropped.
Both use WAL, so the Slack and Telegram processes can share one data folder.
"""

from __future__ import annotations

import gc
import glob
import itertools
import json
import logging
import os
import secrets
import sqlite3
import threading
import time
import traceback
import weakref
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from core.answers import Answer, Turn
from core.errors import IndexCorrupt, IndexFileError, RunLogError
from core.retrieval import Corpus, Fragment, StoredFragments, find_rows
from core.review import dated
from core.store import (
    INDEX_FILE,
    RUNLOG_FILE,
    DocumentRecord,
    Entry,
    KnownDocument,
    Logged,
    Unreferenced,
    conversation_hash,
)
from core.store.migrations import INDEX_MIGRATIONS, RUNLOG_MIGRATIONS, migrate, one_process_at_a_time
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

_CHUNK = 500  # host parameters per IN (...) query, well under SQLite's limit
_SEARCHED_STATES = "('indexed', 'indexing')"  # documents whose live fragments are searched


class _FragmentReader:
    """Reads the fragments of a loaded corpus's rows, through the connection it was loaded with.

    A row whose fragment is gone, was swapped out, or whose document is no longer searched or no
    longer has the audience it was loaded with reads as None: a search never shows text the
    store has dropped or narrowed since. Thread-safe; the connection closes with the corpus.
    """

    def __init__(
        self, path: Path, db: sqlite3.Connection, ids: np.ndarray, documents: np.ndarray, audiences: np.ndarray
    ) -> None:
        self.path, self.db = path, db
        self.ids, self.documents, self.audiences = ids, documents, audiences
        self.lock = threading.Lock()
        self.close = weakref.finalize(self, db.close)  # with the corpus, or with the index, whichever is first

    def __call__(self, rows: Sequence[int]) -> list[Fragment | None]:
        by_id = {int(self.ids[r]): r for r in rows}
        found: dict[int, Fragment] = {}
        wanted = list(by_id)
        try:
            with self.lock:
                for start in range(0, len(wanted), _CHUNK):
                    chunk = wanted[start : start + _CHUNK]
                    marks = ",".join("?" * len(chunk))
                    for r in self.db.execute(
                        "SELECT f.id, f.document_id, d.audience, d.path, d.title, f.section, f.position, f.of, "
                        "f.text, f.page, d.as_of, d.modified, d.review_every FROM fragments f "
                        "JOIN documents d ON d.id = f.document_id "
                        f"WHERE f.id IN ({marks}) AND f.staged = 0 AND d.state IN {_SEARCHED_STATES}",
                        chunk,
                    ):
                        row = by_id[r[0]]
                        # A reused id (another document's row now) or a narrowed document is not what was loaded.
                        if r[1] == self.documents[row] and r[2] == self.audiences[row]:
                            section = tuple(json.loads(r[5]))
                            found[r[0]] = Fragment(
                                r[3], r[4], r[2], section, r[6], r[7], r[8], r[9], dated(r[10], r[11]), r[12]
                            )
        except sqlite3.Error as exc:  # damaged, or closed: the hits can't be shown, the caller reloads
            log.warning("the index file %s can't be read for the hits' text: %s", self.path, exc)
        return [found.get(int(self.ids[r])) for r in rows]


def _identity(path: Path) -> tuple[int, int] | None:
    """Which file `path` names now (device, inode); None when there is none."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return None
    return info.st_dev, info.st_ino


def _set_aside(path: Path) -> Path:
    """Move a damaged file and its -wal aside (dropping older damaged copies and the -shm); the copy's name."""
    for old in path.parent.glob(f"{glob.escape(path.name)}.corrupt-*"):
        old.unlink(missing_ok=True)
    aside = path.with_name(f"{path.name}.corrupt-{time.strftime('%Y%m%d-%H%M%S')}")
    Path(f"{path}-shm").unlink(missing_ok=True)
    for suffix in ("", "-wal"):
        src = Path(f"{path}{suffix}")
        if src.exists():
            src.replace(Path(f"{aside}{suffix}"))
    return aside


def _damage(path: Path) -> str | None:
    """Why the SQLite file at `path` can't be trusted, read afresh from disk (not a connection's cache); None if sound.

    Cheap on purpose (the header, page 1 and the small meta table, whatever the index's size):
    it runs at every resync, and `PRAGMA quick_check` reads every page (minutes on a cold
    100,000-fragment index). Damage deeper in the file surfaces as an error on the next read,
    which the knowledge base turns into a resync and a rebuild.

    Only SQLite opens the file: closing any other handle on it would drop this process's POSIX
    locks on it, and another process could then checkpoint and delete the -wal under us.
    """
    try:
        size = os.stat(path).st_size
        if size == 0:
            return "is empty (truncated)"
        probe = sqlite3.connect(path)  # a fresh connection: no cached pages, every page read from disk
        try:
            page_size = probe.execute("PRAGMA page_size").fetchone()[0]
            pages = probe.execute("PRAGMA page_count").fetchone()[0]
            probe.execute("SELECT count(*) FROM meta").fetchone()
        finally:
            probe.close()
    except sqlite3.DatabaseError as exc:
        return f"is damaged ({exc})"
    except OSError as exc:
        return f"can't be read ({exc.strerror})"
    wal = Path(f"{path}-wal")
    if pages * page_size > size and not (wal.exists() and wal.stat().st_size):
        return f"is shorter than its own pages ({size:,} of {pages * page_size:,} bytes: truncated)"
    return None


def _is_damage(exc: sqlite3.DatabaseError) -> bool:
    """Whether an error says the file itself is damaged, as opposed to busy, locked or out of space."""
    name = getattr(exc, "sqlite_errorname", "")
    if name in ("SQLITE_CORRUPT", "SQLITE_NOTADB"):
        return True
    text = str(exc).lower()
    if isinstance(exc, sqlite3.OperationalError) and not any(w in text for w in ("malformed", "not a database")):
        return False
    return not name or name.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB", "SQLITE_IOERR_SHORT_READ"))


class SQLiteIndex:
    """One SQLite file; opening a damaged file raises IndexCorrupt."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.notice: str | None = None
        self._readers: weakref.WeakSet[_FragmentReader] = weakref.WeakSet()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self.db = sqlite3.connect(path, check_same_thread=False)
            self.db.execute("PRAGMA foreign_keys = ON")
            with one_process_at_a_time(path):
                self.db.execute("PRAGMA journal_mode = WAL")
                migrate(self.db, INDEX_MIGRATIONS)
            # Not `PRAGMA quick_check`: it reads every page, seconds to minutes at 100,000 fragments, on
            # every CLI call and bot start. The header and meta table are checked; deeper damage surfaces
            # as an error on the first read, which rebuilds the index the same way.
            damage = _damage(path)
            if damage:
                raise sqlite3.DatabaseError(damage)
        except sqlite3.DatabaseError as exc:
            if not _is_damage(exc):  # busy, locked, a full disk: not a reason to set a live file aside
                raise IndexFileError(f"The index file {path} can't be opened ({exc}).") from exc
            raise IndexCorrupt(f"The index file {path} is damaged ({exc}).") from exc
        except OSError as exc:
            raise IndexFileError(f"The index file {path} can't be opened ({exc.strerror}).") from exc
        self._lock = threading.RLock()
        self._staging: dict[str, int] = {}  # document path → the token of its batches being written
        self._identity = _identity(path)
        self._stats: tuple[object, tuple[int, float, int]] | None = None  # (identity and generation, stats)

    @property
    def approximate_path(self) -> Path:
        """The approximate index's side file (see core.approximate), rebuilt from this file at will."""
        return self.path.with_name(self.path.name + ".hnsw")

    @classmethod
    def open_or_rebuild(cls, path: Path) -> SQLiteIndex:
        """Open the index; a damaged file is moved aside and a fresh one started (with a notice).

        Only the latest damaged copy is kept (the file and its -wal, which holds part of its
        content); older copies and every -shm, a cache SQLite rebuilds, are deleted.
        """
        try:
            return cls(path)
        except IndexCorrupt as exc:
            # Drop the failed connection now: closed later, SQLite would tidy the -wal by its old name,
            # which by then is the fresh index's.
            traceback.clear_frames(exc.__traceback__)
            gc.collect()
            aside = _set_aside(path)
            notice = f"{exc} It was moved to {aside.name} and the index is rebuilt from the documents."
            log.warning(notice)
            index = cls(path)
            index.notice = notice
            return index

    def recover(self) -> bool:
        """Reopen the file when it was deleted, replaced or damaged since it was opened; True when it did.

        A damaged file is moved aside and a fresh, empty index started with a notice; the
        caller's next sync fills it. Cheap when nothing happened: a stat, the header and the meta table.
        """
        with self._lock:
            now = _identity(self.path)
            if now is None:
                problem = "was deleted"
            elif now != self._identity:
                problem = "was replaced by another file"
            else:
                damage = _damage(self.path)
                if damage is None:
                    return False
                problem = damage
                # Moved aside before the old connection closes: SQLite then neither checkpoints our
                # pages into the damaged file nor deletes a -wal by a name that is about to be reused.
                aside = _set_aside(self.path)
                problem += f"; it was moved to {aside.name}"
            self.db.close()
            fresh = SQLiteIndex.open_or_rebuild(self.path)
            self.db, self._identity, self._staging = fresh.db, fresh._identity, {}
            notice = f"The index file {self.path} {problem} while running; the index is rebuilt from the documents."
            self.notice = fresh.notice or notice
            log.warning(self.notice)
            return True

    def _meta(self, key: str) -> str | None:
        try:
            rows = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchall()
        except sqlite3.DatabaseError as exc:
            raise IndexCorrupt(f"The index file {self.path} can't be read ({exc}).") from exc
        return rows[0][0] if rows else None

    def _bump(self) -> None:
        """Inside a write transaction: the content changed, so every reader must reload."""
        self.db.execute("UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'generation'")

    def generation(self) -> int:
        with self._lock:
            return int(self._meta("generation") or 0)

    @contextmanager
    def sole_indexer(self, wait: bool = True) -> Iterator[bool]:
        """Always this process's: SQLite's own write lock serialises the rare second indexer on one file."""
        yield True

    def embedder_id(self) -> str | None:
        with self._lock:
            return self._meta("embedder")

    def reset(self, embedder_id: str) -> None:
        with self._lock, self.db:
            self.db.execute("DELETE FROM documents")
            self.db.execute("DELETE FROM text_vectors")
            self.db.execute("INSERT OR REPLACE INTO meta VALUES ('embedder', ?)", (embedder_id,))
            self.db.execute("DELETE FROM meta WHERE key = 'dimension'")
            self._bump()

    def known(self) -> dict[str, KnownDocument]:
        with self._lock:
            try:
                # A removed document's row is history for the register; to a sync it is as if never seen.
                rows = self.db.execute(
                    "SELECT path, sha256, meta_sha256, state, error FROM documents WHERE state != 'removed'"
                ).fetchall()
            except sqlite3.DatabaseError as exc:
                raise IndexCorrupt(f"The index file {self.path} can't be read ({exc}).") from exc
        return {r[0]: KnownDocument(r[1], r[2], r[3], r[4]) for r in rows}

    def vectors_for(self, hashes: Sequence[str]) -> dict[str, np.ndarray]:
        return self._by_hash("fragments", hashes)

    def text_vectors(self, hashes: Sequence[str]) -> dict[str, np.ndarray]:
        return self._by_hash("text_vectors", hashes)

    def _by_hash(self, table: str, hashes: Sequence[str]) -> dict[str, np.ndarray]:
        """The stored vector of each known hash in `table` (fragments or text_vectors)."""
        found: dict[str, np.ndarray] = {}
        unique = list(dict.fromkeys(hashes))
        with self._lock:
            for start in range(0, len(unique), _CHUNK):
                chunk = unique[start : start + _CHUNK]
                marks = ",".join("?" * len(chunk))
                try:
                    rows = self.db.execute(f"SELECT hash, vector FROM {table} WHERE hash IN ({marks})", chunk)
                    found.update((digest, np.frombuffer(blob, dtype=np.float32)) for digest, blob in rows)
                except sqlite3.DatabaseError as exc:
                    raise IndexCorrupt(f"The index file {self.path} can't be read ({exc}).") from exc
        return found

    def put_text_vectors(self, items: Sequence[tuple[str, np.ndarray]]) -> None:
        if not items:
            return
        with self._lock, self.db:
            self.db.executemany(
                "INSERT OR IGNORE INTO text_vectors VALUES (?, ?)",
                [(digest, vector.astype(np.float32).tobytes()) for digest, vector in items],
            )

    def mark_indexing(self, document: Document) -> None:
        with self._lock, self.db:
            # ON CONFLICT: another process (the Slack and Telegram bots share a data folder) got there first.
            self.db.execute(
                "INSERT INTO documents (path, sha256, size, state) VALUES (?, ?, ?, 'queued') "
                "ON CONFLICT(path) DO NOTHING",
                (document.path, document.sha256, document.size),
            )
            self.db.execute("UPDATE documents SET state = 'indexing' WHERE path = ?", (document.path,))
            if document.audience != "public":
                # Narrowing takes effect now: the old version stays searchable until the swap, never to the public.
                narrowed = self.db.execute(
                    "UPDATE documents SET audience = ? WHERE path = ? AND audience != ?",
                    (document.audience, document.path, document.audience),
                ).rowcount
                if narrowed:
                    self._bump()
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
        with self._lock, self.db:
            doc_id = self.db.execute("SELECT id FROM documents WHERE path = ?", (path,)).fetchone()[0]
            self.db.executemany(
                "INSERT INTO fragments (document_id, position, of, section, text, vector, hash, page, staged) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        doc_id,
                        f.position,
                        f.of,
                        json.dumps(f.section),
                        f.text,
                        v.astype(np.float32).tobytes(),
                        h,
                        f.page,
                        token,
                    )
                    for f, h, v in zip(fragments, hashes, vectors, strict=True)
                ],
            )
            if len(vectors):
                self.db.execute("INSERT OR REPLACE INTO meta VALUES ('dimension', ?)", (str(vectors.shape[1]),))

    def commit(self, document: Document, count: int) -> None:
        token = self._token(document.path)
        with self._lock, self.db:  # one transaction: readers see the old fragments or the new, never neither
            doc_id = self.db.execute("SELECT id FROM documents WHERE path = ?", (document.path,)).fetchone()[0]
            staged = self.db.execute(
                "SELECT count(*) FROM fragments WHERE document_id = ? AND staged = ?", (doc_id, token)
            ).fetchone()[0]
            if staged != count:
                raise IndexFileError(
                    f"{document.path} was re-indexed by another process at the same time; its version is kept."
                )
            self.db.execute("DELETE FROM fragments WHERE document_id = ? AND staged != ?", (doc_id, token))
            self.db.execute("UPDATE fragments SET staged = 0 WHERE document_id = ?", (doc_id,))
            self.db.execute(
                "UPDATE documents SET title = ?, audience = ?, owner = ?, as_of = ?, source = ?, sha256 = ?, "
                "meta_sha256 = ?, size = ?, state = 'indexed', error = NULL, indexed_at = datetime('now'), "
                "licence = ?, review_every = ?, modified = ? WHERE id = ?",
                (*document_values(document), doc_id),
            )
            self._bump()
        del self._staging[document.path]

    def put(
        self, document: Document, fragments: Sequence[Fragment], hashes: Sequence[str], vectors: np.ndarray
    ) -> None:
        self.stage(document.path, fragments, hashes, vectors)
        self.commit(document, len(fragments))

    def abort(self, path: str) -> None:
        token = self._staging.pop(path, None)
        with self._lock, self.db:
            if token is not None:
                self.db.execute(
                    "DELETE FROM fragments WHERE staged = ? "
                    "AND document_id = (SELECT id FROM documents WHERE path = ?)",
                    (token, path),
                )
            self.db.execute(
                "UPDATE documents SET state = CASE WHEN indexed_at IS NULL THEN 'queued' ELSE 'indexed' END "
                "WHERE path = ?",
                (path,),
            )

    def fail(self, path: str, sha256: str, size: int, reason: str) -> None:
        with self._lock, self.db:
            # A document that no longer parses stops being quoted: its old text is not what the file says.
            # Its row stays (owner, title, source: the register still says whose it is).
            self.db.execute(
                "DELETE FROM fragments WHERE document_id = (SELECT id FROM documents WHERE path = ?)", (path,)
            )
            self.db.execute(
                "INSERT INTO documents (path, sha256, size, state, error) VALUES (?, ?, ?, 'failed', ?) "
                "ON CONFLICT(path) DO UPDATE SET sha256 = excluded.sha256, size = excluded.size, state = 'failed', "
                "error = excluded.error, meta_sha256 = '', indexed_at = NULL",
                (path, sha256, size, reason),
            )
            self._bump()

    def remove(self, paths: Sequence[str]) -> None:
        if not paths:
            return
        rows = [(p,) for p in paths]
        with self._lock, self.db:
            self.db.executemany(
                "DELETE FROM fragments WHERE document_id = (SELECT id FROM documents WHERE path = ?)", rows
            )
            self.db.executemany(
                "UPDATE documents SET state = 'removed', error = NULL, indexed_at = NULL WHERE path = ?", rows
            )
            self._bump()

    def failures(self) -> dict[str, str]:
        with self._lock:
            return dict(self.db.execute("SELECT path, error FROM documents WHERE state = 'failed' ORDER BY path"))

    def register(self) -> list[DocumentRecord]:
        with self._lock:
            try:
                rows = self.db.execute(
                    "SELECT d.path, d.state, d.title, d.audience, d.owner, d.as_of, d.source, d.licence, "
                    "d.review_every, d.sha256, d.size, d.error, "
                    "(SELECT count(*) FROM fragments f WHERE f.document_id = d.id AND f.staged = 0), "
                    "d.indexed_at, d.modified FROM documents d ORDER BY d.path"
                ).fetchall()
            except sqlite3.DatabaseError as exc:
                raise IndexCorrupt(f"The index file {self.path} can't be read ({exc}).") from exc
        return [DocumentRecord(*row) for row in rows]

    # What nothing refers to: fragments of no document, of a removed or failed one, and batches staged
    # for a document another process has since swapped in (that run's commit would fail anyway).
    # A document still `indexing` is left alone: its batches may be another process's work in progress.
    _ORPHANS = "FROM fragments WHERE document_id NOT IN (SELECT id FROM documents)"
    _UNINDEXED = (
        "FROM fragments WHERE document_id IN (SELECT id FROM documents WHERE state IN ('removed', 'failed', 'queued'))"
    )
    _STALE_BATCHES = (
        "FROM fragments WHERE staged != 0 AND document_id IN (SELECT id FROM documents WHERE state = 'indexed')"
    )

    def _unreferenced(self) -> Unreferenced:
        def count(where: str) -> int:
            return int(self.db.execute(f"SELECT count(*) {where}").fetchone()[0])

        removed = tuple(
            r[0] for r in self.db.execute("SELECT path FROM documents WHERE state = 'removed' ORDER BY path")
        )
        return Unreferenced(count(self._ORPHANS), count(self._UNINDEXED), count(self._STALE_BATCHES), removed)

    def unreferenced(self) -> Unreferenced:
        with self._lock:
            return self._unreferenced()

    def drop_unreferenced(self) -> Unreferenced:
        self._stats = None  # orphans go without a new generation
        with self._lock, self.db:
            found = self._unreferenced()
            for where in (self._ORPHANS, self._UNINDEXED, self._STALE_BATCHES):
                self.db.execute(f"DELETE {where}")
            self.db.execute("DELETE FROM documents WHERE state = 'removed'")
        return found

    def stats(self) -> tuple[int, float, int]:
        with self._lock:
            # Every change to live fragments moves the generation, and reading every text's length costs 3 s
            # at 1M fragments: a bot re-reading an unchanged folder every minute pays it once.
            generation = (self._identity, self.generation())
            if self._stats is not None and self._stats[0] == generation:
                return self._stats[1]
            count, mean, longest = self.db.execute(
                "SELECT count(*), avg(length(text)), max(length(text)) FROM fragments WHERE staged = 0"
            ).fetchone()
            self._stats = (generation, (count, float(mean or 0.0), int(longest or 0)))
            return self._stats[1]

    def load(self) -> Corpus:
        """What ranking needs, in memory: ids, audiences, document numbers and the vectors, streamed into one
        preallocated matrix (no second copy). The fragments' text is read for the hits only (`StoredFragments`).

        Reads through a connection of its own, in one snapshot; the corpus keeps it to read the hits' text,
        so one loaded before the file was deleted or replaced still reads the file it was loaded from.
        """
        db = self._reader_connection()
        try:
            db.execute("BEGIN")  # one snapshot: the generation and the rows it names
            try:
                corpus = self._load(db)
            finally:
                db.execute("COMMIT")
        except sqlite3.DatabaseError as exc:
            db.close()
            raise IndexCorrupt(f"The index file {self.path} can't be read ({exc}).") from exc
        except BaseException:
            db.close()
            raise
        return corpus

    def _reader_connection(self) -> sqlite3.Connection:
        """A new read connection on the file this index has open; IndexFileError when the path names another now."""
        try:
            db = sqlite3.connect(
                f"{self.path.resolve().as_uri()}?mode=rw", uri=True, check_same_thread=False, isolation_level=None
            )
        except sqlite3.DatabaseError as exc:
            raise IndexFileError(f"The index file {self.path} can't be opened ({exc}).") from exc
        if _identity(self.path) != self._identity:
            db.close()
            raise IndexFileError(f"The index file {self.path} was deleted or replaced since it was opened.")
        return db

    def _load(self, db: sqlite3.Connection) -> Corpus:
        def meta(key: str) -> str | None:
            row = db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
            return row[0] if row else None

        generation = int(meta("generation") or 0)
        dim = int(meta("dimension") or 0)
        # Only indexed documents are quoted; one being re-indexed keeps its last indexed version (its live
        # fragments) until the new one is swapped in. Removed and failed ones have none.
        # Public documents first: the public scope is then a slice of the matrix, not a copy of it.
        docs = db.execute(
            f"SELECT id, title, audience FROM documents WHERE state IN {_SEARCHED_STATES} "
            "ORDER BY audience != 'public', path"
        ).fetchall()
        doc_ids = np.array([d[0] for d in docs], dtype=np.int64)
        by_doc = np.argsort(doc_ids)
        # Ids and documents of the live fragments, from the index alone (never the rows' text or vectors),
        # by document and then id: a document's fragments are stored in position order, so ids follow positions.
        pairs = db.execute("SELECT id, document_id FROM fragments WHERE staged = 0 ORDER BY document_id, id")
        plan = np.fromiter(itertools.chain.from_iterable(pairs), dtype=np.int64).reshape(-1, 2)
        place, searched = find_rows(doc_ids[by_doc], by_doc, plan[:, 1])
        rank = place[searched]  # each row's document's place in the order above
        ids = plan[searched, 0]
        del plan
        order = np.argsort(rank, kind="stable")
        ids, rank = ids[order], rank[order]
        matrix = np.empty((len(ids), dim), dtype=np.float32)
        if len(ids):
            self._stream_vectors(db, ids, matrix)
        audiences = np.array([d[2] for d in docs], dtype=object)[rank]
        reader = _FragmentReader(self.path, db, ids, doc_ids[rank], audiences)
        self._readers.add(reader)
        return Corpus(
            ids=ids,
            fragments=StoredFragments(len(ids), reader),
            matrix=matrix,
            audiences=audiences,
            documents=doc_ids[rank],
            generation=generation,
            document_titles={int(d[0]): d[1] for d in docs},
        )

    def _stream_vectors(self, db: sqlite3.Connection, ids: np.ndarray, matrix: np.ndarray) -> None:
        """Fill `matrix` (rows in the order of `ids`) in one pass over the table in storage order, a chunk at a time."""
        by_id = np.argsort(ids)
        sorted_ids = ids[by_id]
        bytes_per_row = matrix.shape[1] * 4
        filled = 0
        # NOT INDEXED: a scan in storage order reads each page once; the index on `staged` would jump around.
        rows = db.execute("SELECT id, vector FROM fragments NOT INDEXED WHERE staged = 0")
        while chunk := rows.fetchmany(4096):
            chunk_ids = np.fromiter((r[0] for r in chunk), dtype=np.int64, count=len(chunk))
            at, wanted = find_rows(sorted_ids, by_id, chunk_ids)  # rows of documents not searched are skipped
            blobs = [r[1] for r, w in zip(chunk, wanted, strict=True) if w]
            if any(len(b) != bytes_per_row for b in blobs):
                raise IndexCorrupt(f"The index file {self.path} holds vectors of the wrong size.")
            if blobs:
                matrix[at[wanted]] = np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(blobs), -1)
                filled += len(blobs)
        if filled != len(ids):
            raise IndexCorrupt(f"The index file {self.path} lost fragments while it was read.")

    def close(self) -> None:
        # The corpora's read connections too: while any is open SQLite keeps the -wal file beside the index,
        # and a copy of the index file alone (a backup, a test's seed) would miss what it holds.
        for reader in list(self._readers):
            reader.close()
        self.db.close()


class SQLiteLog:
    """The run log (append-only: rows are inserted, never updated or deleted) and the bots' state."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._open()
        self._next_sweep = 0.0

    def _open(self) -> None:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.db = sqlite3.connect(self.path, check_same_thread=False, timeout=10.0)
            with one_process_at_a_time(self.path):
                self.db.execute("PRAGMA journal_mode = WAL")
                migrate(self.db, RUNLOG_MIGRATIONS)
        except sqlite3.DatabaseError as exc:
            raise RunLogError(
                f"The run log {self.path} can't be opened ({exc}); it is left untouched — "
                "move it aside to start a new one."
            ) from exc
        except OSError as exc:
            raise RunLogError(f"The run log {self.path} can't be opened ({exc.strerror}).") from exc
        self._identity = _identity(self.path)

    def _same_file(self) -> None:
        """Under the lock, before each use: reopen when the file was deleted or replaced under us.

        Rows written to a deleted file (the data folder removed while a bot runs) would vanish
        with its last connection. Closing the stale connection is safe: SQLite neither
        checkpoints into nor deletes the -wal of a database file that was unlinked or moved.
        """
        if _identity(self.path) == self._identity:
            return
        log.warning(
            "The run log %s was deleted or replaced while running; a new one is started there "
            "and the rows from now on go into it.",
            self.path,
        )
        self.db.close()
        try:
            self._open()
        except RunLogError:
            self._open()  # another process on the same folder may have been creating it at the same moment

    @contextmanager
    def _reading(self) -> Iterator[None]:
        with self._lock:
            self._same_file()
            yield

    @contextmanager
    def _writing(self) -> Iterator[None]:
        """The lock, the right file, one transaction."""
        with self._lock:
            self._same_file()
            with self.db:
                yield

    # --- run log ----------------------------------------------------------------------------

    def record(self, answer: Answer, surface: str, conversation: str | None) -> None:
        row = entry_values(answer, surface, conversation)
        try:
            with self._writing():
                self.db.execute(
                    f"INSERT INTO entries ({ENTRY_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    row,
                )
        except sqlite3.Error as exc:
            raise RunLogError(f"The run log {self.path} can't be written ({exc}).") from exc

    def feedback(self, answer_id: str, value: str, surface: str, who: str | None = None) -> bool:
        if value not in ("up", "down"):
            raise ValueError(f"feedback must be 'up' or 'down', not {value!r}")
        with self._writing():
            if not self.db.execute("SELECT 1 FROM entries WHERE id = ?", (answer_id,)).fetchone():
                return False
            self.db.execute(
                "INSERT INTO feedback VALUES (?, ?, ?, ?, ?)",
                (answer_id, now(), surface, value, conversation_hash(who) if who else None),
            )
        return True

    def history(self, conversation: str, limit: int = 3) -> list[Turn]:
        with self._reading():
            rows = self.db.execute(
                "SELECT question, kind, statements FROM entries WHERE conversation = ? "
                "ORDER BY at DESC, rowid DESC LIMIT ?",
                (conversation_hash(conversation), limit),
            ).fetchall()
        return turns_from(rows)

    def answer(self, answer_id: str) -> Answer | None:
        with self._reading():
            row = self.db.execute(
                f"SELECT {ANSWER_COLUMNS} FROM entries WHERE id = ?",
                (answer_id,),
            ).fetchone()
        return None if row is None else answer_from(row)

    def tail(self, n: int = 10) -> list[Entry]:
        with self._reading():
            rows = self.db.execute(
                "SELECT e.id, e.at, e.surface, e.question, e.kind, e.reason, e.statements, e.discarded, e.answerer, "
                "e.timings, (SELECT group_concat(value, ',') FROM feedback f WHERE f.answer_id = e.id) "
                "FROM entries e ORDER BY e.at DESC, e.rowid DESC LIMIT ?",
                (n,),
            ).fetchall()
        return [entry_from(r) for r in reversed(rows)]

    def since(self, at: str) -> list[Logged]:
        with self._reading():
            rows = self.db.execute(
                "SELECT e.id, e.at, e.surface, e.question, coalesce(e.standalone_question, e.question), e.kind, "
                "e.reason, e.statements, e.fragments, e.timings, "
                "(SELECT count(*) FROM feedback f WHERE f.answer_id = e.id AND f.value = 'up'), "
                "(SELECT count(*) FROM feedback f WHERE f.answer_id = e.id AND f.value = 'down') "
                "FROM entries e WHERE e.at >= ? ORDER BY e.at, e.rowid",
                (at,),
            ).fetchall()
        return [logged_from(r) for r in rows]

    # --- bot state ----------------------------------------------------------------------------

    def _sweep(self, now: float) -> None:
        """Forget state older than a day (links: 30 days) now and then, so the file stays small."""
        if now < self._next_sweep:
            return
        self._next_sweep = now + 600
        self.db.execute("DELETE FROM seen_events WHERE at < ?", (now - 86_400,))
        self.db.execute("DELETE FROM rate_slots WHERE at < ?", (now - 86_400,))
        self.db.execute("DELETE FROM links WHERE at < ?", (now - 30 * 86_400,))

    def first_time(self, key: str, ttl: float = 3600.0) -> bool:
        now = time.time()
        key = conversation_hash(key)
        with self._writing():
            self._sweep(now)
            self.db.execute("DELETE FROM seen_events WHERE key = ? AND at < ?", (key, now - ttl))
            inserted = self.db.execute("INSERT OR IGNORE INTO seen_events VALUES (?, ?)", (key, now)).rowcount
        return inserted == 1

    def link(self, key: str, conversation: str) -> None:
        with self._writing():
            self.db.execute(
                "INSERT OR REPLACE INTO links VALUES (?, ?, ?)", (conversation_hash(key), conversation, time.time())
            )

    def linked(self, key: str) -> str | None:
        with self._reading():
            row = self.db.execute("SELECT conversation FROM links WHERE key = ?", (conversation_hash(key),)).fetchone()
        return row[0] if row else None

    def take_slot(self, key: str, limit: int, window: float = 60.0) -> float:
        now = time.time()
        key = conversation_hash(key)
        with self._reading():
            self.db.execute("BEGIN IMMEDIATE")  # count and insert as one step, whichever process races us
            try:
                self._sweep(now)
                count, oldest = self.db.execute(
                    "SELECT count(*), min(at) FROM rate_slots WHERE key = ? AND at > ?", (key, now - window)
                ).fetchone()
                if count >= limit:
                    wait = window - (now - oldest)
                else:
                    self.db.execute("INSERT INTO rate_slots VALUES (?, ?)", (key, now))
                    wait = 0.0
                self.db.execute("COMMIT")
            except BaseException:
                self.db.execute("ROLLBACK")
                raise
        return max(wait, 0.0)

    def stamped(self, key: str) -> float | None:
        with self._reading():
            row = self.db.execute("SELECT at FROM stamps WHERE key = ?", (key,)).fetchone()
        return float(row[0]) if row else None

    def claim(self, key: str, every: float, now: float) -> bool:
        with self._writing():
            # One statement decides and stamps, so two processes asking at once can't both win.
            changed = self.db.execute(
                "INSERT INTO stamps VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET at = excluded.at WHERE stamps.at <= ?",
                (key, now, now - every),
            ).rowcount
        return changed == 1

    def close(self) -> None:
        self.db.close()


class SQLiteStore:
    """The index, the run log and the bots' state, in one data folder."""

    def __init__(self, data_dir: Path) -> None:
        self.index = SQLiteIndex.open_or_rebuild(data_dir / INDEX_FILE)
        try:
            log_ = SQLiteLog(data_dir / RUNLOG_FILE)
        except RunLogError:
            self.index.close()
            raise
        self.runlog = log_
        self.state = log_

    def close(self) -> None:
        self.index.close()
        self.runlog.close()
