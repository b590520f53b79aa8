"""Rows the same in every store (a run-log entry, a document's register row), and how they become values again.

Each store keeps its own SQL (placeholders, row order, locking); the columns and their
encoding live here once, so SQLite and PostgreSQL can't drift apart.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from core.answers import REFUSED_TURN, Answer, Calculation, Statement, Turn
from core.store import Entry, Logged, conversation_hash

if TYPE_CHECKING:
    from core.ingest.documents import Document

# The columns `entry_values` fills, in its order.
ENTRY_COLUMNS = (
    "id, at, surface, conversation, question, standalone_question, kind, reason, statements, discarded, "
    "fragments, timings, answerer, model_calls, calculations, scope"
)
# The columns `answer_from` reads, in its order.
ANSWER_COLUMNS = "id, question, kind, reason, statements, discarded, answerer, timings, calculations, scope"


def document_values(document: Document) -> tuple[Any, ...]:
    """A document's register values after indexing, in the order of the stores' UPDATE: title, audience,
    owner, as_of, source, sha256, meta_sha256, size, licence, review_every, modified."""
    meta = document.meta
    return (
        document.title,
        document.audience,
        meta.get("owner") or None,
        meta.get("as_of") or None,
        meta.get("source") or None,
        document.sha256,
        document.meta_sha256,
        document.size,
        meta.get("licence") or meta.get("license") or None,
        meta.get("review_every") or None,
        document.modified or None,
    )


def now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def entry_values(answer: Answer, surface: str, conversation: str | None) -> tuple[Any, ...]:
    """One answer as a run-log row; the conversation key only hashed."""
    return (
        answer.id,
        now(),
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
        json.dumps([c.to_json() for c in answer.calculations], ensure_ascii=False),
        ",".join(answer.scope),
    )


def answer_from(row: Sequence[Any]) -> Answer:
    """A logged answer (ANSWER_COLUMNS), rebuilt for showing again, without its retrieval details."""
    return Answer(
        id=row[0],
        question=row[1],
        kind=row[2],
        reason=row[3],
        statements=tuple(Statement.from_json(s) for s in json.loads(row[4])),
        discarded=row[5],
        retrieved=(),
        timings_ms=json.loads(row[7]),
        answerer=row[6],
        calculations=tuple(Calculation.from_json(c) for c in json.loads(row[8])),
        scope=tuple(a for a in row[9].split(",") if a),
    )


def turns_from(rows: Sequence[Sequence[Any]]) -> list[Turn]:
    """(question, kind, statements) rows, newest first, as history oldest first."""
    turns = []
    for question, kind, statements in reversed(rows):
        texts = [s["text"] for s in json.loads(statements)]
        turns.append(Turn(question, " ".join(texts) if kind == "answered" else REFUSED_TURN))
    return turns


def entry_from(r: Sequence[Any]) -> Entry:
    """id, at, surface, question, kind, reason, statements, discarded, answerer, timings, feedback."""
    return Entry(r[0], r[1], r[2], r[3], r[4], r[5], json.loads(r[6]), r[7], r[8], json.loads(r[9]), r[10] or "")


def logged_from(r: Sequence[Any]) -> Logged:
    """id, at, surface, question, standalone, kind, reason, statements, fragments, timings, up, down."""
    return Logged(
        r[0],
        r[1],
        r[2],
        r[3],
        r[4],
        r[5],
        r[6],
        json.loads(r[7]),
        tuple((int(f), float(score)) for f, score in json.loads(r[8])),
        json.loads(r[9]),
        int(r[10]),
        int(r[11]),
    )
