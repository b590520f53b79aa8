"""The run log's and the bots' state's SQL, once for every engine (see `RunLogStore` and `StateStore`).

The run log is append-only: rows are inserted, never updated or deleted. An engine subclasses
`SQLRunLog` with how it connects (`_read`, `_write`) and how it serialises one key's rate slots.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any

from core.common.values import LogRecord
from core.store.protocols import ACK_WAIT
from core.store.records import Logged
from core.store.secret import keyed_hash
from core.store.sql import Dialect, Sql

# The columns `record` fills, in its order.
_ENTRY_COLUMNS = (
    "id, at, surface, conversation, question, standalone_question, kind, reason, statements, discarded, "
    "fragments, timings, answerer, model_calls, calculations, scope"
)
# What every read of the log selects from `entries e`, in `_logged`'s order: the record, then the row's own.
_LOGGED_COLUMNS = (
    "e.id, e.question, e.kind, e.reason, e.statements, e.discarded, e.answerer, e.timings, e.calculations, e.scope, "
    "coalesce(e.standalone_question, e.question), e.fragments, e.model_calls, e.at, e.surface, "
    "(SELECT count(*) FROM feedback f WHERE f.answer_id = e.id AND f.value = 'up'), "
    "(SELECT count(*) FROM feedback f WHERE f.answer_id = e.id AND f.value = 'down')"
)


def now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def _logged(r: Sequence[Any]) -> Logged:
    """One row of `_LOGGED_COLUMNS`."""
    return Logged(
        id=r[0],
        question=r[1],
        kind=r[2],
        reason=r[3],
        statements=json.loads(r[4]),
        discarded=r[5],
        answerer=r[6],
        timings=json.loads(r[7]),
        calculations=json.loads(r[8]),
        scope=tuple(a for a in r[9].split(",") if a),
        standalone_question=r[10],
        fragments=tuple((int(f), float(score)) for f, score in json.loads(r[11])),
        model_calls=r[12],
        at=r[13],
        surface=r[14],
        up=int(r[15]),
        down=int(r[16]),
    )


class SQLRunLog:
    """The run log and the bots' shared state in one SQL database; an engine supplies the connection."""

    dialect: Dialect
    secret: bytes  # the installation's id key (core.store.secret), set by the engine when it opens

    def __init__(self) -> None:
        self._next_sweep = 0.0

    def hashed(self, key: str) -> str:
        return keyed_hash(self.secret, key)

    # --- what an engine supplies ------------------------------------------------------------------

    def _read(self, wait: float | None = None) -> AbstractContextManager[Sql]:
        """A read; `wait` as for `_write`."""
        raise NotImplementedError

    def _write(self, wait: float | None = None) -> AbstractContextManager[Sql]:
        """One transaction; `wait` bounds how long it may wait for a connection (an engine that has one)."""
        raise NotImplementedError

    def _serialized(self, key: str) -> AbstractContextManager[Sql]:
        """One transaction that no other process runs at the same time for the same `key`."""
        raise NotImplementedError

    # --- run log ----------------------------------------------------------------------------------

    def record(self, entry: LogRecord, surface: str, conversation: str | None) -> None:
        row = (
            entry.id,
            now(),
            surface,
            self.hashed(conversation) if conversation else None,
            entry.question,
            entry.standalone_question or entry.question,
            entry.kind,
            entry.reason,
            json.dumps(entry.statements, ensure_ascii=False),
            entry.discarded,
            json.dumps([list(f) for f in entry.fragments]),
            json.dumps(entry.timings),
            entry.answerer,
            entry.model_calls,
            json.dumps(entry.calculations, ensure_ascii=False),
            ",".join(entry.scope),
        )
        marks = ", ".join("?" * len(row))
        with self._write() as db:
            db.execute(f"INSERT INTO entries ({_ENTRY_COLUMNS}) VALUES ({marks})", row)

    def feedback(self, answer_id: str, value: str, surface: str, who: str | None = None) -> bool:
        if value not in ("up", "down"):
            raise ValueError(f"feedback must be 'up' or 'down', not {value!r}")
        with self._write() as db:
            if db.value("SELECT 1 FROM entries WHERE id = ?", (answer_id,)) is None:
                return False
            db.execute(
                "INSERT INTO feedback VALUES (?, ?, ?, ?, ?)",
                (answer_id, now(), surface, value, self.hashed(who) if who else None),
            )
        return True

    def history(self, conversation: str, limit: int = 3) -> list[Logged]:
        with self._read() as db:
            rows = db.all(
                f"SELECT {_LOGGED_COLUMNS} FROM entries e WHERE e.conversation = ? "
                f"ORDER BY e.at DESC, e.{self.dialect.inserted} DESC LIMIT ?",
                (self.hashed(conversation), limit),
            )
        return [_logged(r) for r in reversed(rows)]

    def answer(self, answer_id: str) -> Logged | None:
        with self._read() as db:
            row = db.execute(f"SELECT {_LOGGED_COLUMNS} FROM entries e WHERE e.id = ?", (answer_id,)).fetchone()
        return None if row is None else _logged(row)

    def tail(self, n: int = 10) -> list[Logged]:
        with self._read() as db:
            rows = db.all(
                f"SELECT {_LOGGED_COLUMNS} FROM entries e ORDER BY e.at DESC, e.{self.dialect.inserted} DESC LIMIT ?",
                (n,),
            )
        return [_logged(r) for r in reversed(rows)]

    def since(self, at: str) -> list[Logged]:
        with self._read() as db:
            rows = db.all(
                f"SELECT {_LOGGED_COLUMNS} FROM entries e WHERE e.at >= ? ORDER BY e.at, e.{self.dialect.inserted}",
                (at,),
            )
        return [_logged(r) for r in rows]

    # --- bot state --------------------------------------------------------------------------------

    def _sweep(self, db: Sql, now: float) -> None:
        """Forget state older than a day (links: 30 days) now and then, so the tables stay small."""
        if now < self._next_sweep:
            return
        self._next_sweep = now + 600
        db.execute("DELETE FROM seen_events WHERE at < ?", (now - 86_400,))
        db.execute("DELETE FROM rate_slots WHERE at < ?", (now - 86_400,))
        db.execute("DELETE FROM links WHERE at < ?", (now - 30 * 86_400,))

    ACK_WAIT = ACK_WAIT  # first_time is asked before Slack's acknowledgement

    def first_time(self, key: str, ttl: float = 3600.0) -> bool:
        now = time.time()
        key = self.hashed(key)
        with self._write(self.ACK_WAIT) as db:  # fail in time for Slack's redelivery, never after it
            self._sweep(db, now)
            db.execute("DELETE FROM seen_events WHERE key = ? AND at < ?", (key, now - ttl))
            # The unique key decides: a process racing us waits for our commit, then inserts nothing.
            inserted = db.execute("INSERT INTO seen_events VALUES (?, ?) ON CONFLICT (key) DO NOTHING", (key, now))
        return bool(inserted.rowcount == 1)

    def link(self, key: str, conversation: str) -> None:
        with self._write() as db:
            db.execute(
                "INSERT INTO links VALUES (?, ?, ?) ON CONFLICT (key) DO UPDATE "
                "SET conversation = excluded.conversation, at = excluded.at",
                (self.hashed(key), conversation, time.time()),
            )

    def linked(self, key: str, wait: float | None = None) -> str | None:
        with self._read(wait) as db:
            found = db.value("SELECT conversation FROM links WHERE key = ?", (self.hashed(key),))
        return None if found is None else str(found)

    def take_slot(self, key: str, limit: int, window: float = 60.0) -> float:
        now = time.time()
        key = self.hashed(key)
        with self._serialized(key) as db:  # count and insert as one step, whichever process races us
            self._sweep(db, now)
            count, oldest = db.execute(
                "SELECT count(*), min(at) FROM rate_slots WHERE key = ? AND at > ?", (key, now - window)
            ).fetchone()
            if count >= limit:
                wait = window - (now - oldest)
            else:
                db.execute("INSERT INTO rate_slots VALUES (?, ?)", (key, now))
                wait = 0.0
        return max(wait, 0.0)

    def stamped(self, key: str) -> float | None:
        with self._read() as db:
            at = db.value("SELECT at FROM stamps WHERE key = ?", (key,))
        return None if at is None else float(at)

    def claim(self, key: str, every: float, now: float) -> bool:
        with self._write() as db:
            # One statement decides and stamps, so two processes asking at once can't both win.
            changed = db.execute(
                "INSERT INTO stamps VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET at = excluded.at "
                "WHERE stamps.at <= ?",
                (key, now, now - every),
            ).rowcount
        return bool(changed == 1)
