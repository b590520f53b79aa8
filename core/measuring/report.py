"""What the knowledge base is missing, read from the run log: the gap report and the admin status.

Every refusal is a question someone really asked that the documents don't answer; every 👎 an
answer someone didn't trust. `build_report` turns the run log of a period into one typed value
(counts per reason, surface and day; refused questions grouped by meaning; disliked answers with
their quotes; sections quoted most and never; the slowest answers; lines the documents address to
an assistant, which are never quoted as answers) that the CLI prints, writes as JSON or renders as
HTML. No user ids reach it: the run log keeps only hashes, and the report reads none of them.
"""

from __future__ import annotations

import logging
import re
import time
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import Any

from core.answering.instructions import instructions_in
from core.common.errors import VerbatimError
from core.measuring.gaps import DAY, Gap, find_gaps, iso
from core.measuring.register import read_register
from core.retrieval.knowledge import KnowledgeBase
from core.store import Logged
from core.store.corpus import Corpus
from core.vectors.clusters import SIMILARITY, same_topic

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Counts:
    asked: int = 0
    answered: int = 0
    refused: int = 0

    @property
    def refusal_rate(self) -> float:
        return self.refused / self.asked if self.asked else 0.0

    def add(self, entry: Logged) -> Counts:
        answered = entry.kind == "answered"
        return Counts(self.asked + 1, self.answered + answered, self.refused + (not answered))


@dataclass(frozen=True)
class Day:
    day: str  # YYYY-MM-DD, UTC
    counts: Counts


@dataclass(frozen=True)
class QuotedAs:
    text: str
    caption: str


@dataclass(frozen=True)
class Disliked:
    """An answer someone marked 👎, with the quotes it showed: the report's view of a `Logged` row."""

    id: str
    at: str
    surface: str
    question: str
    kind: str
    reason: str | None
    down: int
    up: int
    quotes: tuple[QuotedAs, ...]

    @classmethod
    def of(cls, entry: Logged) -> Disliked:
        quotes = tuple(QuotedAs(q["text"], q["caption"]) for q in _quoted(entry))
        return cls(
            entry.id, entry.at, entry.surface, entry.question, entry.kind, entry.reason, entry.down, entry.up, quotes
        )


@dataclass(frozen=True)
class Usage:
    """How many answers quoted a document or a section."""

    name: str  # a document's title, or a section's heading (Document › Section)
    document: str  # the document's path
    answers: int


@dataclass(frozen=True)
class Instruction:
    """A line of an indexed document that speaks to an assistant or a bot: never quoted as an answer, shown to the
    document's owner ("looks like an instruction")."""

    text: str
    document: str  # the document's path
    heading: str  # Document › Section


@dataclass(frozen=True)
class Slow:
    """One of the slowest answers: the report's view of a `Logged` row."""

    id: str
    at: str
    surface: str
    question: str
    kind: str
    total_ms: float
    timings: dict[str, float]

    @classmethod
    def of(cls, entry: Logged) -> Slow:
        return cls(entry.id, entry.at, entry.surface, entry.question, entry.kind, entry.total_ms, entry.timings)


@dataclass(frozen=True)
class Report:
    """The run log of one period, as document owners read it."""

    since: str
    until: str
    totals: Counts
    reasons: dict[str, int]  # refusals by reason
    surfaces: dict[str, Counts]
    days: tuple[Day, ...]  # every day of the period, quiet ones included
    gaps: tuple[Gap, ...]
    up: int
    down: int
    disliked: tuple[Disliked, ...]
    documents_quoted: tuple[Usage, ...]  # most quoted first
    documents_never: tuple[Usage, ...]  # indexed but quoted by no answer of the period
    sections_quoted: tuple[Usage, ...]
    sections_never: tuple[Usage, ...]
    slowest: tuple[Slow, ...]
    gap_similarity: float = SIMILARITY
    instructions: tuple[Instruction, ...] = ()  # lines the indexed documents address to an assistant

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["totals"]["refusal_rate"] = round(self.totals.refusal_rate, 4)
        return data


@dataclass(frozen=True)
class Status:
    """The figures `/verbatim status` shows an admin."""

    indexed: int
    failed: dict[str, str]  # document path → why it can't be read
    last_sync: float | None  # epoch seconds; None when this process has not read the folder
    today: Counts
    week: Counts
    extra: dict[str, int] = field(default_factory=dict)  # e.g. documents past review, when known
    sync_problem: str | None = None  # why the last sync of the folder failed (any process on the store)


# --- building -------------------------------------------------------------------------------------


def _days(since: float, until: float, entries: Sequence[Logged]) -> tuple[Day, ...]:
    counts: dict[str, Counts] = defaultdict(Counts)
    for entry in entries:
        counts[entry.at[:10]] = counts[entry.at[:10]].add(entry)
    first = datetime.fromtimestamp(since, UTC).date()
    last = datetime.fromtimestamp(until, UTC).date()
    days = []
    day: date = first
    while day <= last:
        key = day.isoformat()
        days.append(Day(key, counts.get(key, Counts())))
        day += timedelta(days=1)
    return tuple(days)


def _quoted(entry: Logged) -> list[dict[str, Any]]:
    return [q for s in entry.statements for q in s.get("quotes", ())]


@dataclass(frozen=True)
class _Indexed:
    """What one read of every indexed fragment gives the report."""

    documents: dict[tuple[str, str], None]  # (title, path), in index order
    sections: dict[tuple[str, str], None]  # (Document › Section, path)
    instructions: tuple[Instruction, ...]


def _indexed(corpus: Corpus) -> _Indexed:
    documents: dict[tuple[str, str], None] = {}
    sections: dict[tuple[str, str], None] = {}
    instructions: dict[Instruction, None] = {}  # a line repeated in one section is listed once
    for _, f in corpus.each():  # one chunk of fragments in memory at a time
        documents[(f.title, f.document)] = None
        sections[(f.heading, f.document)] = None
        instructions.update(dict.fromkeys(Instruction(line, f.document, f.heading) for line in instructions_in(f.text)))
    return _Indexed(documents, sections, tuple(instructions))


def _usage(
    entries: Sequence[Logged], indexed: _Indexed
) -> tuple[tuple[Usage, ...], tuple[Usage, ...], tuple[Usage, ...], tuple[Usage, ...]]:
    """Documents and sections by the number of answers quoting them; the indexed ones no answer quoted."""
    documents: Counter[tuple[str, str]] = Counter()
    sections: Counter[tuple[str, str]] = Counter()
    for entry in entries:
        quotes = _quoted(entry)
        # Counted once per answer: an answer quoting one section three times is still one answer.
        documents.update({(q["title"], q["document"]) for q in quotes})
        sections.update({(_heading(q["title"], q["section"]), q["document"]) for q in quotes})

    def ranked(counter: Counter[tuple[str, str]]) -> tuple[Usage, ...]:
        return tuple(Usage(name, doc, n) for (name, doc), n in sorted(counter.items(), key=lambda kv: (-kv[1], kv[0])))

    def never(indexed: dict[tuple[str, str], None], counter: Counter[tuple[str, str]]) -> tuple[Usage, ...]:
        return tuple(Usage(name, doc, 0) for name, doc in indexed if (name, doc) not in counter)

    return ranked(documents), never(indexed.documents, documents), ranked(sections), never(indexed.sections, sections)


def _heading(title: str, section: str) -> str:
    return f"{title} › {section}" if section else title


def build_report(
    knowledge: KnowledgeBase,
    days: float = 30.0,
    now: float | None = None,
    *,
    similarity: float | None = None,
    top: int = 10,
) -> Report:
    """The report of the last `days` days of the run log, over the documents indexed now (no sync)."""
    until = time.time() if now is None else now
    since = until - days * DAY
    similarity = same_topic(knowledge.settings.embedder) if similarity is None else similarity
    entries = knowledge.store.runlog.since(iso(since))
    entries = [e for e in entries if e.at <= iso(until)]
    corpus = knowledge.store.index.load()
    totals = Counts()
    surfaces: dict[str, Counts] = defaultdict(Counts)
    for entry in entries:
        totals = totals.add(entry)
        surfaces[entry.surface] = surfaces[entry.surface].add(entry)
    reasons = Counter(e.reason or "" for e in entries if e.kind == "refused")
    # Most 👎 first; among equals, the most recent.
    disliked = sorted(sorted((e for e in entries if e.down), key=lambda e: e.at, reverse=True), key=lambda e: -e.down)
    slowest = sorted(entries, key=lambda e: -e.total_ms)[:top]
    indexed = _indexed(corpus)
    documents_quoted, documents_never, sections_quoted, sections_never = _usage(entries, indexed)
    return Report(
        since=iso(since),
        until=iso(until),
        totals=totals,
        reasons=dict(reasons.most_common()),
        surfaces=dict(sorted(surfaces.items())),
        days=_days(since, until, entries),
        gaps=tuple(find_gaps(entries, knowledge.embedder, corpus, similarity)),
        up=sum(e.up for e in entries),
        down=sum(e.down for e in entries),
        disliked=tuple(Disliked.of(e) for e in disliked[: top * 2]),
        documents_quoted=documents_quoted,
        documents_never=documents_never,
        sections_quoted=sections_quoted,
        sections_never=sections_never,
        slowest=tuple(Slow.of(e) for e in slowest),
        gap_similarity=similarity,
        instructions=indexed.instructions,
    )


def admin_status(knowledge: KnowledgeBase, now: float | None = None) -> Status:
    """Documents indexed and failed, the last sync, today's questions and this week's refusal rate."""
    now = time.time() if now is None else now
    known = knowledge.store.index.known()
    midnight = datetime.fromtimestamp(now, UTC).replace(hour=0, minute=0, second=0, microsecond=0).timestamp()
    week = Counts()
    today = Counts()
    for entry in knowledge.store.runlog.since(iso(now - 7 * DAY)):
        week = week.add(entry)
        if entry.at >= iso(midnight):
            today = today.add(entry)
    extra: dict[str, int] = {}
    try:  # the provenance register knows which documents are past their review date
        register = read_register(knowledge.settings, today=datetime.fromtimestamp(now, UTC).date())
        extra["past review"] = sum(1 for a in register.attention if a.kind == "past_review")
    except VerbatimError as exc:
        log.warning("the provenance register can't be read for the status: %s", exc)
    return Status(
        indexed=sum(1 for d in known.values() if d.state == "indexed"),
        failed={path: d.error or "" for path, d in sorted(known.items()) if d.state == "failed"},
        last_sync=knowledge.last_sync,
        today=today,
        week=week,
        extra=extra,
        sync_problem=knowledge.store.index.sync_problem(),
    )


_SPAN = re.compile(r"^(\d+)([hdw])$")


def parse_span(text: str) -> float:
    """Days in a span such as `30d`, `2w` or `12h`; raises ValueError for anything else."""
    match = _SPAN.match(text.strip().lower())
    if not match or int(match.group(1)) == 0:
        raise ValueError(text)
    return int(match.group(1)) * {"h": 1 / 24, "d": 1.0, "w": 7.0}[match.group(2)]
