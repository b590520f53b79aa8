"""Verbatim's core: documents → fragments → embeddings → index → retrieval → answer → verification → run log."""

from core.answers import Answer, Quote, Statement, Turn
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
from core.pipeline import Pipeline
from core.runlog import RunLog
from core.settings import Settings, from_env, load_env_file

__all__ = [
    "SCOPES",
    "Answer",
    "AnswererError",
    "ConfigError",
    "DocumentError",
    "EmbeddingError",
    "Fragment",
    "Hit",
    "IndexCorrupt",
    "KnowledgeBase",
    "KnowledgeError",
    "Pipeline",
    "Quote",
    "Retrieval",
    "RunLog",
    "RunLogError",
    "Settings",
    "Statement",
    "SyncReport",
    "Turn",
    "VerbatimError",
    "from_env",
    "load_env_file",
    "scope_of",
]
