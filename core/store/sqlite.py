"""The embedded store: two SQLite files in the data folder.

`index.sqlite3` is rebuildable (a damaged one is moved aside and started anew);
`runlog.sqlite3` holds user data and the bots' shared state, and is never dropped.
Both use WAL, so the Slack and Telegram processes can share one data folder. The SQL is the
shared store's (`core.store.index`, `core.store.runlog`); what is here is SQLite's own: its files.
"""

from __future__ import annotations

import gc
import logging
import shutil
import sqlite3
import threading
import traceback
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from core.common.errors import DiskFull, IndexCorrupt, IndexFileError, RunLogError
from core.common.values import LogRecord
from core.store.corpus import Corpus
from core.store.index import SQLIndex
from core.store.migrations import INDEX_MIGRATIONS, RUNLOG_MIGRATIONS, migrate, one_process_at_a_time
from core.store.records import INDEX_FILE, RUNLOG_FILE, Disk
from core.store.runlog import SQLRunLog
from core.store.secret import folder_secret
from core.store.sql import Sql, SQLiteDialect
from core.store.sqlite_corpus import FragmentReader, load_corpus
from core.store.sqlite_files import damage, full_disk, identity, is_damage, is_full, set_aside

log = logging.getLogger(__name__)


class SQLiteIndex(SQLIndex):
    """One SQLite file; opening a damaged file raises IndexCorrupt."""

    dialect = SQLiteDialect()

    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = path
        self.notice: str | None = None
        self._readers: weakref.WeakSet[FragmentReader] = weakref.WeakSet()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self.db = sqlite3.connect(path, check_same_thread=False)
            self.db.execute("PRAGMA foreign_keys = ON")
            with one_process_at_a_time(path):
                self.db.execute("PRAGMA journal_mode = WAL")
                migrate(self.db, INDEX_MIGRATIONS, self.dialect)
            # Not `PRAGMA quick_check`: it reads every page, seconds to minutes at 100,000 fragments, on
            # every CLI call and bot start. The header and meta table are checked; deeper damage surfaces
            # as an error on the first read, which rebuilds the index the same way.
            found = damage(path)
            if found:
                raise sqlite3.DatabaseError(found)
        except sqlite3.DatabaseError as exc:
            if is_full(exc):
                raise full_disk(f"The index file {path}") from exc
            if not is_damage(exc):  # busy, locked: not a reason to set a live file aside
                raise IndexFileError(f"The index file {path} can't be opened ({exc}).") from exc
            raise IndexCorrupt(f"The index file {path} is damaged ({exc}).") from exc
        except OSError as exc:
            if is_full(exc):
                raise full_disk(f"The index file {path}") from exc
            raise IndexFileError(f"The index file {path} can't be opened ({exc.strerror}).") from exc
        self._lock = threading.RLock()
        self._identity = identity(path)

    @property
    def approximate_path(self) -> Path:
        """The approximate index's side file (see core.vectors.approximate), rebuilt from this file at will."""
        return self.path.with_name(self.path.name + ".hnsw")

    def damaged_copies(self) -> list[Path]:
        return sorted(p for p in self.path.parent.glob("*.corrupt-*") if p.is_file())

    def disk(self) -> Disk | None:
        try:
            return Disk(str(self.path.parent), shutil.disk_usage(self.path.parent).free)
        except OSError:  # the data folder deleted under a running bot: the sync recreates it, unchecked
            return None

    @contextmanager
    def _read(self) -> Iterator[Sql]:
        with self._lock:
            try:
                yield Sql(self.db, self.dialect)
            except sqlite3.DatabaseError as exc:
                raise IndexCorrupt(f"The index file {self.path} can't be read ({exc}).") from exc

    @contextmanager
    def _write(self) -> Iterator[Sql]:
        try:
            with self._lock, self.db:
                yield Sql(self.db, self.dialect)
        except sqlite3.Error as exc:
            if is_full(exc):
                raise full_disk(f"The index file {self.path}") from exc
            raise

    def _set_dimension(self, db: Sql, dim: int) -> None:
        self._set_meta(db, "dimension", str(dim))

    @contextmanager
    def sole_indexer(self, wait: bool = True) -> Iterator[bool]:
        """Always this process's: SQLite's own write lock serialises the rare second indexer on one file."""
        yield True

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
            aside = set_aside(path)
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
            now = identity(self.path)
            if now is None:
                problem = "was deleted"
            elif now != self._identity:
                problem = "was replaced by another file"
            else:
                found = damage(self.path)
                if found is None:
                    return False
                problem = found
                # Moved aside before the old connection closes: SQLite then neither checkpoints our
                # pages into the damaged file nor deletes a -wal by a name that is about to be reused.
                aside = set_aside(self.path)
                problem += f"; it was moved to {aside.name}"
            self.db.close()
            fresh = SQLiteIndex.open_or_rebuild(self.path)
            self.db, self._identity, self._staging, self._stats = fresh.db, fresh._identity, {}, None
            notice = f"The index file {self.path} {problem} while running; the index is rebuilt from the documents."
            self.notice = fresh.notice or notice
            log.warning(self.notice)
            return True

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
                corpus, reader = load_corpus(self.path, db)
            finally:
                db.execute("COMMIT")
        except sqlite3.DatabaseError as exc:
            db.close()
            raise IndexCorrupt(f"The index file {self.path} can't be read ({exc}).") from exc
        except BaseException:
            db.close()
            raise
        self._readers.add(reader)
        return corpus

    def _reader_connection(self) -> sqlite3.Connection:
        """A new read connection on the file this index has open; IndexFileError when the path names another now."""
        try:
            db = sqlite3.connect(
                f"{self.path.resolve().as_uri()}?mode=rw", uri=True, check_same_thread=False, isolation_level=None
            )
        except sqlite3.DatabaseError as exc:
            raise IndexFileError(f"The index file {self.path} can't be opened ({exc}).") from exc
        if identity(self.path) != self._identity:
            db.close()
            raise IndexFileError(f"The index file {self.path} was deleted or replaced since it was opened.")
        return db

    def close(self) -> None:
        # The corpora's read connections too: while any is open SQLite keeps the -wal file beside the index,
        # and a copy of the index file alone (a backup, a test's seed) would miss what it holds.
        for reader in list(self._readers):
            reader.close()
        self.db.close()


class SQLiteLog(SQLRunLog):
    """The run log (append-only: rows are inserted, never updated or deleted) and the bots' state."""

    dialect = SQLiteDialect()

    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = path
        self._lock = threading.Lock()
        self._open()

    def _open(self) -> None:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.db = sqlite3.connect(self.path, check_same_thread=False, timeout=10.0)
            with one_process_at_a_time(self.path):
                self.db.execute("PRAGMA journal_mode = WAL")
                migrate(self.db, RUNLOG_MIGRATIONS, self.dialect)
        except (sqlite3.DatabaseError, OSError) as exc:
            if is_full(exc):  # the file is fine: moving it aside would only lose the log
                raise full_disk(f"The run log {self.path}") from exc
            if isinstance(exc, OSError):
                raise RunLogError(f"The run log {self.path} can't be opened ({exc.strerror}).") from exc
            raise RunLogError(
                f"The run log {self.path} can't be opened ({exc}); it is left untouched — "
                "move it aside to start a new one."
            ) from exc
        self._identity = identity(self.path)
        # Read (or made) once: a data folder deleted under a running bot gets the key in use back, not a new one.
        self.secret = folder_secret(self.path.parent, getattr(self, "secret", None))

    def _same_file(self) -> None:
        """Under the lock, before each use: reopen when the file was deleted or replaced under us.

        Rows written to a deleted file (the data folder removed while a bot runs) would vanish
        with its last connection. Closing the stale connection is safe: SQLite neither
        checkpoints into nor deletes the -wal of a database file that was unlinked or moved.
        """
        if identity(self.path) == self._identity:
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
    def _read(self, wait: float | None = None) -> Iterator[Sql]:
        with self._lock:
            self._same_file()
            yield Sql(self.db, self.dialect)

    @contextmanager
    def _write(self, wait: float | None = None) -> Iterator[Sql]:
        """The lock, the right file, one transaction."""
        with self._lock, self._full_disk_said():
            self._same_file()
            with self.db:
                yield Sql(self.db, self.dialect)

    @contextmanager
    def _serialized(self, key: str) -> Iterator[Sql]:
        """SQLite's write lock, taken at the start: no other process counts between our count and insert."""
        with self._lock, self._full_disk_said():
            self._same_file()
            self.db.execute("BEGIN IMMEDIATE")
            try:
                yield Sql(self.db, self.dialect)
                self.db.execute("COMMIT")
            except BaseException:
                if self.db.in_transaction:
                    self.db.execute("ROLLBACK")
                raise

    @contextmanager
    def _full_disk_said(self) -> Iterator[None]:
        """A write that fails for want of space is a `DiskFull` sentence, not sqlite3's error."""
        try:
            yield
        except sqlite3.Error as exc:
            if is_full(exc):
                raise full_disk(f"The run log {self.path}") from exc
            raise

    def record(self, entry: LogRecord, surface: str, conversation: str | None) -> None:
        try:
            super().record(entry, surface, conversation)
        except sqlite3.Error as exc:
            raise RunLogError(f"The run log {self.path} can't be written ({exc}).") from exc

    def close(self) -> None:
        self.db.close()


class SQLiteStore:
    """The index, the run log and the bots' state, in one data folder."""

    def __init__(self, data_dir: Path) -> None:
        self.where = str(data_dir)
        self.index = SQLiteIndex.open_or_rebuild(data_dir / INDEX_FILE)
        try:
            log_ = SQLiteLog(data_dir / RUNLOG_FILE)
        except (RunLogError, DiskFull):
            self.index.close()
            raise
        self.runlog = log_
        self.state = log_

    @staticmethod
    def exists(data_dir: Path) -> bool:
        """Whether `data_dir` holds an index to open (opening creates one where there is none)."""
        return (data_dir / INDEX_FILE).is_file()

    def close(self) -> None:
        self.index.close()
        self.runlog.close()
