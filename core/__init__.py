"""Verbatim's core: documents → fragments → embeddings → index → retrieval (→ answers)."""

from core.errors import (
    AnswererError,
    ConfigError,
    DocumentError,
    EmbeddingError,
    IndexCorrupt,
    KnowledgeError,
    RunLogError,
    VerbatimError,
)
from core.fragments import Fragment
from core.index import Hit, SyncReport
from core.knowledge import SCOPES, KnowledgeBase, Retrieval, scope_of
from core.settings import Settings, from_env, load_env_file

__all__ = [
    "SCOPES",
    "AnswererError",
    "ConfigError",
    "DocumentError",
    "EmbeddingError",
    "Fragment",
    "Hit",
    "IndexCorrupt",
    "KnowledgeBase",
    "KnowledgeError",
    "Retrieval",
    "RunLogError",
    "Settings",
    "SyncReport",
    "VerbatimError",
    "from_env",
    "load_env_file",
    "scope_of",
]
