"""Which engine holds a store: the one place that decides. Nothing here imports an engine until a store is
opened, so importing `core` opens no database."""

from __future__ import annotations

from pathlib import Path

from core.store.protocols import Store


def _in_database(database_url: str) -> bool:
    """The one place that decides the engine: PostgreSQL for a `postgresql://…` URL, else SQLite."""
    return database_url.startswith(("postgresql://", "postgres://"))


def open_store(data_dir: Path | str, database_url: str = "", wait: float = 30.0) -> Store:
    """The PostgreSQL store when `database_url` is `postgresql://…` (shared by replicas; a server that can't
    be reached is tried again for `wait` seconds), else the embedded SQLite store in `data_dir` (a damaged
    index is moved aside and rebuilt)."""
    if _in_database(database_url):
        from core.store.postgres import PostgresStore

        return PostgresStore(database_url, wait)
    from core.store.sqlite import SQLiteStore

    return SQLiteStore(Path(data_dir))


def existing_store(data_dir: Path | str, database_url: str = "", wait: float = 30.0) -> Store | None:
    """As `open_store`, but None where that would create a store: no SQLite index in `data_dir` yet."""
    if not _in_database(database_url):
        from core.store.sqlite import SQLiteStore

        if not SQLiteStore.exists(Path(data_dir)):
            return None
    return open_store(data_dir, database_url, wait)
