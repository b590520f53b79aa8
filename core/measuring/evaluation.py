"""Measuring answer quality: a question file, the same pipeline the bots use, and metrics."""

from __future__ import annotations

import json
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

import numpy as np

from core.answering import judge as judge_module
from core.answering.extractive import ExtractiveAnswerer
from core.answering.pipeline import Pipeline, build_answer, decide
from core.answering.policy import policy_for
from core.answering.quotes import locate
from core.common.answers import Answer, Turn, answer_as_turn
from core.common.errors import VerbatimError
from core.common.questions import SCOPES
from core.common.settings import Settings
from core.retrieval.knowledge import KnowledgeBase
from core.vectors.embeddings import Embedder


class QuestionFileError(VerbatimError):
    """Raised when a question file can't be read or a line is malformed."""


@dataclass(frozen=True)
class GoldQuestion:
    id: str
    question: str
    expect: str  # "answer" or "refuse"
    documents: tuple[str, ...] = ()
    sections: tuple[str, ...] = ()
    quote_contains: tuple[str, ...] = ()
    audience: str = "public"
    category: str = ""
    pages: tuple[int, ...] = ()  # for paged documents: a quote from one of these pages is required
    result: str = ""  # an expected calculation result ("540.00"): some calculation shown must come to it
    unit: str = ""  # and its unit ("EUR"), when given
    follows: str = ""  # the id of an earlier question this one follows up, asked first in the same conversation


def load_questions(path: Path) -> list[GoldQuestion]:
    """One JSON object per line; blank lines and `#` lines are skipped."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise QuestionFileError(f"The question file {path} can't be read ({exc}).") from exc
    questions: list[GoldQuestion] = []
    seen: set[str] = set()
    for number, line in enumerate(lines, start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        where = f"{path.name} line {number}"
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            raise QuestionFileError(f"{where} is not valid JSON ({exc.msg}).") from None
        gold = _gold_question(data, where, f"line-{number}")
        if gold.id in seen:
            raise QuestionFileError(f"{where}: the id {gold.id!r} is used twice.")
        if gold.follows and gold.follows not in seen:
            raise QuestionFileError(f"{where}: it follows {gold.follows!r}, which is not an earlier question.")
        seen.add(gold.id)
        questions.append(gold)
    if not questions:
        raise QuestionFileError(f"The question file {path} holds no questions.")
    return questions


def _gold_question(data: object, where: str, default_id: str) -> GoldQuestion:
    """One line's question, checked field by field; QuestionFileError names the line and the field."""
    if not isinstance(data, dict):
        raise QuestionFileError(f"{where} is not a JSON object.")
    question = data.get("question")
    if not isinstance(question, str) or not question.strip():
        raise QuestionFileError(f'{where} has no "question" text.')
    expect = data.get("expect")
    if expect not in ("answer", "refuse"):
        raise QuestionFileError(f'{where}: "expect" must be "answer" or "refuse", not {expect!r}.')
    audience = data.get("audience", "public")
    if audience not in SCOPES:
        raise QuestionFileError(f'{where}: "audience" must be public or internal, not {audience!r}.')
    lists = {}
    for key in ("documents", "sections", "quote_contains"):
        value = data.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise QuestionFileError(f'{where}: "{key}" must be a list of strings.')
        lists[key] = tuple(value)
    pages = data.get("pages", [])
    if not isinstance(pages, list) or not all(isinstance(v, int) and not isinstance(v, bool) for v in pages):
        raise QuestionFileError(f'{where}: "pages" must be a list of page numbers.')
    if expect == "answer" and not lists["documents"]:
        raise QuestionFileError(f'{where}: an answerable question needs "documents".')
    result, unit = data.get("result", ""), data.get("unit", "")
    if not isinstance(result, str) or not isinstance(unit, str):
        raise QuestionFileError(f'{where}: "result" and "unit" must be strings, e.g. "540.00" and "EUR".')
    try:
        expected = Decimal(result) if result else None
    except InvalidOperation:
        raise QuestionFileError(f'{where}: "result" {result!r} is not a number.') from None
    if expected is not None and expect != "answer":
        raise QuestionFileError(f'{where}: only an answerable question can expect a calculation "result".')
    follows = data.get("follows", "")
    if not isinstance(follows, str):
        raise QuestionFileError(f'{where}: "follows" must be the id of an earlier question.')
    return GoldQuestion(
        str(data.get("id") or default_id),
        question,
        expect,
        audience=audience,
        category=str(data.get("category", "")),
        pages=tuple(pages),
        result=result,
        unit=unit,
        follows=follows,
        **lists,
    )


@dataclass(frozen=True)
class Outcome:
    """One question's result and its verdict."""

    gold: GoldQuestion
    answer: Answer
    hit: bool
    correct: bool
    unverified_shown: int
    hit_before_floor: bool = False  # an expected fragment among the top 5 with no floor at all
    calculation_right: bool = False  # for a gold question with a "result": a calculation shown comes to it
    # Correct, and the first quote alone holds the answer (for a calculation: the calculation is right).
    first_quote_correct: bool = False

    @property
    def verdict(self) -> str:
        if self.gold.expect == "answer":
            if self.correct:
                return "correct"
            return "false refusal" if not self.answer.answered else "wrong quotes"
        return "refused" if not self.answer.answered else "answered (should refuse)"

    @property
    def ok(self) -> bool:
        return self.verdict in ("correct", "refused")


def judge(gold: GoldQuestion, answer: Answer) -> Outcome:
    def wanted(document: str, section: str) -> bool:
        if document not in gold.documents:
            return False
        return not gold.sections or any(s.lower() in section.lower() for s in gold.sections)

    hit = any(wanted(h.fragment.document, h.fragment.section_path) for h in answer.retrieved)
    quotes = [q for s in answer.statements for q in s.quotes]
    # Re-verify what is shown, independently of the pipeline: it must always be 0.
    by_id = {h.fragment_id: h.fragment.text for h in answer.retrieved}
    unverified = sum(
        1 for q in quotes if locate(q.text, by_id.get(q.fragment_id, ""), ignore_spaces=q.page is not None) is None
    )
    shown = " ".join(q.text for q in quotes if q.document in gold.documents)
    calculated = bool(gold.result) and any(
        Decimal(c.result) == Decimal(gold.result) and (not gold.unit or c.unit == gold.unit)
        for c in answer.calculations
    )
    correct = (
        gold.expect == "answer"
        and (calculated or not gold.result)
        and answer.answered
        and any(q.document in gold.documents for q in quotes)
        and all(needle.lower() in shown.lower() for needle in gold.quote_contains)
        and (not gold.pages or any(q.page in gold.pages for q in quotes if q.document in gold.documents))
    )
    first = quotes[0] if quotes else None
    first_correct = correct and (
        calculated
        or (
            first is not None
            and first.document in gold.documents
            and all(needle.lower() in first.text.lower() for needle in gold.quote_contains)
        )
    )
    return Outcome(
        gold, answer, hit, correct, unverified, calculation_right=calculated, first_quote_correct=first_correct
    )


@dataclass
class Report:
    outcomes: list[Outcome] = field(default_factory=list)
    seconds: float = 0.0  # wall time of the whole run, indexing included

    def metrics(self) -> dict[str, Any]:
        answerable = [o for o in self.outcomes if o.gold.expect == "answer"]
        refusable = [o for o in self.outcomes if o.gold.expect == "refuse"]
        out_of_domain = [o for o in refusable if o.gold.category == "out_of_domain"]
        calculating = [o for o in self.outcomes if o.gold.result]

        def rate(items: list[Outcome], test: Callable[[Outcome], bool]) -> float:
            return round(sum(1 for o in items if test(o)) / len(items), 4) if items else 0.0

        quote_counts = [sum(len(s.quotes) for s in o.answer.statements) for o in self.outcomes if o.answer.answered]
        stages: dict[str, list[float]] = {}
        for o in self.outcomes:
            for stage, ms in o.answer.timings_ms.items():
                stages.setdefault(stage, []).append(ms)
        latency = {
            stage: {"p50": round(float(np.percentile(v, 50)), 2), "p95": round(float(np.percentile(v, 95)), 2)}
            for stage, v in stages.items()
        }
        return {
            "questions": len(self.outcomes),
            "answerable": len(answerable),
            "must_refuse": len(refusable),
            "hit_at_5": rate(answerable, lambda o: o.hit),
            "hit_at_5_before_floor": rate(answerable, lambda o: o.hit_before_floor),
            "answered_rate": rate(answerable, lambda o: o.answer.answered),
            "correct_rate": rate(answerable, lambda o: o.correct),
            # So that quoting less is judged fairly: does the first quote alone answer, and how many are shown?
            "first_quote_correct": rate(answerable, lambda o: o.first_quote_correct),
            "quotes_per_answer": round(sum(quote_counts) / len(quote_counts), 2) if quote_counts else 0.0,
            "false_refusals": sum(1 for o in answerable if not o.answer.answered),
            "refusal_rate": rate(refusable, lambda o: not o.answer.answered),
            "out_of_domain_refusal_rate": rate(out_of_domain, lambda o: not o.answer.answered),
            "refusal_reasons": dict(Counter(o.answer.reason or "answered" for o in refusable)),
            "calculations": len(calculating),
            "calculation_right_rate": rate(calculating, lambda o: o.calculation_right),
            "unverified_quotes_shown": sum(o.unverified_shown for o in self.outcomes),
            # Claims an answerer proposed that the verifier threw out (a quote not found verbatim, say).
            "claims_discarded": sum(o.answer.discarded for o in self.outcomes),
            "model_calls": sum(o.answer.model_calls for o in self.outcomes),
            "latency_ms": latency,
        }

    def to_json(self) -> dict[str, Any]:
        return {
            "metrics": self.metrics(),
            "questions": [
                {
                    "id": o.gold.id,
                    "question": o.gold.question,
                    "expect": o.gold.expect,
                    "verdict": o.verdict,
                    "ok": o.ok,
                    "retrieval_hit": o.hit,
                    "answer": o.answer.to_json(),
                }
                for o in self.outcomes
            ],
        }


def asked(pipeline: Pipeline, questions: Sequence[GoldQuestion]) -> Iterator[tuple[GoldQuestion, Answer]]:
    """Each question asked as a chat user asks it: a follow-up with the turn it follows as its history."""
    turns: dict[str, Turn] = {}
    for gold in questions:
        history = [turns[gold.follows]] if gold.follows else []
        answer = pipeline.answer(gold.question, SCOPES[gold.audience], history, surface="eval")
        turns[gold.id] = Turn(gold.question, answer_as_turn(answer))
        yield gold, answer


def evaluate(
    questions: list[GoldQuestion],
    settings: Settings,
    progress: Callable[[Outcome], None] | None = None,
    embedder: Embedder | None = None,
) -> Report:
    """Index `settings.knowledge_dir` into a throwaway data folder and ask every question."""
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="verbatim-eval-") as tmp:
        local = replace(settings, data_dir=Path(tmp))
        kb = KnowledgeBase(local, embedder)
        pipeline = Pipeline(kb.settings, kb)  # with the embedder the documents settled, when it was left open
        try:
            pipeline.knowledge.sync()
            report = Report()
            for gold, answer in asked(pipeline, questions):
                outcome = judge(gold, answer)
                if gold.expect == "answer":
                    # Ranking quality apart from the floor: would the expected fragment be among the top 5 at all?
                    ranked = pipeline.knowledge.retrieve(gold.question, SCOPES[gold.audience], floor=-1.0).hits
                    outcome = replace(
                        outcome, hit_before_floor=judge(gold, replace(answer, retrieved=tuple(ranked))).hit
                    )
                report.outcomes.append(outcome)
                if progress:
                    progress(outcome)
            report.seconds = time.perf_counter() - started
            return report
        finally:
            pipeline.close()


@dataclass(frozen=True)
class SweepRow:
    floor: float
    threshold: float
    answered: float
    correct: float
    refused: float
    out_of_domain_refused: float


def recommend(rows: list[SweepRow]) -> SweepRow:
    """The pair to use: every out-of-domain question refused if any pair manages it, then the most
    correct answers plus refusals, ties going to more refusals (an honest refusal costs less than
    an invention) and then to the higher floor."""
    pool = [r for r in rows if r.out_of_domain_refused >= 1.0] or rows
    return max(pool, key=lambda r: (round(r.correct + r.refused, 6), r.refused, r.floor, r.threshold))


def calibration_grid(
    questions: list[GoldQuestion],
    settings: Settings,
    floors: list[float],
    thresholds: list[float],
) -> Iterator[SweepRow]:
    """Rates for every (similarity floor, found-threshold) pair, from one retrieval per question."""
    with tempfile.TemporaryDirectory(prefix="verbatim-calibrate-") as tmp:
        kb = KnowledgeBase(replace(settings, data_dir=Path(tmp)))
        kb.sync()
        # With the judge on (the default), the second axis is its threshold; off, the similarity found-threshold.
        policy = policy_for(kb.settings)
        answerer = ExtractiveAnswerer(kb.embedder, judge_module.shared() if settings.judge else None, policy)
        # Lowering the floor only appends lower-scored hits, so one wide retrieval serves every floor.
        wide = [kb.retrieve(q.question, SCOPES[q.audience], floor=-1.0).hits for q in questions]
        for floor in floors:
            for threshold in thresholds:
                if settings.judge:
                    answerer.policy = replace(policy, judge_threshold=threshold)
                else:
                    answerer.policy = replace(policy, found_threshold=threshold)
                report = Report()
                for gold, hits in zip(questions, wide, strict=True):
                    kept = [h for h in hits if h.score >= floor]
                    verdict = decide(answerer, gold.question, kept)
                    report.outcomes.append(judge(gold, build_answer(gold.question, verdict, kept, answerer.name)))
                m = report.metrics()
                yield SweepRow(
                    floor,
                    threshold,
                    m["answered_rate"],
                    m["correct_rate"],
                    m["refusal_rate"],
                    m["out_of_domain_refusal_rate"],
                )
        kb.close()
