"""The connection pool on the shared PostgreSQL database, and the sentences for when it can't be reached.

A database that can't be reached at start-up is tried again for a while
(`VERBATIM_DATABASE_WAIT`), then a `ConfigError` sentence; one that drops mid-run is a
`StoreUnavailable` sentence for that use, and the pool reconnects on the next. Migrations are
applied at start-up under an advisory lock, so two replicas starting together don't both apply them.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import Any
from urllib.parse import urlsplit

import psycopg
import psycopg.errors
from pgvector.psycopg import register_vector
from psycopg_pool import ConnectionPool, PoolTimeout

from core.common.errors import ConfigError, DiskFull, StoreUnavailable
from core.store.migrations import POSTGRES_MIGRATIONS, migrate
from core.store.sql import PostgresDialect

log = logging.getLogger("core.store.postgres")
# psycopg_pool warns at every failed reconnection attempt; an outage is told once per use that meets it.
logging.getLogger("psycopg.pool").setLevel(logging.ERROR)

# Advisory lock keys (any 64-bit numbers, the same in every replica).
MIGRATION_LOCK = 0x5645_5242_4D49_4701  # applying schema migrations
INDEXER_LOCK = 0x5645_5242_494E_4401  # one indexer at a time


def _where(url: str) -> str:
    """The server a URL names, without its password, for a sentence a person reads."""
    parts = urlsplit(url)
    host = parts.hostname or "the local socket"
    return f"{host}:{parts.port}" if parts.port else host


def _no_pgvector(exc: psycopg.Error) -> bool:
    """CREATE EXTENSION vector failed because the server has no pgvector installed."""
    text = str(exc).lower()
    return 'extension "vector"' in text and ("not available" in text or "could not open extension control" in text)


def _migrate_locked(db: psycopg.Connection[Any]) -> list[str]:
    """Apply the migrations this database has not seen, under an advisory lock; the names applied."""
    db.execute("SELECT pg_advisory_lock(%s)", (MIGRATION_LOCK,))
    try:
        return migrate(db, POSTGRES_MIGRATIONS, PostgresDialect())
    finally:
        db.execute("SELECT pg_advisory_unlock(%s)", (MIGRATION_LOCK,))


# --- the shared connection pool ---------------------------------------------------------------------


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


class Database:
    """A connection pool on one database; each `use` is one transaction, an unreachable server `StoreUnavailable`."""

    def __init__(self, url: str, wait: float, timeout: float, max_size: int = 8) -> None:
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
            timeout=timeout,
            reconnect_timeout=RECONNECT_WINDOW,
        )

    def _migrate(self, wait: float) -> list[str]:
        """Connect and apply the migrations; a server that is down or starting is tried again for `wait` s."""
        deadline = time.monotonic() + wait
        delay = 0.5
        while True:
            try:
                with psycopg.connect(self.url, autocommit=True, connect_timeout=5) as db:
                    return _migrate_locked(db)
            except psycopg.Error as exc:
                if not _transient(exc) or time.monotonic() + delay > deadline:
                    tried = f", tried for {wait:.0f} s" if _transient(exc) and wait >= 1 else ""
                    if _no_pgvector(exc):
                        raise ConfigError(
                            f"The PostgreSQL server at {self.where} has no pgvector extension, which Verbatim needs "
                            "for its vectors: install it on the server (apt install postgresql-NN-pgvector for "
                            "server version NN, from Debian 13, Ubuntu or Debian 12 with apt.postgresql.org; or "
                            "use the pgvector/pgvector image; docs/deployment.md has the recipes) and start again."
                        ) from exc
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
        except psycopg.errors.DiskFull as exc:  # an OperationalError too, but the server is up: nothing to retry
            raise DiskFull(
                f"The PostgreSQL database at {self.where} can't be written: its disk is full. Free some space "
                "on the database server; what it holds is intact."
            ) from exc
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
        wait its whole timeout for it during an outage; a direct connection is refused at once while the
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
