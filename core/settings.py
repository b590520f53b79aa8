"""Settings, read once from the environment (and `.env`) into a typed object."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from core.errors import ConfigError
from core.language import NAMES as LANGUAGE_NAMES

# Both derived on the demo gold set with `verbatim calibrate` (see README, "Measuring answer quality").
DEFAULT_MIN_SIMILARITY = 0.40
DEFAULT_FOUND_THRESHOLD = 0.50
# The answerability judge's probability below which no candidate answers, so the answer is refused: one default
# for every knowledge base (core/data/judge/MODEL_CARD.md gives the sweep on the three gold sets).
DEFAULT_JUDGE_THRESHOLD = 0.25


@dataclass(frozen=True)
class Settings:
    """Everything `core` needs; adapters read their own tokens."""

    knowledge_dir: Path = Path("knowledge")
    data_dir: Path = Path("var")
    embedder: str = "local"
    embedding_base_url: str = ""
    embedding_model: str = ""
    embedding_api_key: str = ""
    min_similarity: float = DEFAULT_MIN_SIMILARITY
    found_threshold: float = DEFAULT_FOUND_THRESHOLD
    judge: bool = True  # the extractive answerer asks the answerability judge; False: similarity alone, as before
    judge_threshold: float = DEFAULT_JUDGE_THRESHOLD
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
    max_document_mb: float = 10.0  # a bigger file fails with a reason before it is read (see README)
    review_days: int = 0  # documents without their own `review_every` are due this many days after as_of; 0: never
    database_url: str = ""  # postgresql://… puts the store in PostgreSQL, shared by replicas; "": SQLite in data_dir
    database_wait: float = 30.0  # seconds a PostgreSQL server that can't be reached at start-up is tried again

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


def from_env(env: Mapping[str, str] | None = None) -> Settings:
    """Settings from environment variables; a malformed value raises ConfigError in one sentence."""
    env = os.environ if env is None else env

    def text(name: str, default: str = "") -> str:
        return env.get(name, default).strip()

    def number(name: str, default: float, low: float, high: float) -> float:
        raw = text(name)
        if not raw:
            return default
        try:
            value = float(raw)
        except ValueError:
            raise ConfigError(f"{name} must be a number, not {raw!r}.") from None
        if not low <= value <= high:
            raise ConfigError(f"{name} must be between {low} and {high}, not {raw}.")
        return value

    def days(name: str, default: int, low: int, high: int) -> int:
        raw = text(name)
        if not raw:
            return default
        if not raw.isdigit() or not low <= int(raw) <= high:
            raise ConfigError(f"{name} must be a whole number of days from {low} to {high:,}, not {raw!r}.")
        return int(raw)

    def choice(name: str, default: str, options: tuple[str, ...]) -> str:
        value = text(name, default).lower() or default
        if value not in options:
            raise ConfigError(f"{name} must be one of {', '.join(options)}, not {value!r}.")
        return value

    judge = choice("VERBATIM_JUDGE", "on", ("on", "off")) == "on"
    llm_judge = choice("VERBATIM_LLM_JUDGE", "off", ("on", "off")) == "on"
    answerer = choice("VERBATIM_ANSWERER", "extractive", ("extractive", "llm"))
    settings = Settings(
        knowledge_dir=Path(text("VERBATIM_KNOWLEDGE_DIR", "knowledge") or "knowledge"),
        data_dir=Path(text("VERBATIM_DATA_DIR", "var") or "var"),
        embedder=choice("VERBATIM_EMBEDDER", "local", ("local", "remote")),
        embedding_base_url=text("VERBATIM_EMBEDDING_BASE_URL"),
        embedding_model=text("VERBATIM_EMBEDDING_MODEL"),
        embedding_api_key=text("VERBATIM_EMBEDDING_API_KEY"),
        min_similarity=number("VERBATIM_MIN_SIMILARITY", DEFAULT_MIN_SIMILARITY, -1.0, 1.0),
        found_threshold=number("VERBATIM_FOUND_THRESHOLD", DEFAULT_FOUND_THRESHOLD, -1.0, 3.0),
        judge=judge,
        judge_threshold=number("VERBATIM_JUDGE_THRESHOLD", DEFAULT_JUDGE_THRESHOLD, 0.0, 1.0),
        llm_judge=llm_judge,
        answerer=answerer,
        llm_base_url=text("VERBATIM_LLM_BASE_URL"),
        llm_model=text("VERBATIM_LLM_MODEL"),
        llm_api_key=text("VERBATIM_LLM_API_KEY"),
        llm_timeout=number("VERBATIM_LLM_TIMEOUT", 30.0, 1.0, 600.0),
        llm_deadline=number("VERBATIM_LLM_DEADLINE", 45.0, 1.0, 3600.0),
        resync_seconds=number("VERBATIM_RESYNC_SECONDS", 60.0, 0.0, 86400.0),
        max_document_mb=number("VERBATIM_MAX_DOCUMENT_MB", 10.0, 0.001, 10_000.0),
        review_days=days("VERBATIM_REVIEW_DAYS", 0, 0, 36_500),
        database_url=text("VERBATIM_DATABASE_URL"),
        database_wait=number("VERBATIM_DATABASE_WAIT", 30.0, 0.0, 3600.0),
    )
    languages = text("VERBATIM_QUESTION_LANGUAGES", "en" if settings.embedder == "local" else "any").lower()
    codes = tuple(code.strip() for code in languages.split(",") if code.strip())
    unknown = [code for code in codes if code != "any" and code not in LANGUAGE_NAMES]
    if unknown or not codes:
        raise ConfigError(
            f"VERBATIM_QUESTION_LANGUAGES must be 'any' or ISO codes ({', '.join(LANGUAGE_NAMES)}), not {languages!r}."
        )
    settings = replace(settings, question_languages=() if "any" in codes else codes)
    if settings.embedder == "remote" and not (settings.embedding_base_url and settings.embedding_model):
        raise ConfigError(
            "VERBATIM_EMBEDDER=remote needs VERBATIM_EMBEDDING_BASE_URL and VERBATIM_EMBEDDING_MODEL to be set."
        )
    if settings.answerer == "llm" and not (settings.llm_base_url and settings.llm_model):
        raise ConfigError("VERBATIM_ANSWERER=llm needs VERBATIM_LLM_BASE_URL and VERBATIM_LLM_MODEL to be set.")
    if settings.database_url and not settings.database_url.startswith(("postgresql://", "postgres://")):
        raise ConfigError("VERBATIM_DATABASE_URL must start with postgresql:// (or be unset for SQLite).")
    for name in ("VERBATIM_EMBEDDING_BASE_URL", "VERBATIM_LLM_BASE_URL"):
        url = text(name)
        if url and not url.startswith(("http://", "https://")):
            raise ConfigError(f"{name} must start with http:// or https://, not {url!r}.")
    return settings


def make_embedder(settings: Settings):  # -> Embedder
    """The embedder the settings ask for."""
    from core.embeddings import LocalEmbedder, RemoteEmbedder

    if settings.embedder == "remote":
        return RemoteEmbedder(settings.embedding_base_url, settings.embedding_model, settings.embedding_api_key or None)
    return LocalEmbedder()
