"""What an answer shows, and every sentence a user reads, written once for every surface.

`present(answer)` makes the one decision (error / refused with closest sections /
answered: statements, quotes, captions, the discarded note) as neutral parts; the console,
Slack and Telegram only turn those parts into their own markup. Help texts name no product:
they come from each surface's settings (`VERBATIM_COMPANY_NAME`, `VERBATIM_EXAMPLE_QUESTION`,
read by bot.env) and from the titles of the documents the surface may read.
"""

from __future__ import annotations

import contextlib
import time
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
    Disliked,
    Gap,
    Quote,
    Report,
    Slow,
    Status,
    SyncReport,
    VerbatimError,
)

ANSWER_HEADING = "From the documents"
REFUSAL_HEADING = "Not in the knowledge base"
REFUSAL_TEXT = "The documents don't cover this question, so I won't guess."
LANGUAGE_HEADING = "Another language, please"
APOLOGY = "Sorry, something went wrong while I was answering. It has been logged; please try again in a minute."
# The shared database can't be reached: nothing can be looked up or logged until it is back.
UNAVAILABLE = "I can't reach my database right now, so I couldn't answer. Please ask again in a few minutes."
# …when Slack will send the message again (it does, after about 1 and 5 minutes), to this replica or another.
UNAVAILABLE_RETRYING = (
    "I can't reach my database right now. I'll answer here once it's back, if that is within a few minutes; "
    "if no answer comes, please ask again."
)
FEEDBACK_THANKS = "Thanks, your feedback was recorded."
FEEDBACK_UNKNOWN = "That answer is no longer in the log."
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

ADMIN_COMMAND = "/verbatim"
ADMIN_USAGE = "Admin commands: /verbatim status · /verbatim reindex · /verbatim gaps"
ADMIN_COMMAND_DESCRIPTION = "Admin: status, reindex, gaps"
NOT_ALLOWED = "Sorry, only the bot's admins can use /verbatim."
ADMIN_PRIVATE_ONLY = "/verbatim answers only in a private chat with me: the report may name what staff asked."
REINDEX_STARTED = "Re-reading the documents folder…"
NO_GAPS = "No refused questions in the last 7 days: the documents answered everything asked."
GAPS_HEADING = "Questions the documents didn't answer in the last 7 days"
DIGEST_HEADING = "Weekly gap report: what people asked that the documents don't answer"

REPORT_TITLE = "What the knowledge base is missing"
REPORT_SECTIONS = {
    "summary": "Questions asked",
    "trend": "Questions per day",
    "reasons": "Refusals by reason",
    "surfaces": "By surface",
    "gaps": "Refused questions, grouped by meaning",
    "disliked": "Answers marked 👎",
    "documents_quoted": "Documents quoted most",
    "documents_never": "Documents never quoted",
    "sections_quoted": "Sections quoted most",
    "sections_never": "Sections never quoted",
    "slowest": "Slowest answers",
}
REPORT_EMPTY = "Nothing was asked in this period."
# Why a question was refused, as a document owner reads it.
REASON_LABELS = {
    "no_match": "nothing similar in the documents",
    "not_found": "similar text, but no answer",
    "unverified": "quotes failed verification",
    "language": "asked in another language",
    "error": "an error while answering",
}


def reason_label(reason: str | None) -> str:
    return REASON_LABELS.get(reason or "", reason or "answered")


def percent(part: int, whole: int) -> str:
    return f"{part / whole:.0%}" if whole else "–"


def gap_line(gap: Gap) -> str:
    """One group of refused questions on one line: how often, the typical wording, the nearest section."""
    asked = f"{gap.count}× " if gap.count > 1 else ""
    nearest = f" — nearest: {gap.closest.heading} ({gap.closest.score:.2f})" if gap.closest else ""
    return f"{asked}“{gap.question}”{nearest} · {', '.join(gap.surfaces)}"


def gaps_text(gaps: Sequence[Gap], heading: str = GAPS_HEADING) -> str:
    if not gaps:
        return NO_GAPS
    return "\n".join([f"{heading}:", *(f"• {gap_line(g)}" for g in gaps)])


def _ago(then: float, now: float) -> str:
    minutes = int(max(now - then, 0) // 60)
    if minutes < 1:
        return "just now"
    if minutes < 120:
        return f"{minutes} min ago"
    return f"{minutes // 60} h ago"


def status_text(status: Status, now: float) -> str:
    """`/verbatim status`: documents, the last sync, today's questions, this week's refusal rate."""
    failed = f", {len(status.failed)} failed ({', '.join(status.failed)})" if status.failed else ", none failed"
    extra = "".join(f", {n} {what}" for what, n in status.extra.items())
    synced = (
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime(status.last_sync))} ({_ago(status.last_sync, now)})"
        if status.last_sync is not None
        else "not since this bot started"
    )
    week = status.week
    return "\n".join(
        [
            f"Documents: {status.indexed} indexed{failed}{extra}.",
            f"Last sync: {synced}.",
            f"Today: {status.today.asked} asked, {status.today.answered} answered.",
            f"Last 7 days: {week.asked} asked, {week.refused} refused ({percent(week.refused, week.asked)}).",
        ]
    )


def sync_text(report: SyncReport) -> str:
    """`/verbatim reindex`: what the sync did, and which documents failed and why."""
    lines = [
        f"Re-read the documents: {report.added} added, {report.updated} updated, {report.unchanged} unchanged, "
        f"{report.removed} removed, {len(report.failed)} failed ({report.seconds:.1f} s)."
    ]
    lines.extend(f"• {path}: {reason}" for path, reason in sorted(report.failed.items()))
    return "\n".join(lines)


def report_summary(report: Report) -> str:
    """The report's headline as text: what `verbatim report` prints."""
    totals = report.totals
    if not totals.asked:
        return f"{report.since[:10]} – {report.until[:10]}: {REPORT_EMPTY}"
    reasons = ", ".join(f"{reason_label(r)} {n}" for r, n in report.reasons.items())
    lines = [
        f"{report.since[:10]} – {report.until[:10]}: {totals.asked} asked, {totals.answered} answered, "
        f"{totals.refused} refused ({percent(totals.refused, totals.asked)})" + (f": {reasons}" if reasons else ""),
        "By surface: "
        + "; ".join(f"{name} {c.asked} asked, {c.refused} refused" for name, c in report.surfaces.items()),
        f"Feedback: {report.up} 👍, {report.down} 👎",
    ]
    return "\n".join(lines)


REPORT_NONE = "None in this period."
REPORT_COLUMNS = {
    "asked": "asked",
    "answered": "answered",
    "refused": "refused",
    "rate": "refused %",
    "surface": "surface",
    "surfaces": "surfaces",
    "times": "times",
    "question": "question",
    "nearest": "nearest section (similarity)",
    "last": "last asked",
    "quotes": "what the answer quoted",
    "when": "when (UTC)",
    "name": "name",
    "answers": "answers quoting it",
    "ms": "ms",
    "result": "result",
    "steps": "steps (ms)",
    "up": "👍 helpful",
    "down": "👎 not helpful",
}


def report_period(report: Report) -> str:
    since, until = (t[:16].replace("T", " ") for t in (report.since, report.until))
    return f"From {since} to {until} UTC. User ids are never shown: the run log keeps only hashes."


def gaps_note(report: Report) -> str:
    return (
        "Each row is one topic: questions whose meanings are close (average cosine similarity ≥ "
        f"{report.gap_similarity:.2f}) are counted together and shown by their most typical wording. "
        "The nearest section is what the documents hold closest to the topic: often the place to add the answer."
    )


def disliked_line(answer: Disliked) -> str:
    return f"{answer.down}× 👎 “{answer.question}” ({answer.at[:10]}, {answer.surface})"


def slow_line(slow: Slow) -> str:
    return f"{slow.total_ms:,.0f} ms “{slow.question}” ({slow.surface}, {slow.at[:10]})"
