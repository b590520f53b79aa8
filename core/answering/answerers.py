"""The answerer seam: what the pipeline asks of an answerer, and the table that makes one from settings.

An answerer reads the retrieved hits and says whether they answer the question, with the claims that say so;
the pipeline's barriers (core.answering.pipeline.decide) then verify every quote, whoever wrote it. A new
answerer is a class with these three methods and a line in `ANSWERERS` (docs/extending.md).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from core.answering import judge
from core.answering.policy import AnswerPolicy
from core.common.answers import Draft, Turn
from core.common.settings import Settings
from core.common.values import Hit
from core.vectors.embeddings import Embedder


class Answerer(Protocol):
    name: str

    def rewrite(self, question: str, history: Sequence[Turn]) -> tuple[str, int]:
        """The question as it would be asked on its own, and the model calls that took."""
        ...

    def answer(self, question: str, hits: Sequence[Hit], language: str | None = None) -> Draft:
        """Whether the hits answer the (standalone) question, and the claims that say so. `language` is the
        question's as the pipeline detected it (ISO 639-1; None when it couldn't tell)."""
        ...

    def surer(self, threshold: float) -> Answerer | None:
        """A copy whose judge must reach `threshold`, for hits retrieval found weaker (the second look); None
        where that doesn't apply (no judge to be surer)."""
        ...


def _extractive(settings: Settings, policy: AnswerPolicy, embedder: Embedder) -> Answerer:
    from core.answering.extractive import ExtractiveAnswerer

    vetting = judge.shared() if settings.judge else None
    if vetting is not None:
        vetting.preload()  # while the first question is embedded and searched
    return ExtractiveAnswerer(embedder, vetting, policy)


def _llm(settings: Settings, policy: AnswerPolicy, embedder: Embedder) -> Answerer:
    from core.answering.llm import LLMAnswerer

    return LLMAnswerer(
        settings.llm_base_url,
        settings.llm_model,
        settings.llm_api_key or None,
        settings.llm_timeout,
        deadline=settings.llm_deadline,
        judge=judge.shared() if settings.llm_judge else None,
        judge_threshold=policy.second_opinion_threshold,
    )


# VERBATIM_ANSWERER's values (core.common.settings.ANSWERERS) and what each makes; concrete answerers are
# imported when chosen, so a process that never asks a model never imports its client.
ANSWERERS: dict[str, Callable[[Settings, AnswerPolicy, Embedder], Answerer]] = {
    "extractive": _extractive,
    "llm": _llm,
}


def make_answerer(settings: Settings, policy: AnswerPolicy, embedder: Embedder) -> Answerer:
    return ANSWERERS[settings.answerer](settings, policy, embedder)
