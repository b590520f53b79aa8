"""The extractive answerer's calculation shapes on the demo knowledge base: computed when sure, quoted when not."""

import pytest

from tests.core.conftest import PUBLIC, quotes_of


def only_calculation(answer):
    assert answer.answered and len(answer.calculations) == 1, answer.calculations
    return answer.calculations[0]


@pytest.mark.parametrize(
    ("question", "shown", "result"),
    [
        ("How much are 3 m of oak worktop?", "3 m × 310 EUR per m", "930.00"),
        ("what do 3 square metres of painted MDF fronts cost", "3 m² × 120 EUR per m²", "360.00"),
        ("how much to carry a 50 kg item up 3 floors", "3 floors × 12 EUR per floor", "36.00"),
    ],
)
def test_a_quantity_in_the_question_times_a_unit_price_in_the_best_quote(extractive, question, shown, result):
    calculation = only_calculation(extractive.answer(question, PUBLIC))
    assert (calculation.shown, calculation.result, calculation.unit) == (shown, result, "EUR")


def test_the_sum_of_prices_asked_for_together_picks_the_zone_the_distance_falls_in(extractive):
    answer = extractive.answer("How much is 3 m of oak worktop with delivery 30 km away?", PUBLIC)
    calculation = only_calculation(answer)
    assert calculation.shown == "3 m × 310 EUR per m + 85 EUR" and calculation.result == "1015.00"
    # Every quoted input is among the quotes shown, and says so with its caption.
    shown = {(q.fragment_id, q.text) for q in quotes_of(answer)}
    quoted = [i for i in calculation.inputs if i.quote is not None]
    assert {(i.quote.fragment_id, i.quote.text) for i in quoted} <= shown
    assert "Zone B, 15 to 50 km: 85 EUR." in [i.quote.text for i in quoted]
    assert any("30 km" in a.text and a.reason for a in calculation.assumptions)


def test_percentages_of_a_quoted_amount_and_a_quoted_percentage_of_an_amount(extractive):
    discount = only_calculation(extractive.answer("how much is the oak bench with a 10% discount", PUBLIC))
    assert (discount.shown, discount.result) == ("690 EUR × (1 − 10%)", "621.00")
    advance = only_calculation(
        extractive.answer("My kitchen order comes to 8,000 EUR. How much is the advance?", PUBLIC)
    )
    assert (advance.shown, advance.result) == ("8,000 EUR × 40%", "3200.00")


@pytest.mark.parametrize(
    "question",
    [
        "how much is 3 m of worktop",  # oak, beech or walnut: not sure which price
        "What is the total for a walnut worktop and the oak bench?",  # no length for a price per metre
        "how much are 6 hours of installation",  # per hour *per fitter*: a second condition
        "how much is a staircase with delivery 40 km away?",  # "from 6,400 EUR" is not a price
        "how much is the oak worktop per metre",  # one price: nothing to compute
    ],
)
def test_when_unsure_which_figures_go_together_it_quotes_and_does_not_compute(extractive, question):
    answer = extractive.answer(question, PUBLIC)
    assert not answer.calculations


def test_a_price_asked_for_something_the_documents_do_not_price_is_refused(extractive):
    answer = extractive.answer("How much do 4 m of laminate worktop cost?", PUBLIC)
    assert answer.kind == "refused" and not answer.calculations


def test_a_computed_answer_quotes_only_what_its_figures_come_from(extractive):
    answer = extractive.answer("How much are 3 m of oak worktop with delivery 30 km away?", PUBLIC)
    assert [c.result for c in answer.calculations] == ["1015.00"]
    quoted = [q.text for s in answer.statements for q in s.quotes]
    assert quoted == ["Solid oak worktop, 38 mm: 310 EUR per running metre.", "Zone B, 15 to 50 km: 85 EUR."]
