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
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import date
from decimal import Decimal, InvalidOperation
from typing import Literal

from bot.presenter.catalogue import ENGLISH, Catalogue, speaking, spoken
from core import (
    MAX_QUESTION_CHARS,
    SECTION_SEPARATOR,
    Answer,
    Calculation,
    Pipeline,
    Quote,
    VerbatimError,
)

# The English sentences, for code and tests that name one; what a user reads comes from their catalogue.
ANSWER_HEADING = ENGLISH("answer.heading")
REFUSAL_HEADING = ENGLISH("refusal.heading")
REFUSAL_TEXT = ENGLISH("refusal.text")
LANGUAGE_HEADING = ENGLISH("language.heading")
APOLOGY = ENGLISH("error.apology")
# The bot was stopped (a deploy, a restart) before this answer could finish.
RESTARTING = ENGLISH("error.restarting")
# The shared database can't be reached: nothing can be looked up or logged until it is back.
UNAVAILABLE = ENGLISH("error.unavailable")
# …when Slack will send the message again (it does, after about 1 and 5 minutes), to this replica or another.
UNAVAILABLE_RETRYING = ENGLISH("error.unavailable_retrying")
FEEDBACK_THANKS = ENGLISH("feedback.thanks")
FEEDBACK_UNKNOWN = ENGLISH("feedback.unknown")
FEEDBACK_COUNTED = ENGLISH("feedback.counted")  # the button left in place of 👍 / 👎 once one was pressed
SHARE_LABEL = ENGLISH("share.label")
SHARE_REFUSED = ENGLISH("share.refused")


def languages_note(language: str, readable: Sequence[str], catalogue: Catalogue = ENGLISH) -> str:
    """Why a question in another language is not answered: never "not covered", which may be false."""
    asked = catalogue.name(language) if language else catalogue("language.unknown")
    listed = catalogue.listed([catalogue.name(code) for code in readable] or [catalogue.name("en")])
    return catalogue("language.note", readable=listed, asked=asked)


def review_note(as_of: str | None, catalogue: Catalogue = ENGLISH) -> str:
    """Beside the caption of a quote whose document is past its review date."""
    try:
        day = date.fromisoformat(as_of or "")
    except ValueError:
        return catalogue("caption.review_undated")
    month = catalogue.entry("caption.months")[day.month - 1]
    return catalogue("caption.review", date=f"{day.day} {month} {day.year}")


def quote_caption(quote: Quote, catalogue: Catalogue = ENGLISH) -> str:
    """`Document › Section · fragment k of n` (`· p. N` for paged formats), and, past review, that it may be
    out of date. The document's own names are shown as they are; only the product's words are translated."""
    parts = [SECTION_SEPARATOR.join((quote.title, *quote.section))]
    if quote.page is not None:
        parts.append(catalogue("caption.page", page=quote.page))
    parts.append(catalogue("caption.fragment", position=quote.position, of=quote.of))
    if quote.stale:
        parts.append(review_note(quote.as_of, catalogue))
    return " · ".join(parts)


def discarded_note(n: int, catalogue: Catalogue = ENGLISH) -> str:
    """The note under an answer some of whose quotes failed verification."""
    return catalogue.counted("notes.discarded", n)


def closest_note(sections: Sequence[str], catalogue: Catalogue = ENGLISH) -> str:
    return catalogue("refusal.closest", sections="; ".join(sections))


def slow_down(seconds: float, catalogue: Catalogue = ENGLISH) -> str:
    return catalogue("question.slow", seconds=int(seconds) + 1)


def invalid_question(exc: VerbatimError, catalogue: Catalogue = ENGLISH) -> str:
    """Why a question was not asked, and what to do instead."""
    if str(exc).startswith("The question is empty"):
        return catalogue("question.empty")
    return catalogue("question.too_long", limit=f"{MAX_QUESTION_CHARS:,}")


def shared_by(user_mention: str, question: str, catalogue: Catalogue = ENGLISH) -> str:
    return catalogue("share.asked", user=user_mention, question=question)


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
    language: str = "en"  # the catalogue it is worded in, for the surface's own buttons (`catalogue`)

    @property
    def catalogue(self) -> Catalogue:
        return speaking(self.language)

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
    """The one decision of what an answer shows, in the asker's language (see `catalogue_for`)."""
    catalogue = catalogue_for(answer)
    if answer.reason == "error":
        return Presentation(
            "error",
            catalogue("error.heading"),
            (Part("text", catalogue("error.apology")),),
            feedback=False,
            language=catalogue.language,
        )
    if answer.reason == "language":
        text = languages_note(answer.language, answer.languages, catalogue)
        return Presentation(
            "language",
            catalogue("language.heading"),
            (Part("text", text),),
            feedback=False,
            language=catalogue.language,
        )
    if not answer.answered:
        parts = [Part("text", catalogue("refusal.text"))]
        if answer.closest:
            parts.append(Part("note", closest_note(answer.closest, catalogue)))
        return Presentation(
            "refusal",
            catalogue("refusal.heading"),
            tuple(parts),
            feedback=True,
            answer_id=answer.id,
            language=catalogue.language,
        )
    parts = []
    for statement in answer.statements:
        if not statement.restates_its_quote:
            parts.append(Part("statement", statement.text))
        for quote in statement.quotes:
            parts.append(Part("quote", as_shown(quote.text)))
            parts.append(Part("caption", quote_caption(quote, catalogue)))
    for calculation in answer.calculations:
        parts.extend(calculation_parts(calculation, catalogue))
    if answer.discarded:
        parts.append(Part("note", discarded_note(answer.discarded, catalogue)))
    if answer.calculations_dropped:
        parts.append(Part("note", catalogue.counted("notes.calculations_dropped", answer.calculations_dropped)))
    return Presentation(
        "answer",
        catalogue("answer.heading"),
        tuple(parts),
        feedback=True,
        answer_id=answer.id,
        language=catalogue.language,
    )


_MARKED = re.compile(r"^(?:([-*+•])|(\d{1,2})([.)]))\s")


def as_shown(quote: str) -> str:
    """A quoted list as it reads in its document: a list quoted without a lead-in starts at its first item's words
    (a quote starts with words, and "1." is no figure of the answer), so the marker its other items keep is put
    back in front of the first. Only the display changes; the answer's quote stays verbatim."""
    lines = quote.split("\n")
    rest = [m for line in lines[1:] if line.strip() and (m := _MARKED.match(line))]
    items = [line for line in lines[1:] if line.strip()]
    # The first line is an item when the next line is one too, not a lead-in ("… does not cover:" and a blank).
    lead_in = lines[0].rstrip().endswith(":") or not lines[1:] or not lines[1].strip()
    if lead_in or not rest or _MARKED.match(lines[0]) or len(rest) != len(items):
        return quote
    first = rest[0]
    if first.group(1):
        return f"{first.group(1)} {quote}"
    return f"{int(first.group(2)) - 1}{first.group(3)} {quote}" if int(first.group(2)) > 1 else quote


def catalogue_for(answer: Answer) -> Catalogue:
    """The catalogue an answer is worded in: the language it was asked in, as core tells it (the question's,
    else its documents'); a question in a language we can't read hears one we can."""
    if answer.reason == "language":
        return speaking(next(iter(answer.languages), None))
    return speaking(answer.reply_language)


def calculation_line(calculation: Calculation) -> str:
    """`🧮 3 m × 310 EUR per m = 930.00 EUR`: the figures, the operations, the result code computed."""
    result = calculation.result
    with contextlib.suppress(InvalidOperation):  # "930.00" → "930.00", "1015.00" → "1,015.00"
        result = f"{Decimal(result):,f}"
    if calculation.unit == "%":
        return f"🧮 {calculation.shown} = {result}%"
    return f"🧮 {calculation.shown} = {result} {calculation.unit}".rstrip()


def calculation_parts(calculation: Calculation, catalogue: Catalogue = ENGLISH) -> list[Part]:
    """A calculation's block: its line, where each figure comes from (one line each), and what it assumed."""
    parts = [Part("calculation", calculation_line(calculation))]
    for figure in calculation.inputs:
        where = (
            quote_caption(figure.quote, catalogue)
            if figure.quote is not None
            else catalogue("calculation.from_question")
        )
        parts.append(Part("source", f"{figure.figure}: {where}"))
    for assumption in calculation.assumptions:
        parts.append(
            Part("assumption", catalogue("calculation.assumed", text=assumption.text, reason=assumption.reason))
        )
    return parts


def calculations_dropped_note(n: int, catalogue: Catalogue = ENGLISH) -> str:
    """The note under an answer some of whose proposed calculations failed their checks."""
    return catalogue.counted("notes.calculations_dropped", n)


def main_language(pipeline: Pipeline) -> str | None:
    """The language most documents are in, what help texts speak when no question tells: "en" when no document
    tells, None when the store can't be read just now (English meanwhile)."""
    try:
        return pipeline.main_language() or "en"
    except VerbatimError:
        return None


# --- help texts -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Voice:
    """The product-neutral help texts of one surface, in one language (`in_language` gives another)."""

    company: str
    example: str  # an example question, or "" when none is configured
    topics: tuple[str, ...]  # titles of the documents this surface may read
    language: str = "en"  # the documents' main language: what is said when no question tells

    @property
    def catalogue(self) -> Catalogue:
        return speaking(self.language)

    def in_language(self, code: str | None) -> Voice:
        """This voice in `code` (a Telegram user's `language_code`) when a catalogue speaks it, else unchanged."""
        language = spoken(code)
        return replace(self, language=language) if language else self

    def topic_list(self, limit: int = 6) -> str:
        shown = ", ".join(self.topics[:limit])
        more = len(self.topics) - limit
        return self.catalogue("help.more", topics=shown, more=more) if more > 0 else shown

    def example_or(self, fallback: str) -> str:
        return self.example or fallback

    @property
    def start(self) -> str:
        covers = self.catalogue("help.covers", topics=self.topic_list()) if self.topics else ""
        return self.catalogue("help.start", company=self.company, covers=covers)

    def help_lines(self) -> list[str]:
        catalogue = self.catalogue
        lines = [catalogue("help.write_example", example=self.example) if self.example else catalogue("help.write")]
        if self.topics:
            lines.append(catalogue("help.can_read", topics=self.topic_list()))
        return lines

    @property
    def tips(self) -> tuple[str, ...]:
        """Telegram's /help tips; `{ask}` is where the surface puts its markup for the /ask usage."""
        return tuple(self.catalogue.entry("help.tips"))

    @property
    def ask_usage(self) -> str:
        return self.catalogue("help.ask_usage")

    def mention_hint(self, bot_name: str = "@Verbatim") -> str:
        if self.example:
            return self.catalogue("help.mention_example", bot=bot_name, example=self.example)
        return self.catalogue("help.mention")

    def command_usage(self, command: str) -> str:
        if self.example:
            return self.catalogue("help.command_example", command=command, example=self.example)
        return self.catalogue("help.command")


# --- the gap report and admin commands ------------------------------------------------------------
