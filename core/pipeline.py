"""The one entry point every surface uses: question → retrieve → answerer → verify → log."""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Sequence
from typing import Protocol

from core.answers import Answer, Draft, Reason, Statement, Turn
from core.embeddings import Embedder
from core.errors import AnswererError, VerbatimError
from core.extractive import ExtractiveAnswerer
from core.fragments import SECTION_SEPARATOR
from core.index import Hit
from core.knowledge import MAX_QUESTION_CHARS, KnowledgeBase
from core.quotes import verify
from core.runlog import RUNLOG_FILE, RunLog
from core.settings import Settings

log = logging.getLogger(__name__)


class Answerer(Protocol):
    name: str

    def rewrite(self, question: str, history: Sequence[Turn]) -> tuple[str, int]:
        """The question as it would be asked on its own, and the model calls that took."""
        ...

    def answer(self, question: str, hits: Sequence[Hit], history: Sequence[Turn] = ()) -> Draft:
        """Whether the hits answer the question, and the claims that say so."""
        ...


def make_answerer(settings: Settings, embedder: Embedder) -> Answerer:
    if settings.answerer == "llm":
        from core.llm import LLMAnswerer

        return LLMAnswerer(
            settings.llm_base_url, settings.llm_model, settings.llm_api_key or None, settings.llm_timeout
        )
    return ExtractiveAnswerer(embedder, settings.found_threshold)


def clean_question(text: str) -> str:
    """Whitespace folded; raises VerbatimError for an empty or over-long question."""
    question = " ".join(text.split())
    if not question:
        raise VerbatimError("The question is empty.")
    if len(question) > MAX_QUESTION_CHARS:
        raise VerbatimError(f"The question is {len(question):,} characters long; the limit is {MAX_QUESTION_CHARS:,}.")
    return question


class Pipeline:
    """Knowledge base + answerer + run log, shared by the console, Slack and Telegram."""

    def __init__(
        self,
        settings: Settings,
        knowledge: KnowledgeBase | None = None,
        answerer: Answerer | None = None,
        runlog: RunLog | None = None,
    ) -> None:
        self.settings = settings
        self.knowledge = knowledge or KnowledgeBase(settings)
        self.answerer = answerer or make_answerer(settings, self.knowledge.embedder)
        self.runlog = runlog or RunLog(settings.data_dir / RUNLOG_FILE)

    def ask(self, question: str, scope: frozenset[str], surface: str, conversation: str | None = None) -> Answer:
        """Answer with the conversation's earlier turns as history, and log it."""
        history = self.runlog.history(conversation) if conversation else []
        return self.answer(question, scope, history, surface=surface, conversation=conversation)

    def answer(
        self,
        question: str,
        scope: frozenset[str],
        history: Sequence[Turn] = (),
        *,
        surface: str = "api",
        conversation: str | None = None,
    ) -> Answer:
        """The three barriers: similarity floor, the found flag, quote verification."""
        question = clean_question(question)
        started = time.perf_counter()
        timings: dict[str, float] = {}
        calls = 0
        hits: list[Hit] = []
        standalone = question

        def finish(
            reason: Reason | None, statements: Sequence[Statement] = (), discarded: int = 0, error: str = ""
        ) -> Answer:
            timings["total"] = (time.perf_counter() - started) * 1000
            closest: tuple[str, ...] = ()
            if reason in ("not_found", "unverified"):
                closest = tuple(
                    dict.fromkeys(SECTION_SEPARATOR.join((h.fragment.title, *h.fragment.section)) for h in hits)
                )[:3]
            answer = Answer(
                id=uuid.uuid4().hex,
                question=question,
                kind="refused" if reason else "answered",
                reason=reason,
                statements=tuple(statements),
                discarded=discarded,
                retrieved=tuple(hits),
                timings_ms=timings,
                answerer=self.answerer.name,
                standalone_question=standalone,
                model_calls=calls,
                closest=closest,
                error=error,
            )
            self.runlog.record(answer, surface, conversation)
            return answer

        try:
            if history:
                mark = time.perf_counter()
                standalone, calls = self.answerer.rewrite(question, history)
                timings["rewrite"] = (time.perf_counter() - mark) * 1000
            retrieval = self.knowledge.retrieve(standalone, scope)
            timings["embed"], timings["search"] = retrieval.embed_ms, retrieval.search_ms
            hits = retrieval.hits
            if not hits:
                return finish("no_match")  # barrier 1: nothing to improvise from, no model call
            mark = time.perf_counter()
            draft = self.answerer.answer(standalone, hits, history)
            timings["answer"] = (time.perf_counter() - mark) * 1000
            calls += draft.model_calls
            if not draft.found:
                return finish("not_found")  # barrier 2
            mark = time.perf_counter()
            statements, discarded = verify(draft.claims, hits)
            timings["verify"] = (time.perf_counter() - mark) * 1000
            if not statements:
                return finish("unverified", discarded=discarded)  # barrier 3
            return finish(None, statements, discarded)
        except VerbatimError as exc:
            # Our own errors carry their sentence; the traceback is for whoever debugs.
            calls += exc.model_calls if isinstance(exc, AnswererError) else 0
            log.error("answering failed: %s", exc)
            log.debug("answering failed", exc_info=True)
            return finish("error", error=str(exc))

    def feedback(self, answer_id: str, value: str, surface: str, who: str | None = None) -> bool:
        return self.runlog.feedback(answer_id, value, surface, who)

    def close(self) -> None:
        self.knowledge.close()
        self.runlog.close()
