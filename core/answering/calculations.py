"""Calculations computed by code from verified figures: the checks on a proposal's inputs, around the evaluator
(core/answering/arithmetic.py).

An answerer may propose `price * length`; only this module computes it. Every input is a figure
read from a verified quote (its unit read from the quote's own words, not from the answerer's)
or a quantity the question states. The expression is parsed with `ast` and walked against a
whitelist: `+ - * /`, unary minus, parentheses, `min`, `max`, `round(x)`, `round(x, 2)` and the
literals 0 and 1. Nothing is ever passed to `eval`. Arithmetic is `Decimal`; money is rounded
half-even to cents. Units are checked as the figures combine: no mixed currencies, no money ×
money, no number ÷ money, no money + plain number, and a price per unit needs a quantity in
that unit (EUR per m × m → EUR).
"""

from __future__ import annotations

import ast
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from core.answering.arithmetic import (
    Amount,
    CalculationRefused,
    _number,
    evaluate,
    parse,
    result_text,
    show,
)
from core.answering.figures import Reading, Unit, read_figures
from core.answering.policy import LIMITS
from core.answering.quotes import locate
from core.common.answers import Calculation, CalculationInput, Claim, FigureInput, Proposal, Quote, StatedInput
from core.common.values import Hit

log = logging.getLogger(__name__)


# --- units ---------------------------------------------------------------------------------------


def _one_figure(spec: str, what: str) -> Reading:
    found = read_figures(spec)
    if len(found) != 1:
        raise CalculationRefused(f"{what} {spec!r} is not one figure")
    return found[0]


def _agrees(said: Unit, read: Unit) -> bool:
    """Whether the unit an answerer wrote is consistent with the unit the source's words give."""
    if said.percent != read.percent:
        return False
    return all(not mine or mine == theirs for mine, theirs in ((said.money, read.money), (said.per, read.per))) and (
        not said.measure or said.measure == read.measure
    )


def _find(spec: Reading, readings: Sequence[Reading]) -> list[Reading]:
    return [r for r in readings if r.value == spec.value and _agrees(spec.unit, r.unit)]


# --- the evaluator -----------------------------------------------------------------------------


# --- checking a proposal against the verified quotes -----------------------------------------------


def _figure_text(reading: Reading) -> str:
    if reading.unit.percent:
        return f"{_number(reading.written)}%"
    return f"{_number(reading.written)} {reading.unit}".strip()


@dataclass(frozen=True)
class Read:
    """The question's figures and each verified quote's with its figures, by the fragment number the answerer
    cites: read once, and every proposal's checks work on this reading."""

    question: list[Reading]
    quotes: dict[int, list[tuple[Quote, list[Reading]]]]

    @classmethod
    def of(cls, question: str, quotes: Mapping[int, Sequence[Quote]]) -> Read:
        return cls(read_figures(question), {n: [(q, read_figures(q.text)) for q in held] for n, held in quotes.items()})


def check(proposal: Proposal, read: Read) -> Calculation:
    """The checked calculation, or CalculationRefused saying why."""
    name = " ".join(proposal.name.split())[:80] or "calculation"
    _check_shape(proposal)
    tree = parse(proposal.expression)
    env: dict[str, Amount] = {}
    shown: dict[str, str] = {}
    inputs: list[CalculationInput] = []
    for key, source in proposal.inputs:
        if not key.isidentifier() or key.startswith("_") or key in env:
            raise CalculationRefused(f"the input name {key!r} is not allowed")
        quote, reading = _input_reading(key, source, read)
        if abs(reading.value) > LIMITS.max_magnitude:
            raise CalculationRefused(f"input {key} is larger than any price in the documents")
        env[key] = Amount(reading.value, reading.unit)
        shown[key] = _figure_text(reading)
        inputs.append(CalculationInput(key, shown[key], quote))
    used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id not in ("min", "max", "round")}
    missing = used - set(env)
    if missing:
        raise CalculationRefused(f"the name {sorted(missing)[0]!r} is not one of the inputs")
    result = evaluate(proposal.expression, env)
    return Calculation(
        name,
        proposal.expression.strip(),
        show(tree, shown),
        tuple(i for i in inputs if i.name in used),
        result_text(result),
        str(result.unit),
        proposal.assumptions,
    )


def _check_shape(proposal: Proposal) -> None:
    if not proposal.inputs:
        raise CalculationRefused("a calculation needs inputs")
    if len(proposal.inputs) > LIMITS.max_inputs:
        raise CalculationRefused(f"more than {LIMITS.max_inputs} inputs")
    if len(proposal.assumptions) > LIMITS.max_assumptions:
        raise CalculationRefused(f"more than {LIMITS.max_assumptions} assumptions")
    for assumption in proposal.assumptions:
        if not assumption.text.strip() or not assumption.reason.strip():
            raise CalculationRefused("an assumption without its reason")


def _input_reading(key: str, source: FigureInput | StatedInput, read: Read) -> tuple[Quote | None, Reading]:
    """The figure an input names, with the verified quote that holds it (None: the question states it)."""
    if isinstance(source, FigureInput):
        spec = _one_figure(source.figure, f"input {key}:")
        held = [(q, r) for q, figures in read.quotes.get(source.fragment, ()) for r in _find(spec, figures)]
        if not held:
            raise CalculationRefused(
                f"input {key} points at {source.figure!r} in fragment {source.fragment}, "
                "whose verified quote does not hold it"
            )
        if len({r.unit for _, r in held}) > 1:
            raise CalculationRefused(f"input {key}: {source.figure!r} stands in its quote with different units")
        quote, reading = held[0]
        if reading.qualified:
            # "45 EUR per hour per fitter": a rate with a second qualifier can't be multiplied out safely.
            raise CalculationRefused(f"input {key}: {reading.text!r} is a rate with more than one 'per'")
        return quote, reading
    spec = _one_figure(source.text, f"input {key}:")
    found = _find(spec, read.question)
    if not found:
        raise CalculationRefused(f"input {key}: {source.text!r} is not stated in the question")
    return None, found[0]


def verified_quotes(claims: Sequence[Claim], hits: Sequence[Hit]) -> dict[int, list[Quote]]:
    """The quotes of `claims` that stand verbatim in the fragment each cites, by fragment number."""
    out: dict[int, list[Quote]] = {}
    for claim in claims:
        if not 1 <= claim.fragment <= len(hits):
            continue
        hit = hits[claim.fragment - 1]
        f = hit.fragment
        span = locate(claim.quote, f.text, ignore_spaces=f.page is not None)
        if span is not None:
            quote = Quote(span, hit.fragment_id, f.document, f.title, f.section, f.position, f.of, f.page)
            if quote not in out.setdefault(claim.fragment, []):
                out[claim.fragment].append(quote)
    return out


def check_all(
    proposals: Sequence[Proposal], claims: Sequence[Claim], hits: Sequence[Hit], question: str
) -> tuple[list[Calculation], int]:
    """The proposals that pass every check, and how many were refused (each reason is logged)."""
    read = Read.of(question, verified_quotes(claims, hits))
    checked: list[Calculation] = []
    refused = max(0, len(proposals) - LIMITS.max_calculations)
    for proposal in proposals[: LIMITS.max_calculations]:
        try:
            checked.append(check(proposal, read))
        except CalculationRefused as exc:
            refused += 1
            log.info("calculation %r refused: %s", proposal.name, exc)
    return checked, refused


def shown_only(calculations: Sequence[Calculation], shown: set[tuple[int, str]]) -> list[Calculation]:
    """The calculations whose quoted inputs are all among the quotes shown (fragment id, text)."""
    return [
        c
        for c in calculations
        if all(i.quote is None or (i.quote.fragment_id, i.quote.text) in shown for i in c.inputs)
    ]


def backing(calculation: Calculation) -> list[str]:
    """What a statement citing this calculation may state: its result, and the question's own figures in it."""
    return [calculation.result_text, *(i.figure for i in calculation.inputs if i.quote is None)]
