"""The records the store keeps and hands back: a document as the register knows it, a run-log row as `verbatim
log` and the gap report read it, the unkeyed conversation hash of old rows, and the embedded store's file names."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import NamedTuple

from core.common.values import LogRecord

# The files the embedded (SQLite) store keeps in its data folder.
INDEX_FILE = "index.sqlite3"
RUNLOG_FILE = "runlog.sqlite3"


def conversation_hash(key: str) -> str:
    """The unkeyed SHA-256 stand-in that rows logged before ids were keyed carry (they stay as they were).

    New rows use `StateStore.hashed`, keyed with the installation's secret (`core.store.secret`):
    an unkeyed hash of a small id space is reversed by hashing every candidate."""
    return hashlib.sha256(f"verbatim-conversation:{key}".encode()).hexdigest()[:24]


@dataclass(frozen=True)
class KnownDocument:
    """What the index remembers of a file, to decide whether it must be read again."""

    sha256: str
    meta_sha256: str
    state: str
    error: str | None
    language: str | None = None  # None: indexed before languages were detected, so read again once
    size: int = 0  # of the file when it was read, in bytes


class Disk(NamedTuple):
    """The disk an index is on: its folder, as a person reads it, and the bytes free there."""

    where: str
    free: int


@dataclass(frozen=True)
class DocumentRecord:
    """One row of the provenance register: a document the index has seen, and what became of it.

    `state` is `queued`, `indexing`, `indexed`, `failed` (with `error`) or `removed`; only
    `indexed` documents (and one being re-indexed, until its new version is swapped in) are searched.
    """

    path: str
    state: str
    title: str = ""
    audience: str = "internal"
    owner: str | None = None
    as_of: str | None = None  # as the document's metadata gives it
    source: str | None = None
    licence: str | None = None
    review_every: str | None = None  # as the metadata gives it (`180d`, `6 months`, `never`)
    sha256: str = ""  # of the original file
    size: int = 0
    error: str | None = None
    fragments: int = 0
    indexed_at: str | None = None  # UTC, when the current version was swapped in
    modified: str | None = None  # the file's date when it was read (ISO)
    language: str | None = None  # ISO 639-1, declared or detected; None when it couldn't be told


@dataclass(frozen=True)
class Unreferenced:
    """What the index holds that nothing refers to (see `verbatim sweep`)."""

    orphan_fragments: int = 0  # fragments and their vectors whose document row is gone
    unindexed_fragments: int = 0  # fragments kept for a document that is removed or failed
    stale_batches: int = 0  # staged fragments of an indexing run that died (no one is indexing that document)
    removed: tuple[str, ...] = ()  # register rows of removed documents

    @property
    def fragments(self) -> int:
        return self.orphan_fragments + self.unindexed_fragments + self.stale_batches


@dataclass(frozen=True)
class Logged(LogRecord):
    """One run-log row read back: the answer's record, when and where it was asked, and the feedback on it.

    `verbatim log`, the gap report, the status and a conversation's history all read this one shape."""

    at: str = ""  # ISO 8601 UTC, e.g. 2026-01-31T09:15:00Z
    surface: str = ""
    up: int = 0  # 👍 given
    down: int = 0  # 👎 given
