"""The figure barrier: a statement's figures must stand in its own verified quotes."""

from __future__ import annotations

import pytest

from core.answering.figures import unquoted
from core.answering.quotes import verify
from core.common.answers import Claim, Draft
from core.common.questions import SCOPES
from core.measuring.selfcheck import OAK, QUESTION, Bench, run_checks


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    return Bench(tmp_path_factory.mktemp("figures"))


def test_a_statement_beside_a_genuine_quote_that_says_more_than_it_is_dropped_and_counted(bench):
    claims = (
        Claim("Oak fronts cost €185 per square metre.", 1, OAK),
        Claim("Everything is free.", 1, OAK),
        Claim("Oak fronts cost 158 EUR per m².", 1, OAK),
        Claim("Oak fronts cost 185 EUR, with 20% off in May.", 1, OAK),
    )
    statements, discarded = verify(claims, bench.hits(QUESTION))
    assert [s.text for s in statements] == ["Oak fronts cost €185 per square metre."]
    assert discarded == 3


def test_an_answer_whose_every_statement_invents_a_figure_is_refused(bench):
    pipeline, _ = bench.pipeline(Draft(True, (Claim("Everything is free.", 1, OAK),)))
    answer = pipeline.answer(QUESTION, SCOPES["public"])
    assert (answer.kind, answer.reason, answer.discarded) == ("refused", "unverified", 1)


def test_a_statement_that_restates_its_quote_always_passes(bench):
    statements, discarded = verify((Claim(OAK, 1, OAK), Claim("", 1, OAK)), bench.hits(QUESTION))
    assert len(statements) == 1 and discarded == 0


@pytest.mark.parametrize(
    ("statement", "quote"),
    [
        ("The worktop costs 1200 EUR.", "The worktop costs 1,200 EUR."),
        ("The worktop costs 1,200 EUR.", "The worktop costs 1 200 EUR."),
        ("The worktop costs €1200.", "The worktop costs 1\u202f200 EUR."),
        ("Delivery costs €40.", "Delivery costs 40 EUR."),
        ("Delivery costs 40.00 EUR.", "Delivery costs EUR 40."),
        ("The warranty lasts 5 years.", "Joinery carries a five year warranty."),
        ("The warranty lasts twenty-five years.", "25 years of warranty"),
        ("Staff may give 5% off.", "up to 5 percent discount"),
        ("Prices hold until 1 March 2025.", "valid until 2025-03-01"),
        ("A 2.5 kg hinge.", "a 2,5 kg hinge"),
        ("Carried to the 3rd floor for 12 EUR.", "to the third floor cost 12 EUR per floor"),
        ("Oak costs 185 EUR per m2.", "Oak fronts cost 185 EUR per m²."),
        ("Delivery is free within 15 km.", "Delivery within 15 km is free of charge."),
        ("One of our fronts is oak.", "Oak fronts cost 185 EUR per m²."),
    ],
)
def test_figures_are_compared_by_value_not_spelling(statement, quote):
    assert unquoted(statement, [quote]) == []


@pytest.mark.parametrize(
    ("statement", "quote", "missing"),
    [
        ("Everything is free.", "Oak fronts cost 185 EUR per m².", ["free"]),
        ("Oak fronts cost 158 EUR.", "Oak fronts cost 185 EUR per m².", ["158"]),
        ("Staff may give 5% off.", "Returns within 5 days.", ["5%"]),
        ("Prices hold until 1 April 2025.", "valid until 2025-03-01", ["april"]),
        ("The worktop costs 12,000 EUR.", "The worktop costs 1,200 EUR.", ["12,000"]),
        ("Delivery takes three weeks.", "Delivery takes two weeks.", ["three"]),
    ],
)
def test_a_figure_missing_from_the_quote_is_named(statement, quote, missing):
    assert unquoted(statement, [quote]) == missing


def test_verbatim_check_has_the_figure_barrier():
    results = {r.name: r for r in run_checks()}
    check = results["statement with an unquoted figure is dropped"]
    assert check.ok, check.detail
