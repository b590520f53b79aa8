"""Verbatim's core: documents → fragments → embeddings → index → retrieval → answer → verification → run log.

The public surface is exactly `__all__`; adapters (`bot/`) import nothing else, and a test
keeps it that way. Importing `core` opens no database: the store is opened on first use.
"""

from core.answers import Answer, Assumption, Calculation, CalculationInput, Quote, Statement, Turn
from core.errors import (
    AnswererError,
    ConfigError,
    DocumentError,
    EmbeddingError,
    IndexCorrupt,
    KnowledgeError,
    RunLogError,
    StoreUnavailable,
    VerbatimError,
)
from core.evaluation import Outcome, evaluate, load_questions, recommend, sweep
from core.ingest import FragmentProgress, SyncReport
from core.knowledge import MAX_QUESTION_CHARS, SCOPES, KnowledgeBase, Retrieval, clean_question, scope_of
from core.language import NAMES as LANGUAGE_NAMES
from core.pipeline import Pipeline
from core.register import Attention, Leftovers, RegisterStatus, read_register, sweep_data
from core.report import (
    Disliked,
    Gap,
    Report,
    Slow,
    Status,
    admin_status,
    build_report,
    parse_span,
    recent_gaps,
)
from core.retrieval import Fragment, Hit
from core.selfcheck import run_checks
from core.settings import Settings, from_env, load_env_file
from core.store import Entry, Store, conversation_hash, open_store

__all__ = [
    "LANGUAGE_NAMES",
    "MAX_QUESTION_CHARS",
    "SCOPES",
    "Answer",
    "AnswererError",
    "Assumption",
    "Attention",
    "Calculation",
    "CalculationInput",
    "ConfigError",
    "Disliked",
    "DocumentError",
    "EmbeddingError",
    "Entry",
    "Fragment",
    "FragmentProgress",
    "Gap",
    "Hit",
    "IndexCorrupt",
    "KnowledgeBase",
    "KnowledgeError",
    "Leftovers",
    "Outcome",
    "Pipeline",
    "Quote",
    "RegisterStatus",
    "Report",
    "Retrieval",
    "RunLogError",
    "Settings",
    "Slow",
    "Statement",
    "Status",
    "Store",
    "StoreUnavailable",
    "SyncReport",
    "Turn",
    "VerbatimError",
    "admin_status",
    "build_report",
    "clean_question",
    "conversation_hash",
    "evaluate",
    "from_env",
    "load_env_file",
    "load_questions",
    "open_store",
    "parse_span",
    "read_register",
    "recent_gaps",
    "recommend",
    "run_checks",
    "scope_of",
    "sweep",
    "sweep_data",
]
