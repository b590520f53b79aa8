"""The answer contract: typed values every adapter renders and none re-decides."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from core.common.language import detect
from core.common.text import SECTION_SEPARATOR, caption
from core.common.values import Hit, LogRecord

Kind = Literal["answered", "refused"]
Reason = Literal["no_match", "not_found", "unverified", "error", "language"]


@dataclass(frozen=True)
class Turn:
    """One earlier exchange of a conversation, as history for a follow-up."""

    question: str
    answer: str


# How a refused turn reads in a conversation's history.
REFUSED_TURN = "(not in the knowledge base)"


@dataclass(frozen=True)
class Claim:
    """What an answerer proposes: a statement citing retrieved fragment `fragment` (1-based)."""

    text: str
    fragment: int
    quote: str


@dataclass(frozen=True)
class FigureInput:
    """A calculation input that points at a figure (`"310 EUR"`) in the quote of retrieved fragment `fragment`."""

    fragment: int
    figure: str


@dataclass(frozen=True)
class StatedInput:
    """A calculation input the question itself states (`"3 m"`)."""

    text: str


@dataclass(frozen=True)
class Assumption:
    """Something a calculation had to assume, and why; never shown as a quoted fact."""

    text: str
    reason: str

    def to_json(self) -> dict[str, str]:
        return {"text": self.text, "reason": self.reason}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Assumption:
        return cls(data["text"], data["reason"])


@dataclass(frozen=True)
class Proposal:
    """A calculation an answerer proposes: an expression over named inputs, checked by code before it is shown."""

    name: str
    expression: str
    inputs: tuple[tuple[str, FigureInput | StatedInput], ...]
    assumptions: tuple[Assumption, ...] = ()


@dataclass(frozen=True)
class Draft:
    """An answerer's reply before verification."""

    found: bool
    claims: tuple[Claim, ...] = ()
    model_calls: int = 0
    calculations: tuple[Proposal, ...] = ()


@dataclass(frozen=True)
class Quote:
    """A verified quote: `text` is exactly as it stands in the fragment."""

    text: str
    fragment_id: int
    document: str
    title: str
    section: tuple[str, ...]
    position: int
    of: int
    page: int | None = None
    as_of: str | None = None  # ISO date the document speaks for (its `as_of`, else the file's date)
    stale: bool = False  # the document was past its review date when this was answered

    @property
    def caption(self) -> str:
        return caption(self.title, self.section, self.position, self.of, self.page)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Quote:
        section = tuple(data["section"].split(SECTION_SEPARATOR)) if data["section"] else ()
        return cls(
            data["text"],
            data["fragment_id"],
            data["document"],
            data["title"],
            section,
            data["position"],
            data["of"],
            data.get("page"),
            data.get("as_of"),
            bool(data.get("stale", False)),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "document": self.document,
            "title": self.title,
            "section": SECTION_SEPARATOR.join(self.section),
            "position": self.position,
            "of": self.of,
            "page": self.page,
            "caption": self.caption,
            "fragment_id": self.fragment_id,
            "as_of": self.as_of,
            "stale": self.stale,
        }


@dataclass(frozen=True)
class Statement:
    text: str
    quotes: tuple[Quote, ...]

    @property
    def restates_its_quote(self) -> bool:
        """True when the statement is just its one quote (the extractive answerer's): show it once."""
        return len(self.quotes) == 1 and " ".join(self.quotes[0].text.split()) == " ".join(self.text.split())

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Statement:
        return cls(data["text"], tuple(Quote.from_json(q) for q in data["quotes"]))

    def to_json(self) -> dict[str, Any]:
        return {"text": self.text, "quotes": [q.to_json() for q in self.quotes]}


@dataclass(frozen=True)
class CalculationInput:
    """One input of a checked calculation: its figure as the code read it, and the quote it stands in.

    `quote` is None for a quantity the question states.
    """

    name: str
    figure: str  # the value with its unit as read: "310 EUR per m", "3 m", "40%"
    quote: Quote | None

    def to_json(self) -> dict[str, Any]:
        source: dict[str, Any] = (
            {"question": True} if self.quote is None else {"caption": self.quote.caption, "quote": self.quote.text}
        )
        if self.quote is not None:
            source["fragment_id"] = self.quote.fragment_id
            source["source"] = self.quote.to_json()  # the whole quote, so a logged answer can be shown again
        return {"name": self.name, "figure": self.figure, **source}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> CalculationInput:
        source = data.get("source")
        return cls(data["name"], data["figure"], Quote.from_json(source) if source else None)


@dataclass(frozen=True)
class Calculation:
    """A calculation computed by code from verified figures: `shown` is the expression with the figures in it."""

    name: str
    expression: str
    shown: str  # "3 m × 310 EUR per m"
    inputs: tuple[CalculationInput, ...]
    result: str  # "930.00": money always with its cents
    unit: str  # "EUR", "EUR per m", "m", "%", or "" for a plain number
    assumptions: tuple[Assumption, ...] = ()

    @property
    def result_text(self) -> str:
        """The result with its unit, as a statement may cite it."""
        return f"{self.result} {self.unit}".strip()

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "expression": self.expression,
            "shown": self.shown,
            "inputs": [i.to_json() for i in self.inputs],
            "result": self.result,
            "unit": self.unit,
            "assumptions": [a.to_json() for a in self.assumptions],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Calculation:
        return cls(
            data["name"],
            data["expression"],
            data["shown"],
            tuple(CalculationInput.from_json(i) for i in data["inputs"]),
            data["result"],
            data["unit"],
            tuple(Assumption.from_json(a) for a in data["assumptions"]),
        )


@dataclass(frozen=True)
class Answer:
    """The outcome of one question: answered with verified quotes, or refused with a reason."""

    id: str
    question: str
    kind: Kind
    reason: Reason | None
    statements: tuple[Statement, ...]
    discarded: int
    retrieved: tuple[Hit, ...]
    timings_ms: dict[str, float]
    answerer: str
    standalone_question: str = ""
    model_calls: int = 0
    closest: tuple[str, ...] = field(default=())
    error: str = ""  # for reason "error": one sentence for the operator (never a key); chat users see an apology
    language: str = ""  # for reason "language": the ISO code the question seems to be written in
    languages: tuple[str, ...] = ()  # for reason "language": the codes questions may be asked in
    scope: tuple[str, ...] = ()  # the audiences the answer could read ("public", "internal"); () when unknown
    calculations: tuple[Calculation, ...] = ()  # computed by code from verified quotes and the question
    calculations_dropped: int = 0  # proposed calculations that failed their checks
    # The language to word the reply in: the question's when it can be told, else the documents' main one
    # ("" when neither is known). Quotes stay in their documents' language.
    reply_language: str = ""

    @property
    def answered(self) -> bool:
        return self.kind == "answered"

    def to_record(self) -> LogRecord:
        """The answer as the run log keeps it: statements and calculations as JSON, scores and timings rounded."""
        return LogRecord(
            id=self.id,
            question=self.question,
            kind=self.kind,
            reason=self.reason,
            statements=[s.to_json() for s in self.statements],
            discarded=self.discarded,
            answerer=self.answerer,
            timings={k: round(v, 2) for k, v in self.timings_ms.items()},
            calculations=[c.to_json() for c in self.calculations],
            scope=tuple(self.scope),
            standalone_question=self.standalone_question,
            fragments=tuple((h.fragment_id, round(h.score, 4)) for h in self.retrieved),
            model_calls=self.model_calls,
        )

    @classmethod
    def from_record(cls, record: LogRecord) -> Answer:
        """A logged answer, rebuilt for showing again, without its retrieval details."""
        return cls(
            id=record.id,
            question=record.question,
            kind=record.kind,  # type: ignore[arg-type]  # the log holds only what an Answer wrote
            reason=record.reason,  # type: ignore[arg-type]
            statements=tuple(Statement.from_json(s) for s in record.statements),
            discarded=record.discarded,
            retrieved=(),
            timings_ms=record.timings,
            answerer=record.answerer,
            calculations=tuple(Calculation.from_json(c) for c in record.calculations),
            scope=record.scope,
            reply_language=detect(record.question) or "",
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "question": self.question,
            "standalone_question": self.standalone_question or self.question,
            "kind": self.kind,
            "reason": self.reason,
            "statements": [s.to_json() for s in self.statements],
            "discarded": self.discarded,
            "calculations": [c.to_json() for c in self.calculations],
            "calculations_dropped": self.calculations_dropped,
            "retrieved": [
                {
                    "fragment_id": h.fragment_id,
                    "document": h.fragment.document,
                    "caption": h.fragment.caption,
                    "score": round(h.score, 4),
                }
                for h in self.retrieved
            ],
            "closest": list(self.closest),
            "error": self.error or None,
            "language": self.language or None,
            "reply_language": self.reply_language or None,
            "answerer": self.answerer,
            "model_calls": self.model_calls,
            "timings_ms": {k: round(v, 2) for k, v in self.timings_ms.items()},
        }


def answer_as_turn(answer: Answer) -> str:
    """What an answer says, as a conversation's history reads it (the same as `turns_from` reads the log)."""
    return " ".join(s.text for s in answer.statements) if answer.kind == "answered" else REFUSED_TURN


def turns_from(records: Sequence[LogRecord]) -> list[Turn]:
    """A conversation's logged answers as the history a follow-up is read with."""
    return [
        Turn(r.question, " ".join(s["text"] for s in r.statements) if r.kind == "answered" else REFUSED_TURN)
        for r in records
    ]
