"""Verbatim's core: documents → fragments → embeddings → index → retrieval → answer → verification → run log.

The public surface is exactly `__all__`; adapters (`bot/`) import nothing else, and a test
keeps it that way. Importing `core` opens no database: the store is opened on first use.
"""

from core.answering.pipeline import Pipeline
from core.answering.policy import AnswerPolicy, policy_for
from core.common.answers import Answer, Assumption, Calculation, CalculationInput, Quote, Statement, Turn
from core.common.errors import (
    AnswererError,
    ConfigError,
    DiskFull,
    DocumentError,
    EmbeddingError,
    IndexCorrupt,
    JudgeError,
    KnowledgeError,
    RunLogError,
    StoreUnavailable,
    VerbatimError,
)
from core.common.language import NAMES as LANGUAGE_NAMES
from core.common.language import detect as detect_language
from core.common.questions import MAX_QUESTION_CHARS, SCOPES, clean_question, scope_of
from core.common.settings import Settings, from_env, load_env_file
from core.common.text import SECTION_SEPARATOR
from core.common.values import Fragment, Hit
from core.ingest import FragmentProgress, SyncReport
from core.ingest.folder import skipped_summary
from core.measuring.coverage import Shortfall, public_shortfalls
from core.measuring.evaluation import Outcome, calibration_grid, evaluate, load_questions, recommend
from core.measuring.gaps import Gap, recent_gaps
from core.measuring.register import Attention, Leftovers, RegisterStatus, read_register, sweep_data
from core.measuring.report import (
    Disliked,
    Instruction,
    Report,
    Slow,
    Status,
    admin_status,
    build_report,
    parse_span,
)
from core.measuring.selfcheck import run_checks
from core.retrieval.choosing import folder_advice
from core.retrieval.knowledge import KnowledgeBase, Retrieval
from core.store import ACK_WAIT, Logged, Store, conversation_hash, existing_store, open_store

__all__ = [
    "ACK_WAIT",
    "LANGUAGE_NAMES",
    "MAX_QUESTION_CHARS",
    "SCOPES",
    "SECTION_SEPARATOR",
    "Answer",
    "AnswerPolicy",
    "AnswererError",
    "Assumption",
    "Attention",
    "Calculation",
    "CalculationInput",
    "ConfigError",
    "DiskFull",
    "Disliked",
    "DocumentError",
    "EmbeddingError",
    "Fragment",
    "FragmentProgress",
    "Gap",
    "Hit",
    "IndexCorrupt",
    "Instruction",
    "JudgeError",
    "KnowledgeBase",
    "KnowledgeError",
    "Leftovers",
    "Logged",
    "Outcome",
    "Pipeline",
    "Quote",
    "RegisterStatus",
    "Report",
    "Retrieval",
    "RunLogError",
    "Settings",
    "Shortfall",
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
    "calibration_grid",
    "clean_question",
    "conversation_hash",
    "detect_language",
    "evaluate",
    "existing_store",
    "folder_advice",
    "from_env",
    "load_env_file",
    "load_questions",
    "open_store",
    "parse_span",
    "policy_for",
    "public_shortfalls",
    "read_register",
    "recent_gaps",
    "recommend",
    "run_checks",
    "scope_of",
    "skipped_summary",
    "sweep_data",
]
