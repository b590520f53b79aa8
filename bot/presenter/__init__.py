"""What an answer shows, and every sentence a user reads, written once for every surface.

`present(answer)` makes the one decision (error / refused with closest sections /
answered: statements, quotes, captions, the discarded note) as neutral parts; the console,
Slack and Telegram only turn those parts into their own markup. Help texts name no product:
they come from each surface's settings (`VERBATIM_COMPANY_NAME`, `VERBATIM_EXAMPLE_QUESTION`,
read by bot.env) and from the titles of the documents the surface may read. What the gap report,
`verbatim status` and the admin commands say is in `bot.presenter.reports`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from decimal import Decimal, InvalidOperation
from typing import Literal

from core import (
    LANGUAGE_NAMES,
    MAX_QUESTION_CHARS,
    Answer,
    Calculation,
    Quote,
    VerbatimError,
)

ANSWER_HEADING = "From the documents"
REFUSAL_HEADING = "Not in the knowledge base"
REFUSAL_TEXT = "The documents don't cover this question, so I won't guess."
LANGUAGE_HEADING = "Another language, please"
APOLOGY = "Sorry, something went wrong while I was answering. It has been logged; please try again in a minute."
# The bot was stopped (a deploy, a restart) before this answer could finish.
RESTARTING = "Sorry, I was restarting and couldn't finish this answer. Please ask again in a minute."
# The shared database can't be reached: nothing can be looked up or logged until it is back.
UNAVAILABLE = "I can't reach my database right now, so I couldn't answer. Please ask again in a few minutes."
# …when Slack will send the message again (it does, after about 1 and 5 minutes), to this replica or another.
UNAVAILABLE_RETRYING = (
    "I can't reach my database right now. I'll answer here once it's back, if that is within a few minutes; "
    "if no answer comes, please ask again."
)
FEEDBACK_THANKS = "Thanks, your feedback was recorded."
FEEDBACK_UNKNOWN = "That answer is no longer in the log."
FEEDBACK_COUNTED = "counted, thanks"  # the button left in place of 👍 / 👎 once one was pressed
SHARE_LABEL = "Post to channel"
SHARE_REFUSED = "This answer can't be posted here: it may quote documents this channel can't read."


def languages_note(language: str, readable: Sequence[str]) -> str:
    """Why a question in another language is not answered: never "not covered", which may be false."""
    asked = LANGUAGE_NAMES.get(language, "this language")
    names = [LANGUAGE_NAMES.get(code, code) for code in readable] or ["English"]
    listed = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]
    return f"I can only read questions in {listed}, and this one looks like {asked}. Please ask it in {listed}."


def review_note(as_of: str | None) -> str:
    """Beside the caption of a quote whose document is past its review date."""
    try:
        day = date.fromisoformat(as_of or "")
    except ValueError:
        return "may be out of date"
    return f"as of {day.day} {day:%b %Y} — may be out of date"


def quote_caption(quote: Quote) -> str:
    """Where a quote comes from, and, when its document is past review, that it may be out of date."""
    return f"{quote.caption} · {review_note(quote.as_of)}" if quote.stale else quote.caption


def discarded_note(n: int) -> str:
    """The note under an answer some of whose quotes failed verification."""
    if n == 1:
        return "1 quote could not be verified and was left out"
    return f"{n} quotes could not be verified and were left out"


def closest_note(sections: Sequence[str]) -> str:
    return f"Closest sections I found: {'; '.join(sections)}"


def slow_down(seconds: float) -> str:
    return f"You're asking faster than I can keep up with. Please wait {int(seconds) + 1} seconds and try again."


def invalid_question(exc: VerbatimError) -> str:
    """Why a question was not asked, and what to do instead."""
    text = str(exc)
    if text.startswith("The question is empty"):
        return "Please write a question after the command or mention."
    return f"{text} Please ask a shorter question (at most {MAX_QUESTION_CHARS:,} characters)."


def shared_by(user_mention: str, question: str) -> str:
    return f"{user_mention} asked: {question}"


# --- answers ----------------------------------------------------------------------------------

Style = Literal["answer", "refusal", "error", "language"]


@dataclass(frozen=True)
class Part:
    """One neutral piece of a presented answer; surfaces choose the markup for each kind.

    kinds: `statement` (the answer's own words), `quote` (verbatim document text, shown as a
    quote), `caption` (where the quote comes from), `note` (a remark about the answer: the
    discarded count, the closest sections), `text` (a plain sentence: the refusal, the apology),
    `calculation` (a result computed by code: `🧮 3 m × 310 EUR per m = 930.00 EUR`), `source` (where
    one of its figures comes from: a quote's caption, or the question), `assumption` (what it assumed,
    and why; never a quoted fact).
    """

    kind: Literal["statement", "quote", "caption", "note", "text", "calculation", "source", "assumption"]
    text: str


@dataclass(frozen=True)
class Presentation:
    style: Style
    heading: str  # tells the style at a glance; chat surfaces let an answer's quotes speak for themselves
    parts: tuple[Part, ...]
    feedback: bool  # whether 👍 / 👎 (or sharing) is offered
    answer_id: str = ""  # what those buttons carry: the answer's run-log id

    @property
    def plain(self) -> str:
        """The whole presentation as plain text: notifications, screen readers, fallbacks."""
        if self.style != "answer":
            body = " ".join(p.text for p in self.parts)
            return body if self.style in ("error", "language") else f"{self.heading}. {body}"
        lines: list[str] = []
        for part in self.parts:
            if part.kind == "quote":
                lines.append(f"“{' '.join(part.text.split())}”")
            elif part.kind == "caption":
                lines[-1] += f" ({part.text})" if lines else part.text
            else:
                lines.append(part.text)
        return "\n".join(lines)


def present(answer: Answer) -> Presentation:
    """The one decision of what an answer shows."""
    if answer.reason == "error":
        return Presentation("error", "Something went wrong", (Part("text", APOLOGY),), feedback=False)
    if answer.reason == "language":
        text = languages_note(answer.language, answer.languages)
        return Presentation("language", LANGUAGE_HEADING, (Part("text", text),), feedback=False)
    if not answer.answered:
        parts = [Part("text", REFUSAL_TEXT)]
        if answer.closest:
            parts.append(Part("note", closest_note(answer.closest)))
        return Presentation("refusal", REFUSAL_HEADING, tuple(parts), feedback=True, answer_id=answer.id)
    parts = []
    for statement in answer.statements:
        if not statement.restates_its_quote:
            parts.append(Part("statement", statement.text))
        for quote in statement.quotes:
            parts.append(Part("quote", quote.text))
            parts.append(Part("caption", quote_caption(quote)))
    for calculation in answer.calculations:
        parts.extend(calculation_parts(calculation))
    if answer.discarded:
        parts.append(Part("note", discarded_note(answer.discarded)))
    if answer.calculations_dropped:
        parts.append(Part("note", calculations_dropped_note(answer.calculations_dropped)))
    return Presentation("answer", ANSWER_HEADING, tuple(parts), feedback=True, answer_id=answer.id)


def calculation_line(calculation: Calculation) -> str:
    """`🧮 3 m × 310 EUR per m = 930.00 EUR`: the figures, the operations, the result code computed."""
    result = calculation.result
    with contextlib.suppress(InvalidOperation):  # "930.00" → "930.00", "1015.00" → "1,015.00"
        result = f"{Decimal(result):,f}"
    if calculation.unit == "%":
        return f"🧮 {calculation.shown} = {result}%"
    return f"🧮 {calculation.shown} = {result} {calculation.unit}".rstrip()


def calculation_parts(calculation: Calculation) -> list[Part]:
    """A calculation's block: its line, where each figure comes from, and what it assumed."""
    parts = [Part("calculation", calculation_line(calculation))]
    for figure in calculation.inputs:
        where = quote_caption(figure.quote) if figure.quote is not None else "from your question"
        parts.append(Part("source", f"{figure.figure}: {where}"))
    for assumption in calculation.assumptions:
        parts.append(Part("assumption", f"Assumed: {assumption.text} (because {assumption.reason})"))
    return parts


def calculations_dropped_note(n: int) -> str:
    """The note under an answer some of whose proposed calculations failed their checks."""
    if n == 1:
        return "1 calculation could not be checked and was left out"
    return f"{n} calculations could not be checked and were left out"


# --- help texts -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Voice:
    """The product-neutral help texts of one surface."""

    company: str
    example: str  # an example question, or "" when none is configured
    topics: tuple[str, ...]  # titles of the documents this surface may read

    def topic_list(self, limit: int = 6) -> str:
        shown = list(self.topics[:limit])
        more = len(self.topics) - len(shown)
        return ", ".join(shown) + (f" and {more} more" if more > 0 else "")

    def example_or(self, fallback: str) -> str:
        return self.example or fallback

    @property
    def start(self) -> str:
        covers = f" I can read: {self.topic_list()}." if self.topics else ""
        return (
            f"Hello! I answer questions about {self.company} from its own documents.{covers}\n\n"
            "Every answer quotes the documents word for word, with the document and section it comes from. "
            "When the documents don't cover a question, I say so instead of guessing.\n\n"
            "Just write your question. Reply to one of my answers to ask a follow-up. "
            "In groups, mention me or use /ask."
        )

    def help_lines(self) -> list[str]:
        lines = [f"Write a question, for example: {self.example}" if self.example else "Write a question."]
        if self.topics:
            lines.append(f"I can read: {self.topic_list()}.")
        return lines

    # Telegram's /help tips; `{ask}` is where the surface puts its markup for the /ask usage.
    TELEGRAM_TIPS = (
        "• Reply to my answer to ask a follow-up about it.",
        "• In groups: mention me, reply to me, or use {ask}.",
        "• 👍 / 👎 under an answer tells us whether it helped.",
        "• Quotes are copied from the documents; 📄 shows where each one comes from.",
    )

    def mention_hint(self, bot_name: str = "@Verbatim") -> str:
        example = f", for example: {bot_name} {self.example}" if self.example else "."
        return f"Ask me a question after the mention{example}"

    def command_usage(self, command: str) -> str:
        example = f", for example {command} {self.example}" if self.example else "."
        return f"Write your question after the command{example}"


# --- the gap report and admin commands ------------------------------------------------------------
