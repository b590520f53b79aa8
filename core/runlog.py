"""The run log: every question and its answer, appended to SQLite; user data, never dropped.

It lives beside the index in its own file, so rebuilding the index never touches it.
Conversation keys are stored as salted hashes, never as raw user or channel ids.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.answers import REFUSED_TURN, Answer, Statement, Turn
from core.errors import RunLogError
from core.index import migrate

RUNLOG_FILE = "runlog.sqlite3"


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


MIGRATIONS: list[Callable[[sqlite3.Connection], None]] = [_m001_entries]


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def conversation_hash(key: str) -> str:
    """A stable, non-reversible stand-in for a raw conversation key."""
    return hashlib.sha256(f"verbatim-conversation:{key}".encode()).hexdigest()[:24]


@dataclass(frozen=True)
class Entry:
    id: str
    at: str
    surface: str
    question: str
    kind: str
    reason: str | None
    statements: list[dict[str, Any]]
    discarded: int
    answerer: str
    timings: dict[str, float]
    feedback: str


class RunLog:
    """Append-only: rows are inserted, never updated or deleted."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self.db = sqlite3.connect(path, check_same_thread=False)
            self.db.execute("PRAGMA journal_mode = WAL")
            migrate(self.db, MIGRATIONS)
        except sqlite3.DatabaseError as exc:
            raise RunLogError(
                f"The run log {path} can't be opened ({exc}); it is left untouched — move it aside to start a new one."
            ) from exc
        except OSError as exc:
            raise RunLogError(f"The run log {path} can't be opened ({exc.strerror}).") from exc

    def record(self, answer: Answer, surface: str, conversation: str | None) -> None:
        row = (
            answer.id,
            _now(),
            surface,
            conversation_hash(conversation) if conversation else None,
            answer.question,
            answer.standalone_question or answer.question,
            answer.kind,
            answer.reason,
            json.dumps([s.to_json() for s in answer.statements], ensure_ascii=False),
            answer.discarded,
            json.dumps([[h.fragment_id, round(h.score, 4)] for h in answer.retrieved]),
            json.dumps({k: round(v, 2) for k, v in answer.timings_ms.items()}),
            answer.answerer,
            answer.model_calls,
        )
        try:
            with self._lock, self.db:
                self.db.execute("INSERT INTO entries VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", row)
        except sqlite3.Error as exc:
            raise RunLogError(f"The run log {self.path} can't be written ({exc}).") from exc

    def feedback(self, answer_id: str, value: str, surface: str, who: str | None = None) -> bool:
        """Record 👍 (`up`) or 👎 (`down`) for an answer; False when the answer is unknown."""
        if value not in ("up", "down"):
            raise ValueError(f"feedback must be 'up' or 'down', not {value!r}")
        with self._lock, self.db:
            if not self.db.execute("SELECT 1 FROM entries WHERE id = ?", (answer_id,)).fetchone():
                return False
            self.db.execute(
                "INSERT INTO feedback VALUES (?, ?, ?, ?, ?)",
                (
                    answer_id,
                    _now(),
                    surface,
                    value,
                    conversation_hash(who) if who else None,
                ),
            )
        return True

    def history(self, conversation: str, limit: int = 3) -> list[Turn]:
        """The conversation's last `limit` turns, oldest first."""
        with self._lock:
            rows = self.db.execute(
                "SELECT question, kind, statements FROM entries WHERE conversation = ? "
                "ORDER BY at DESC, rowid DESC LIMIT ?",
                (conversation_hash(conversation), limit),
            ).fetchall()
        turns = []
        for question, kind, statements in reversed(rows):
            texts = [s["text"] for s in json.loads(statements)]
            turns.append(Turn(question, " ".join(texts) if kind == "answered" else REFUSED_TURN))
        return turns

    def answer(self, answer_id: str) -> Answer | None:
        """A logged answer, rebuilt for showing again (without its retrieval details)."""
        with self._lock:
            row = self.db.execute(
                "SELECT id, question, kind, reason, statements, discarded, answerer, timings FROM entries WHERE id = ?",
                (answer_id,),
            ).fetchone()
        if row is None:
            return None
        statements = tuple(Statement.from_json(s) for s in json.loads(row[4]))
        return Answer(
            id=row[0],
            question=row[1],
            kind=row[2],
            reason=row[3],
            statements=statements,
            discarded=row[5],
            retrieved=(),
            timings_ms=json.loads(row[7]),
            answerer=row[6],
        )

    def tail(self, n: int = 10) -> list[Entry]:
        with self._lock:
            rows = self.db.execute(
                "SELECT e.id, e.at, e.surface, e.question, e.kind, e.reason, e.statements, e.discarded, e.answerer, "
                "e.timings, (SELECT group_concat(value, ',') FROM feedback f WHERE f.answer_id = e.id) "
                "FROM entries e ORDER BY e.at DESC, e.rowid DESC LIMIT ?",
                (n,),
            ).fetchall()
        return [
            Entry(r[0], r[1], r[2], r[3], r[4], r[5], json.loads(r[6]), r[7], r[8], json.loads(r[9]), r[10] or "")
            for r in reversed(rows)
        ]

    def close(self) -> None:
        self.db.close()
