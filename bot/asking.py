"""The one ask flow every surface shares: clean, limit, ask, present once, split, and errors as sentences.

A surface parses its event into text, a scope and a conversation key, then calls `Asker.admit`
(the question cleaned and within the asker's rate limit) and `Asker.reply` (asked, logged and
presented once), and turns what comes back into its own markup:

    Reply    an answer and its one Presentation
    Notice   a sentence in place of an answer, and why:
             invalid      the question can't be asked as written (the asker can mend it)
             slow         the asker is over the rate limit
             unavailable  the shared database can't be reached for now
             failed       anything else: logged with its traceback (a full disk in one line), and the
                          user hears the apology
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from bot import presenter
from bot.presenter import Presentation
from bot.presenter.catalogue import ENGLISH, Catalogue, speaking
from core import Answer, DiskFull, Pipeline, StoreUnavailable, VerbatimError, clean_question, detect_language

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Notice:
    """A sentence in place of an answer; `detail` is core's own sentence, for the operator's terminal."""

    reason: Literal["invalid", "slow", "unavailable", "failed"]
    text: str
    detail: str = ""

    @property
    def line(self) -> str:
        """The sentence as a chat message: a warning sign when the fault is ours, not the asker's."""
        return f"⚠️ {self.text}" if self.reason in ("unavailable", "failed") else self.text


@dataclass(frozen=True)
class Reply:
    answer: Answer
    shown: Presentation


def failure(exc: BaseException | None, what: str, catalogue: Catalogue = ENGLISH) -> Notice:
    """What the user hears when `what` (e.g. "a Telegram update") failed; the operator gets the log line.

    The database being down is one warning (it is not a bug, and it passes), and a full disk one error
    (core's sentence says it all, and a traceback per question would bury it); anything else is logged
    with its traceback, and never told to the user, whose sentence names no path and gives no advice.
    """
    if isinstance(exc, StoreUnavailable):
        log.warning("%s was not answered: %s", what, exc)
        return Notice("unavailable", catalogue("error.unavailable"))
    if isinstance(exc, DiskFull):
        log.error("%s can't be answered: %s", what, exc)
        return Notice("failed", catalogue("error.apology"))
    log.error("answering %s failed", what, exc_info=exc)
    return Notice("failed", catalogue("error.apology"))


class Asker:
    """One surface's way into the pipeline; `per_minute` questions per asker, or no limit when None."""

    def __init__(self, pipeline: Pipeline, surface: str, per_minute: int | None = None) -> None:
        self.pipeline = pipeline
        self.surface = surface
        self.per_minute = per_minute
        self._language: str | None = None

    def catalogue(self, text: str) -> Catalogue:
        """The catalogue a notice about `text` is worded in: the question's language, else the documents'."""
        if self._language is None:
            self._language = presenter.main_language(self.pipeline)  # None again while the store is down
        return speaking(detect_language(text) or self._language)

    def admit(self, text: str, who: str = "") -> str | Notice:
        """The question, cleaned and within `who`'s rate limit; a bad question is refused first and costs no slot."""
        try:
            question = clean_question(text)
        except VerbatimError as exc:
            return Notice("invalid", presenter.invalid_question(exc, self.catalogue(text)), str(exc))
        if self.per_minute is None:
            return question
        try:
            wait = self.pipeline.state.take_slot(f"{self.surface}-user:{who}", self.per_minute)
        except Exception as exc:
            return failure(exc, f"a {self.surface} question", self.catalogue(question))
        return Notice("slow", presenter.slow_down(wait, self.catalogue(question))) if wait else question

    def answer(self, question: str, scope: frozenset[str], conversation: str | None = None) -> Reply:
        """Ask with the conversation's history, log it, and present it once; errors are the caller's."""
        answer = self.pipeline.ask(question, scope, self.surface, conversation)
        return Reply(answer, presenter.present(answer))

    def reply(self, question: str, scope: frozenset[str], conversation: str | None = None) -> Reply | Notice:
        """`answer`, with any failure logged for the operator and told to the user as a sentence."""
        try:
            return self.answer(question, scope, conversation)
        except Exception as exc:
            return failure(exc, f"a {self.surface} question", self.catalogue(question))


def split(text: str, limit: int, size: Callable[[str], int] = len) -> list[str]:
    """`text` in pieces that each measure at most `limit`, cut at a line end, else a space, where there is one.

    `size` measures a piece as the surface will send it (Telegram counts a piece with its tags and
    escapes); it must grow with the text, so the longest prefix that fits is found by bisection.
    """
    pieces = []
    while size(text) > limit:
        fits, over = 0, len(text)  # size(text[:fits]) <= limit < size(text[:over])
        while over - fits > 1:
            middle = (fits + over) // 2
            fits, over = (middle, over) if size(text[:middle]) <= limit else (fits, middle)
        cut = text.rfind("\n", 0, fits)
        if cut <= 0:
            cut = text.rfind(" ", 0, fits)
        if cut <= 0:
            cut = max(fits, 1)
        pieces.append(text[:cut])
        text = text[cut:].lstrip("\n ")
    if text or not pieces:  # a cut just before trailing spaces leaves nothing to send
        pieces.append(text)
    return pieces
