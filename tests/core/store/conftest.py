"""The store's two engines as one fixture: a test of what every store does asks for `engine` and runs once on
SQLite and once on PostgreSQL. PostgreSQL's run is skipped where no server can be started, and fails under CI
(tests/postgres.py)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest

from core.store import INDEX_FILE, Store, open_store

ENGINES = ["sqlite", "postgres"]


@dataclass
class Engine:
    """One place a store lives, a data folder (SQLite) or a database (PostgreSQL), and the stores opened on it."""

    name: str
    data_dir: Path
    database_url: str = ""  # "" on SQLite
    server: Any = None  # the PostgreSQL server that holds the database; None on SQLite
    opened: list[Store] = field(default_factory=list)

    def open(self) -> Store:
        """A store on this place, as another process, replica or restart opens it; closed after the test."""
        self.opened.append(open_store(self.data_dir, self.database_url))
        return self.opened[-1]

    def query(self, sql: str, file: str = INDEX_FILE) -> list[tuple[Any, ...]]:
        """Rows read past the store, straight from the engine; on SQLite `file` names the file holding the table."""
        if self.server is None:
            with closing(sqlite3.connect(self.data_dir / file)) as db:
                return db.execute(sql).fetchall()
        import psycopg

        with psycopg.connect(self.database_url) as pg:
            return pg.execute(sql).fetchall()

    def another(self, name: str) -> Engine:
        """A new, empty place on the same engine (another data folder, or another database on the same server); its
        stores are closed with this place's."""
        if self.server is None:
            return Engine(self.name, self.data_dir.with_name(name), opened=self.opened)
        import psycopg

        database = f"{urlparse(self.database_url).path.lstrip('/')}_{name}"
        with psycopg.connect(self.server.get_uri(), autocommit=True) as pg:
            pg.execute(f"DROP DATABASE IF EXISTS {database}")
            pg.execute(f"CREATE DATABASE {database}")
        return Engine(self.name, self.data_dir.with_name(name), self.server.get_uri(database), self.server, self.opened)

    def close(self) -> None:
        for store in self.opened:
            store.close()


@pytest.fixture(params=ENGINES)
def engine(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Engine]:
    """An empty place for stores, on each engine in turn: nothing is created until a test opens a store."""
    if request.param == "postgres":
        place = Engine("postgres", tmp_path / "store", request.getfixturevalue("database_url"))
        place.server = request.getfixturevalue("pg_server")
    else:
        place = Engine("sqlite", tmp_path / "store")
    yield place
    place.close()
