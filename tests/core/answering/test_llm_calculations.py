"""Calculations the LLM answerer proposes: computed and checked by code, never taken from the model."""

import logging

from core.answering.llm import parse_draft
from core.answering.policy import LIMITS
from tests.core.conftest import PUBLIC
from tests.fakes import chat_reply, prompt_fragments

WORKTOP = "Solid oak worktop, 38 mm: 310 EUR per running metre."
ZONE_B = "Zone B, 15 to 50 km: 85 EUR."


def replying(total_figure: str, fee_figure: str = "85 EUR", statement: str = "The total is 1,015.00 EUR."):
    def handler(request):
        fragments = prompt_fragments(request)
        worktop = next(n for n, t in fragments.items() if WORKTOP in t)
        zone = next(n for n, t in fragments.items() if ZONE_B in t)
        return chat_reply(
            {
                "found": True,
                "statements": [
                    {"text": "Oak worktop is 310 EUR per running metre.", "fragment": worktop, "quote": WORKTOP},
                    {"text": statement, "fragment": zone, "quote": ZONE_B},
                ],
                "calculations": [
                    {
                        "name": "total",
                        "expression": "length * price + fee",
                        "inputs": {
                            "length": {"question": "3 m"},
                            "price": {"fragment": worktop, "figure": total_figure},
                            "fee": {"fragment": zone, "figure": fee_figure},
                        },
                        "assumptions": [{"text": "30 km is zone B", "reason": "zone B is 15 to 50 km"}],
                    }
                ],
            }
        )

    return handler


QUESTION = "How much are 3 m of oak worktop with delivery 30 km away?"


def test_a_proposed_calculation_is_computed_by_code_and_a_statement_may_cite_its_result(llm, fake_server):
    fake_server.handler = replying("310 EUR per running metre")
    answer = llm.answer(QUESTION, PUBLIC)
    assert answer.answered and answer.discarded == 0
    assert [(c.result, c.unit, c.shown) for c in answer.calculations] == [
        ("1015.00", "EUR", "3 m × 310 EUR per m + 85 EUR")
    ]
    assert "The total is 1,015.00 EUR." in [s.text for s in answer.statements]
    assert answer.to_json()["calculations"][0]["assumptions"] == [
        {"text": "30 km is zone B", "reason": "zone B is 15 to 50 km"}
    ]
    assert "Never do arithmetic yourself" in fake_server.requests[0].body["messages"][0]["content"]


def test_a_wrong_input_pointer_refuses_the_calculation_and_what_cites_it(llm, fake_server, caplog):
    fake_server.handler = replying("301 EUR per running metre")  # not the figure in the quote
    with caplog.at_level(logging.INFO, logger="core.answering.calculations"):
        answer = llm.answer(QUESTION, PUBLIC)
    assert answer.answered and not answer.calculations and answer.calculations_dropped == 1
    # The statement citing the refused result is unverified: its figure is in no quote and no calculation.
    assert "The total is 1,015.00 EUR." not in [s.text for s in answer.statements] and answer.discarded == 1
    assert "does not hold it" in caplog.text


def test_a_model_doing_money_times_money_is_refused(llm, fake_server):
    def money_times_money(request):
        reply = replying("310 EUR per running metre", statement="Zone B costs 85 EUR.")(request)
        reply.body["choices"][0]["message"]["content"] = reply.body["choices"][0]["message"]["content"].replace(
            "length * price + fee", "price * fee"
        )
        return reply

    fake_server.handler = money_times_money
    answer = llm.answer(QUESTION, PUBLIC)
    assert answer.answered and not answer.calculations and answer.calculations_dropped == 1


def test_calculations_are_capped_and_a_malformed_one_is_dropped_not_fatal():
    one = {"name": "x", "expression": "a", "inputs": {"a": {"question": "3 m"}}}
    draft = parse_draft(
        '{"found": true, "statements": [{"text": "t", "fragment": 1, "quote": "q"}], "calculations": '
        + str([one] * (LIMITS.max_calculations + 3) + [{"expression": 5}]).replace("'", '"')
        + "}"
    )
    assert len(draft.calculations) == LIMITS.max_calculations
    draft = parse_draft('{"found": true, "statements": [], "calculations": [{"inputs": 1}]}')
    assert draft.calculations == ()


def test_a_quantity_only_the_models_rewrite_states_is_not_from_the_question(llm, fake_server):
    """The user never said "3 m": the rewrite of the follow-up did, and that is the model's word, not theirs."""
    answering = replying("310 EUR per running metre")

    def handler(request):
        if "standalone question" in request.body["messages"][0]["content"]:
            return chat_reply({"question": QUESTION})
        return answering(request)

    fake_server.handler = handler
    from core.common.answers import Turn

    history = [Turn("How much is an oak worktop?", "Solid oak worktop, 38 mm: 310 EUR per running metre.")]
    answer = llm.answer("and with delivery 30 km away, for my kitchen?", PUBLIC, history)
    assert answer.standalone_question == QUESTION
    assert answer.calculations == () and answer.calculations_dropped == 1
    assert "1,015.00" not in " ".join(s.text for s in answer.statements)
