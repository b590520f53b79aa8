"""The SQLite files themselves: which file a path names, whether it is damaged, and setting one aside.

Only SQLite opens a live database file here: closing any other handle on it would drop this
process's POSIX locks on it, and another process could then checkpoint and delete the -wal under us.
"""

from __future__ import annotations

import errno
import glob
import os
import sqlite3
import time
from pathlib import Path

from core.common.errors import DiskFull


def identity(path: Path) -> tuple[int, int] | None:
    """Which file `path` names now (device, inode); None when there is none."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return None
    return info.st_dev, info.st_ino


def set_aside(path: Path) -> Path:
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


def damage(path: Path) -> str | None:
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


def is_full(exc: BaseException) -> bool:
    """Whether an error says the disk (or the user's quota) is full: the file is fine, the space is not."""
    if isinstance(exc, OSError):
        return exc.errno in (errno.ENOSPC, errno.EDQUOT)
    if not isinstance(exc, sqlite3.Error):
        return False
    return getattr(exc, "sqlite_errorname", "") == "SQLITE_FULL" or "disk is full" in str(exc).lower()


def full_disk(what: str) -> DiskFull:
    """The one sentence for `what` (e.g. "The run log var/runlog.sqlite3") on a full disk."""
    return DiskFull(f"{what} can't be written: the disk is full. Free some space; what it holds is intact.")


def is_damage(exc: sqlite3.DatabaseError) -> bool:
    """Whether an error says the file itself is damaged, as opposed to busy, locked or out of space."""
    name = getattr(exc, "sqlite_errorname", "")
    if name in ("SQLITE_CORRUPT", "SQLITE_NOTADB"):
        return True
    text = str(exc).lower()
    if isinstance(exc, sqlite3.OperationalError) and not any(w in text for w in ("malformed", "not a database")):
        return False
    return not name or name.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB", "SQLITE_IOERR_SHORT_READ"))
