"""What the gap report, `verbatim status` and the admin commands say: their headings, labels and lines."""

from __future__ import annotations

import time
from collections.abc import Sequence

from core import (
    Disliked,
    Gap,
    Instruction,
    Report,
    Slow,
    Status,
    SyncReport,
    skipped_summary,
)

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
    "instructions": "Lines that look like an instruction to a chatbot",
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
            *([f"The last sync failed: {status.sync_problem}"] if status.sync_problem else []),
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
    if report.skipped:
        lines.append(skipped_summary(report.skipped))
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
    "line": "line (never quoted as an answer)",
    "where": "section (document)",
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


INSTRUCTIONS_NOTE = (
    "These lines speak to an assistant or a bot, not to a reader: they are never quoted as an answer. "
    "Remove them from the document, or reword them for people."
)


# What customers can't be told when only staff-only documents state it (core.measuring.coverage's kinds).
SHORTFALL_KINDS = {"prices": "prices", "hours": "opening hours", "terms": "warranty, return or refund terms"}


def public_lacks_line(kind: str, documents: Sequence[str], surfaces: str) -> str:
    """`verbatim status` and `doctor`: staff-only documents state what no public one does, and how to share them."""
    what = SHORTFALL_KINDS.get(kind, kind)
    named = ", ".join(documents[:3]) + (f" and {len(documents) - 3} more" if len(documents) > 3 else "")
    one = len(documents) == 1
    return (
        f"{len(documents)} staff-only document{'' if one else 's'} hold{'s' if one else ''} {what} ({named}) "
        f"and no public one does: customers on {surfaces} can't be told {what}; mark {'it' if one else 'them'} "
        f"public with a sidecar ({documents[0]}.meta.yml: audience: public)"
    )


def instruction_line(item: Instruction) -> str:
    return f"“{item.text}” looks like an instruction — {item.heading} ({item.document})"


def slow_line(slow: Slow) -> str:
    return f"{slow.total_ms:,.0f} ms “{slow.question}” ({slow.surface}, {slow.at[:10]})"
