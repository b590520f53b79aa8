"""The evaluator (core/answering/calculations.py): whitelisted syntax, decimal arithmetic, units checked by code."""

from decimal import Decimal

import pytest

from core.answering.arithmetic import Amount, CalculationRefused, evaluate
from core.answering.calculations import Read, check
from core.answering.figures import Unit, read_figures
from core.common.answers import Assumption, FigureInput, Proposal, Quote, StatedInput

EUR = Unit(money="EUR")
PER_M = Unit(money="EUR", per="m")
METRES = Unit(measure="m")
PERCENT = Unit(percent=True)
PLAIN = Unit()


def amount(value: str, unit: Unit = PLAIN) -> Amount:
    return Amount(Decimal(value), unit)


ENV = {
    "price": amount("310", PER_M),
    "length": amount("3", METRES),
    "fee": amount("85", EUR),
    "other": amount("40", EUR),
    "rate": amount("0.10", PERCENT),
    "usd": amount("5", Unit(money="USD")),
    "km": amount("30", Unit(measure="km")),
    "n": amount("4"),
}


@pytest.mark.parametrize(
    ("expression", "value", "unit"),
    [
        ("length * price", "930.00", EUR),
        ("fee + other", "125.00", EUR),
        ("fee - other", "45.00", EUR),
        ("fee / n", "21.25", EUR),
        ("-fee", "-85.00", EUR),
        ("(fee + other) * n", "500.00", EUR),
        ("min(fee, other)", "40.00", EUR),
        ("max(fee, other)", "85.00", EUR),
        ("fee * (1 - rate)", "76.50", EUR),
        ("fee * rate", "8.50", EUR),
        ("fee / other", "2.125", Unit()),
        ("round(fee / other)", "2", Unit()),
        ("round(fee / other, 2)", "2.12", Unit()),
        ("fee * 0 + other * 1", "40.00", EUR),
    ],
)
def test_each_operator_computes_in_decimal_with_units(expression, value, unit):
    result = evaluate(expression, ENV)
    assert result.value == Decimal(value) and result.unit == unit


def test_money_is_rounded_half_even_to_cents():
    assert evaluate("a / n", {"a": amount("0.125", EUR), "n": amount("1")}).value == Decimal("0.12")
    assert evaluate("a / n", {"a": amount("0.135", EUR), "n": amount("1")}).value == Decimal("0.14")
    assert str(evaluate("a", {"a": amount("540", EUR)}).value) == "540.00"


@pytest.mark.parametrize(
    ("expression", "reason"),
    [
        ("fee + usd", "mixed currencies"),
        ("fee * other", "money times money"),
        ("n / fee", "a number divided by money"),
        ("fee + n", "money plus or minus a plain number"),
        ("price * km", "needs a quantity in m"),
        ("fee * km", "has no meaning"),
        ("fee / (other - other)", "division by zero"),
        ("min(fee, n)", "different units"),
    ],
)
def test_unit_errors_are_refused(expression, reason):
    with pytest.raises(CalculationRefused, match=reason):
        evaluate(expression, ENV)


@pytest.mark.parametrize(
    ("expression", "reason"),
    [
        ("__import__('os').system('true')", "only min, max and round"),
        ("fee.__class__", "attribute access"),
        ("fee ** 99999999", "Pow is not allowed"),
        ("9 ** 9 ** 9", "not allowed"),
        ("2 * fee", "literal 2 is not allowed"),
        ("1e999 * fee", "literal"),
        ("-" * 20 + "fee", "nested more than"),
        ("-" * 100 + "fee", "more than 64 parts"),
        ("round(" * 14 + "fee" + ")" * 14, "nested more than"),
        ("x + fee", "not one of the inputs"),
        ("[fee][0]", "not allowed"),
        ("(lambda: fee)()", "only min, max and round"),
        ("fee if fee else other", "not allowed"),
        ("fee; other", "can't be read"),
        ("round(fee, 3)", "round takes"),
        ("fee + " * 80 + "fee", "longer than"),
        ("", "empty"),
    ],
)
def test_eval_style_input_is_refused(expression, reason):
    with pytest.raises(CalculationRefused, match=reason):
        evaluate(expression, ENV)


def test_units_are_read_from_the_words_around_a_figure():
    read = {
        r.text: str(r.unit) for r in read_figures("Solid oak worktop, 38 mm: 310 EUR per running metre; €40 or 5%.")
    }
    assert read == {"38 mm": "mm", "310 EUR per running metre": "EUR per m", "€40": "EUR", "5%": "%"}
    assert [str(r.unit) for r in read_figures("120 EUR per m² and 50 EUR per cubic metre")] == [
        "EUR per m²",
        "EUR per m³",
    ]


QUOTE = Quote(
    "Solid oak worktop, 38 mm: 310 EUR per running metre.", 7, "price-list.md", "Price list", ("Worktops",), 3, 7
)


def proposal(figure: str = "310 EUR", stated: str = "3 m", fragment: int = 1, **kwargs) -> Proposal:
    inputs = (("length", StatedInput(stated)), ("price", FigureInput(fragment, figure)))
    return Proposal("worktop", "length * price", inputs, **kwargs)


def test_a_checked_calculation_links_each_input_to_its_quote_or_the_question():
    done = check(proposal(), Read.of("How much are 3 m of oak worktop?", {1: [QUOTE]}))
    assert (done.result, done.unit, done.shown) == ("930.00", "EUR", "3 m × 310 EUR per m")
    assert [(i.figure, i.quote) for i in done.inputs] == [("3 m", None), ("310 EUR per m", QUOTE)]
    assert done.to_json()["inputs"][1]["caption"] == QUOTE.caption


@pytest.mark.parametrize(
    ("kwargs", "quotes", "reason"),
    [
        ({"figure": "301 EUR"}, {1: [QUOTE]}, "does not hold it"),
        ({"figure": "310 GBP"}, {1: [QUOTE]}, "does not hold it"),
        ({"fragment": 2}, {1: [QUOTE]}, "does not hold it"),
        ({"stated": "4 m"}, {1: [QUOTE]}, "not stated in the question"),
        ({"stated": "3 km"}, {1: [QUOTE]}, "not stated in the question"),
        ({"figure": "310 EUR and 38 mm"}, {1: [QUOTE]}, "not one figure"),
        ({"assumptions": (Assumption("zone B", ""),)}, {1: [QUOTE]}, "without its reason"),
        ({"assumptions": tuple(Assumption(f"a{i}", "r") for i in range(9))}, {1: [QUOTE]}, "more than 8"),
    ],
)
def test_an_input_that_is_not_where_it_points_is_refused_with_a_reason(kwargs, quotes, reason):
    with pytest.raises(CalculationRefused, match=reason):
        check(proposal(**kwargs), Read.of("How much are 3 m of oak worktop?", quotes))


def test_a_rate_with_two_pers_is_not_multiplied_out():
    """'45 EUR per hour per fitter' × 3 h would leave the fitters out: refused, the quote alone is shown."""
    fitters = Quote("Fitting costs 45 EUR per hour per fitter.", 8, "faq.md", "FAQ", ("Fitting",), 1, 2)
    hourly = Proposal("fitting", "hours * rate", (("hours", StatedInput("3 h")), ("rate", FigureInput(1, "45 EUR"))))
    with pytest.raises(CalculationRefused, match="more than one 'per'"):
        check(hourly, Read.of("How much is fitting for 3 h?", {1: [fitters]}))
