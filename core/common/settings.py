"""Settings, read once from the environment (and `.env`) into a typed object."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from core.common.errors import ConfigError
from core.common.language import NAMES as LANGUAGE_NAMES

# Both derived on the demo gold set with `verbatim calibrate` (see README, "Measuring answer quality").
DEFAULT_MIN_SIMILARITY = 0.40
DEFAULT_FOUND_THRESHOLD = 0.50
# The answerability judge's probability below which no candidate answers, so the answer is refused: one default
# for every knowledge base and language, chosen on the training businesses' validation split
# (core/data/judge/MODEL_CARD.md, "The operating point").
DEFAULT_JUDGE_THRESHOLD = 0.6
# The judge as a second opinion on the LLM answerer's claims drops a claim it rates under this unless
# VERBATIM_JUDGE_THRESHOLD is set: the model already said the fragments answer, and 0.25 is the bar that mode was
# measured at (benchmarks/llm_answerer.py --llm-judge, with the MiniLM judge; not measured again since).
DEFAULT_SECOND_OPINION_THRESHOLD = 0.25
# The multilingual embedder's cosines sit higher and closer together than MiniLM's, so its floor and
# found-threshold are its own. Used when VERBATIM_EMBEDDER=multilingual and the variable itself is unset. The floor
# was calibrated on the three English gold sets (README, "The multilingual embedder"); the found-threshold came down
# from 0.96 once the judge read German, French and Spanish (similarity proposes, the judge vetoes).
MULTILINGUAL_MIN_SIMILARITY = 0.86
MULTILINGUAL_FOUND_THRESHOLD = 0.90
# A question refused at the floor gets a second look at this lower floor, where the judge must be surer
# (DEFAULT_SECOND_LOOK_THRESHOLD): weaker retrieval needs a stronger verdict. Chosen with
# benchmarks/judge_sweep.py --second-floor/--second-threshold (core/data/judge/MODEL_CARD.md).
DEFAULT_SECOND_LOOK_FLOOR = 0.25
DEFAULT_SECOND_LOOK_THRESHOLD = 0.8
# The multilingual embedder's own second-look floor, on its cosines' scale: on its validation businesses it took
# German from 45.4 % to 63.0 % correct (refusals 87.9 % -> 81.9 %) with the judge at 0.6.
MULTILINGUAL_SECOND_LOOK_FLOOR = 0.80
# A second-look floor no hit is found below: the second look is off. It is for a remote embedder unless
# VERBATIM_SECOND_LOOK_FLOOR is set: no floor was measured on its cosines.
SECOND_LOOK_OFF = 1.0
EMBEDDERS = ("local", "remote", "multilingual")


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
    # The second look at a lower floor for a refused question (extractive answerer with the judge only); a floor
    # at or above min_similarity turns it off (SECOND_LOOK_OFF).
    second_look_floor: float = DEFAULT_SECOND_LOOK_FLOOR
    second_look_threshold: float = DEFAULT_SECOND_LOOK_THRESHOLD
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
    # Which of embedder, the floors and found_threshold were set (VERBATIM_EMBEDDER, …): what is unset may be
    # settled by the documents (core.retrieval.choosing: the multilingual embedder for documents not in English).
    chosen: frozenset[str] = frozenset()

    def with_multilingual(self) -> Settings:
        """These settings with the multilingual embedder, and its own floor and found-threshold where unset."""
        return replace(
            self,
            embedder="multilingual",
            min_similarity=self.min_similarity if "min_similarity" in self.chosen else MULTILINGUAL_MIN_SIMILARITY,
            found_threshold=self.found_threshold if "found_threshold" in self.chosen else MULTILINGUAL_FOUND_THRESHOLD,
            second_look_floor=(
                self.second_look_floor if "second_look_floor" in self.chosen else MULTILINGUAL_SECOND_LOOK_FLOOR
            ),
        )

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

    def number(self, name: str, default: float, low: float, high: float) -> float:
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
    """Settings from environment variables; a malformed value or combination raises ConfigError in one sentence."""
    read = _Environment(os.environ if env is None else env)
    embedder = read.choice("VERBATIM_EMBEDDER", "local", EMBEDDERS)
    multilingual = embedder == "multilingual"
    floor = MULTILINGUAL_MIN_SIMILARITY if multilingual else DEFAULT_MIN_SIMILARITY
    found = MULTILINGUAL_FOUND_THRESHOLD if multilingual else DEFAULT_FOUND_THRESHOLD
    second_floor = {"local": DEFAULT_SECOND_LOOK_FLOOR, "multilingual": MULTILINGUAL_SECOND_LOOK_FLOOR}.get(
        embedder, SECOND_LOOK_OFF
    )
    settings = Settings(
        knowledge_dir=Path(read.text("VERBATIM_KNOWLEDGE_DIR", "knowledge") or "knowledge"),
        data_dir=Path(read.text("VERBATIM_DATA_DIR", "var") or "var"),
        embedder=embedder,
        embedding_base_url=read.text("VERBATIM_EMBEDDING_BASE_URL"),
        embedding_model=read.text("VERBATIM_EMBEDDING_MODEL"),
        embedding_api_key=read.text("VERBATIM_EMBEDDING_API_KEY"),
        min_similarity=read.number("VERBATIM_MIN_SIMILARITY", floor, -1.0, 1.0),
        found_threshold=read.number("VERBATIM_FOUND_THRESHOLD", found, -1.0, 3.0),
        judge=read.switch("VERBATIM_JUDGE", True),
        judge_threshold=read.number("VERBATIM_JUDGE_THRESHOLD", DEFAULT_JUDGE_THRESHOLD, 0.0, 1.0),
        second_look_floor=read.number("VERBATIM_SECOND_LOOK_FLOOR", second_floor, -1.0, 1.0),
        second_look_threshold=read.number("VERBATIM_SECOND_LOOK_THRESHOLD", DEFAULT_SECOND_LOOK_THRESHOLD, 0.0, 1.0),
        llm_judge=read.switch("VERBATIM_LLM_JUDGE", False),
        answerer=read.choice("VERBATIM_ANSWERER", "extractive", ("extractive", "llm")),
        llm_base_url=read.text("VERBATIM_LLM_BASE_URL"),
        llm_model=read.text("VERBATIM_LLM_MODEL"),
        llm_api_key=read.text("VERBATIM_LLM_API_KEY"),
        llm_timeout=read.number("VERBATIM_LLM_TIMEOUT", 30.0, 1.0, 600.0),
        llm_deadline=read.number("VERBATIM_LLM_DEADLINE", 45.0, 1.0, 3600.0),
        resync_seconds=read.number("VERBATIM_RESYNC_SECONDS", 60.0, 0.0, 86400.0),
        question_languages=read.languages("VERBATIM_QUESTION_LANGUAGES", "any" if embedder == "remote" else "en"),
        question_languages_set=bool(read.text("VERBATIM_QUESTION_LANGUAGES")),
        chosen=frozenset(
            field
            for field, name in (
                ("embedder", "VERBATIM_EMBEDDER"),
                ("min_similarity", "VERBATIM_MIN_SIMILARITY"),
                ("found_threshold", "VERBATIM_FOUND_THRESHOLD"),
                ("second_look_floor", "VERBATIM_SECOND_LOOK_FLOOR"),
                ("judge_threshold", "VERBATIM_JUDGE_THRESHOLD"),
            )
            if read.text(name)
        ),
        max_document_mb=read.number("VERBATIM_MAX_DOCUMENT_MB", 10.0, 0.001, 10_000.0),
        review_days=read.days("VERBATIM_REVIEW_DAYS", 0, 0, 36_500),
        database_url=read.text("VERBATIM_DATABASE_URL"),
        database_wait=read.number("VERBATIM_DATABASE_WAIT", 30.0, 0.0, 3600.0),
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
