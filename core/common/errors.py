"""Errors raised by Verbatim's core.

Every error carries one sentence meant for the person at the keyboard; the
traceback, when there is one, goes to the log.

    VerbatimError
    ├── ConfigError          a setting is missing or malformed
    ├── KnowledgeError       the knowledge folder can't be used
    ├── DocumentError        one document can't be read or parsed
    ├── IndexFileError       the index file is unusable
    │   └── IndexCorrupt     the index file is damaged (it is rebuilt)
    ├── IndexChanged         fragments a search found were re-indexed since it was loaded
    ├── RunLogError          the run log can't be opened or written
    ├── StoreUnavailable     the shared database can't be reached for now (tried again on the next use)
    ├── DiskFull             the store can't be written: its disk (or the database server's) is full
    ├── EmbeddingError       the embedding model failed
    └── AnswererError        the answering model failed or replied nonsense
"""

from __future__ import annotations

from typing import Any


class VerbatimError(Exception):
    """Base of every error Verbatim raises on purpose."""


class ConfigError(VerbatimError):
    """Raised when a setting is missing or malformed at start-up."""


class KnowledgeError(VerbatimError):
    """Raised when the knowledge folder is missing or holds no documents."""


class DocumentError(VerbatimError):
    """Raised when one document can't be read, decoded or parsed."""


class IndexFileError(VerbatimError):
    """Raised when the index file can't be opened or written."""


class IndexCorrupt(IndexFileError):
    """Raised when the index file is damaged and must be rebuilt."""


class IndexChanged(VerbatimError):
    """Raised when fragments a search found are no longer what the store holds (another process re-indexed
    since the corpus was loaded): reload and search again. `hits` are the ones still valid."""

    def __init__(self, message: str, hits: list[Any] | None = None) -> None:
        super().__init__(message)
        self.hits: list[Any] = hits or []


class RunLogError(VerbatimError):
    """Raised when the run log can't be opened or written."""


class StoreUnavailable(VerbatimError):
    """Raised when the shared database (PostgreSQL) can't be reached for now; the next use tries again."""


class DiskFull(VerbatimError):
    """Raised when the store can't be written because its disk is full; what it held is intact, and writing
    works again once space is freed."""


class EmbeddingError(VerbatimError):
    """Raised when the embedding model can't produce vectors."""


class JudgeError(VerbatimError):
    """Raised when the answerability judge can't rate a question's candidates (its model missing or failing)."""


class AnswererError(VerbatimError):
    """Raised when the answering model fails or its reply can't be used."""

    def __init__(self, message: str, model_calls: int = 0) -> None:
        super().__init__(message)
        self.model_calls = model_calls
