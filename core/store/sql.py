"""What differs between the engines, said once: the dialect the shared index and run log write their SQL in.

The SQL in `core.store.index` and `core.store.runlog` is written with `?` placeholders and
standard upserts (`ON CONFLICT … DO NOTHING / DO UPDATE`), which both engines read; a dialect
adds what they don't share: the placeholder, the current time, a list parameter, the vector
column's encoding, the order rows were inserted in and the byte order of text.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager
from typing import Any, cast

import numpy as np


class Dialect:
    """One engine's SQL differences; the shared code never names an engine."""

    now = "datetime('now')"  # the current UTC time as 'YYYY-MM-DD HH:MM:SS'
    inserted = "rowid"  # a column that orders rows as they were inserted
    byte_order = ""  # added after a text column to order it by bytes, whatever the database's locale
    lock_row = ""  # added to a SELECT that locks the rows it reads until the transaction ends
    group_concat = "group_concat"  # the aggregate joining texts with a separator

    def transaction(self, db: Any) -> AbstractContextManager[Any]:
        """A transaction on the engine's own connection (sqlite3's connection is one)."""
        return cast("AbstractContextManager[Any]", db)

    def sql(self, text: str) -> str:
        """The statement with this engine's placeholders."""
        return text

    def any_of(self, column: str, values: Sequence[Any]) -> Iterator[tuple[str, list[Any]]]:
        """(condition, parameters) that together match `column` against every value, a chunk at a time."""
        raise NotImplementedError

    def vector(self, vector: np.ndarray) -> Any:
        """A vector as the `embedding` column takes it."""
        raise NotImplementedError

    def array(self, value: Any) -> np.ndarray:
        """A float32 vector from what the `embedding` column returns."""
        raise NotImplementedError


class Sql:
    """A connection in one dialect: statements written once, run with the engine's placeholders."""

    def __init__(self, db: Any, dialect: Dialect) -> None:
        self.db, self.dialect = db, dialect

    def execute(self, statement: str, params: Sequence[Any] = ()) -> Any:
        return self.db.execute(self.dialect.sql(statement), params)

    def executemany(self, statement: str, rows: Sequence[Sequence[Any]]) -> None:
        if rows:
            self.db.cursor().executemany(self.dialect.sql(statement), rows)

    def value(self, statement: str, params: Sequence[Any] = ()) -> Any:
        """The first column of the first row; None when there is none."""
        row = self.execute(statement, params).fetchone()
        return None if row is None else row[0]

    def all(self, statement: str, params: Sequence[Any] = ()) -> list[Any]:
        return list(self.execute(statement, params).fetchall())


class SQLiteDialect(Dialect):
    """SQLite: `?` placeholders, vectors as float32 bytes, `IN (…)` lists of at most `CHUNK` values."""

    CHUNK = 500  # host parameters per IN (...) query, well under SQLite's limit

    def any_of(self, column: str, values: Sequence[Any]) -> Iterator[tuple[str, list[Any]]]:
        for start in range(0, len(values), self.CHUNK):
            chunk = list(values[start : start + self.CHUNK])
            yield f"{column} IN ({','.join('?' * len(chunk))})", chunk

    def vector(self, vector: np.ndarray) -> Any:
        return vector.astype(np.float32).tobytes()

    def array(self, value: Any) -> np.ndarray:
        return np.frombuffer(value, dtype=np.float32)


class PostgresDialect(Dialect):
    """PostgreSQL + pgvector: `%s` placeholders, a `vector` column, one `= ANY(array)` for any list."""

    now = "to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS')"
    inserted = "seq"
    byte_order = ' COLLATE "C"'  # the same byte order as SQLite, whatever the database's locale
    lock_row = " FOR UPDATE"
    group_concat = "string_agg"

    def transaction(self, db: Any) -> AbstractContextManager[Any]:
        return cast("AbstractContextManager[Any]", db.transaction())

    def sql(self, text: str) -> str:
        return text.replace("?", "%s")

    def any_of(self, column: str, values: Sequence[Any]) -> Iterator[tuple[str, list[Any]]]:
        if values:
            yield f"{column} = ANY(?)", [list(values)]

    def vector(self, vector: np.ndarray) -> Any:
        return np.asarray(vector, dtype=np.float32)

    def array(self, value: Any) -> np.ndarray:
        """What pgvector returns: a `Vector` since pgvector-python 0.4, an array before."""
        return np.asarray(value.to_numpy() if hasattr(value, "to_numpy") else value, dtype=np.float32)
