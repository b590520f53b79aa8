"""Settings, read once from the environment (and `.env`) into a typed object."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import overload

from core.common.errors import ConfigError
from core.common.language import NAMES as LANGUAGE_NAMES

EMBEDDERS = ("local", "remote", "multilingual")
ANSWERERS = ("extractive", "llm")
# One megabyte, as VERBATIM_MAX_DOCUMENT_MB counts it.
MB = 1_000_000


@dataclass(frozen=True)
class Settings:
    """Everything `core` needs; adapters read their own tokens."""

    knowledge_dir: Path = Path("knowledge")
    data_dir: Path = Path("var")
    embedder: str = "local"
    embedding_base_url: str = ""
    embedding_model: str = ""
    embedding_api_key: str = ""
    # Overrides of the answer policy's thresholds (core.answering.policy); None: the policy's own for the embedder.
    min_similarity: float | None = None
    found_threshold: float | None = None
    judge: bool = True  # the extractive answerer asks the answerability judge; False: similarity alone, as before
    judge_threshold: float | None = None
    # The second look at a lower floor for a refused question (extractive answerer with the judge only); a floor
    # at or above the similarity floor turns it off.
    second_look_floor: float | None = None
    second_look_threshold: float | None = None
    llm_judge: bool = False  # the judge as a second opinion on the LLM answerer's claims
    answerer: str = "extractive"
    llm_base_url: str = ""
    llm_model: str = ""
    llm_api_key: str = ""
    llm_timeout: float = 30.0
    llm_deadline: float = 45.0  # one whole answer, the follow-up's rewrite call included
    resync_seconds: float = 60.0
    # ISO codes of the languages questions may be asked in; () = any. The embedded model reads English.
    question_languages: tuple[str, ...] = ("en",)
    # False when VERBATIM_QUESTION_LANGUAGES is unset: then the indexed documents' languages are readable too.
    question_languages_set: bool = False
    max_document_mb: float = 10.0  # a bigger file fails with a reason before it is read (see README)
    review_days: int = 0  # documents without their own `review_every` are due this many days after as_of; 0: never
    database_url: str = ""  # postgresql://… puts the store in PostgreSQL, shared by replicas; "": SQLite in data_dir
    database_wait: float = 30.0  # seconds a PostgreSQL server that can't be reached at start-up is tried again
    # True when VERBATIM_EMBEDDER was set: unset, the documents settle it (core.retrieval.choosing: the
    # multilingual embedder for documents not in English).
    embedder_set: bool = False

    @property
    def max_document_bytes(self) -> int:
        """VERBATIM_MAX_DOCUMENT_MB in bytes: the one conversion, for the sync and the language sample alike."""
        return int(self.max_document_mb * MB)

    def with_multilingual(self) -> Settings:
        """These settings with the multilingual embedder (its thresholds are the answer policy's own for it)."""
        return replace(self, embedder="multilingual")

    def with_paths(self, knowledge: str | Path | None = None, data: str | Path | None = None) -> Settings:
        """A copy with command-line folders taking precedence over the environment."""
        return replace(
            self,
            knowledge_dir=Path(knowledge) if knowledge else self.knowledge_dir,
            data_dir=Path(data) if data else self.data_dir,
        )

    def __repr__(self) -> str:  # keys never reach a log through repr()
        hidden = {"embedding_api_key", "llm_api_key", "database_url"}
        fields = ", ".join(
            f"{name}={'***' if name in hidden and value else value!r}" for name, value in vars(self).items()
        )
        return f"Settings({fields})"


def load_env_file(path: Path = Path(".env")) -> None:
    """Read `.env` into the environment without overriding what is already set."""
    if path.is_file():
        from dotenv import load_dotenv

        load_dotenv(path, override=False)


class _Environment:
    """Typed reads of environment variables; a malformed value raises ConfigError in one sentence."""

    def __init__(self, env: Mapping[str, str]) -> None:
        self.env = env

    def text(self, name: str, default: str = "") -> str:
        return self.env.get(name, default).strip()

    @overload
    def number(self, name: str, default: float, low: float, high: float) -> float: ...
    @overload
    def number(self, name: str, default: None, low: float, high: float) -> float | None: ...
    def number(self, name: str, default: float | None, low: float, high: float) -> float | None:
        raw = self.text(name)
        if not raw:
            return default
        try:
            value = float(raw)
        except ValueError:
            raise ConfigError(f"{name} must be a number, not {raw!r}.") from None
        if not low <= value <= high:
            raise ConfigError(f"{name} must be between {low} and {high}, not {raw}.")
        return value

    def days(self, name: str, default: int, low: int, high: int) -> int:
        raw = self.text(name)
        if not raw:
            return default
        if not raw.isdigit() or not low <= int(raw) <= high:
            raise ConfigError(f"{name} must be a whole number of days from {low} to {high:,}, not {raw!r}.")
        return int(raw)

    def choice(self, name: str, default: str, options: tuple[str, ...]) -> str:
        value = self.text(name, default).lower() or default
        if value not in options:
            raise ConfigError(f"{name} must be one of {', '.join(options)}, not {value!r}.")
        return value

    def switch(self, name: str, default: bool) -> bool:
        return self.choice(name, "on" if default else "off", ("on", "off")) == "on"

    def languages(self, name: str, default: str) -> tuple[str, ...]:
        """ISO codes, or () for 'any'."""
        raw = self.text(name, default).lower()
        codes = tuple(code.strip() for code in raw.split(",") if code.strip())
        unknown = [code for code in codes if code != "any" and code not in LANGUAGE_NAMES]
        if unknown or not codes:
            raise ConfigError(f"{name} must be 'any' or ISO codes ({', '.join(LANGUAGE_NAMES)}), not {raw!r}.")
        return () if "any" in codes else codes


def from_env(env: Mapping[str, str] | None = None) -> Settings:
    """Settings from environment variables; a malformed value or combination raises ConfigError in one sentence.

    An unset variable leaves the dataclass's default (an unset threshold: the answer policy's own)."""
    read = _Environment(os.environ if env is None else env)
    default = Settings()
    embedder = read.choice("VERBATIM_EMBEDDER", default.embedder, EMBEDDERS)
    settings = Settings(
        knowledge_dir=Path(read.text("VERBATIM_KNOWLEDGE_DIR") or default.knowledge_dir),
        data_dir=Path(read.text("VERBATIM_DATA_DIR") or default.data_dir),
        embedder=embedder,
        embedding_base_url=read.text("VERBATIM_EMBEDDING_BASE_URL"),
        embedding_model=read.text("VERBATIM_EMBEDDING_MODEL"),
        embedding_api_key=read.text("VERBATIM_EMBEDDING_API_KEY"),
        min_similarity=read.number("VERBATIM_MIN_SIMILARITY", None, -1.0, 1.0),
        found_threshold=read.number("VERBATIM_FOUND_THRESHOLD", None, -1.0, 3.0),
        judge=read.switch("VERBATIM_JUDGE", default.judge),
        judge_threshold=read.number("VERBATIM_JUDGE_THRESHOLD", None, 0.0, 1.0),
        second_look_floor=read.number("VERBATIM_SECOND_LOOK_FLOOR", None, -1.0, 1.0),
        second_look_threshold=read.number("VERBATIM_SECOND_LOOK_THRESHOLD", None, 0.0, 1.0),
        llm_judge=read.switch("VERBATIM_LLM_JUDGE", default.llm_judge),
        answerer=read.choice("VERBATIM_ANSWERER", default.answerer, ANSWERERS),
        llm_base_url=read.text("VERBATIM_LLM_BASE_URL"),
        llm_model=read.text("VERBATIM_LLM_MODEL"),
        llm_api_key=read.text("VERBATIM_LLM_API_KEY"),
        llm_timeout=read.number("VERBATIM_LLM_TIMEOUT", default.llm_timeout, 1.0, 600.0),
        llm_deadline=read.number("VERBATIM_LLM_DEADLINE", default.llm_deadline, 1.0, 3600.0),
        resync_seconds=read.number("VERBATIM_RESYNC_SECONDS", default.resync_seconds, 0.0, 86400.0),
        question_languages=read.languages("VERBATIM_QUESTION_LANGUAGES", "any" if embedder == "remote" else "en"),
        question_languages_set=bool(read.text("VERBATIM_QUESTION_LANGUAGES")),
        embedder_set=bool(read.text("VERBATIM_EMBEDDER")),
        max_document_mb=read.number("VERBATIM_MAX_DOCUMENT_MB", default.max_document_mb, 0.001, 10_000.0),
        review_days=read.days("VERBATIM_REVIEW_DAYS", default.review_days, 0, 36_500),
        database_url=read.text("VERBATIM_DATABASE_URL"),
        database_wait=read.number("VERBATIM_DATABASE_WAIT", default.database_wait, 0.0, 3600.0),
    )
    _check_combinations(settings)
    return settings


def _check_combinations(settings: Settings) -> None:
    """Values that are each well-formed but don't work together."""
    if settings.embedder == "remote" and not (settings.embedding_base_url and settings.embedding_model):
        raise ConfigError(
            "VERBATIM_EMBEDDER=remote needs VERBATIM_EMBEDDING_BASE_URL and VERBATIM_EMBEDDING_MODEL to be set."
        )
    if settings.answerer == "llm" and not (settings.llm_base_url and settings.llm_model):
        raise ConfigError("VERBATIM_ANSWERER=llm needs VERBATIM_LLM_BASE_URL and VERBATIM_LLM_MODEL to be set.")
    if settings.database_url and not settings.database_url.startswith(("postgresql://", "postgres://")):
        raise ConfigError("VERBATIM_DATABASE_URL must start with postgresql:// (or be unset for SQLite).")
    for name, url in (
        ("VERBATIM_EMBEDDING_BASE_URL", settings.embedding_base_url),
        ("VERBATIM_LLM_BASE_URL", settings.llm_base_url),
    ):
        if url and not url.startswith(("http://", "https://")):
            raise ConfigError(f"{name} must start with http:// or https://, not {url!r}.")
