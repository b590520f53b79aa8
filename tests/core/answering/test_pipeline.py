"""The pipeline (core/answering/pipeline.py): retrieve, the three barriers, the answer it builds."""

from core.answering.pipeline import Pipeline
from core.common.answers import Draft
from core.measuring.fakes import ScriptedAnswerer
from tests.core.conftest import PUBLIC, STAFF, quotes_of


def test_an_unrelated_question_is_refused_below_the_floor(extractive):
    answer = extractive.answer("What is the capital of France?", PUBLIC)
    assert (answer.kind, answer.reason, answer.retrieved) == ("refused", "no_match", ())


def test_every_shown_quote_stands_in_its_fragment(extractive):
    for question in ("how heavy is a 3 m oak worktop", "when is the balance due", "warranty on hinges"):
        answer = extractive.answer(question, PUBLIC)
        texts = {h.fragment_id: h.fragment.text for h in answer.retrieved}
        for quote in quotes_of(answer):
            assert quote.text in texts[quote.fragment_id]


def test_internal_facts_need_the_staff_scope(extractive):
    question = "how much discount can a salesperson give without approval?"
    assert extractive.answer(question, PUBLIC).kind == "refused"
    staff = extractive.answer(question, STAFF)
    assert staff.answered and quotes_of(staff)[0].document == "staff-discounts-and-suppliers.md"


def test_the_refusal_names_the_closest_sections_without_quoting_them(settings, knowledge):
    answer = Pipeline(settings, knowledge, ScriptedAnswerer(Draft(found=False))).answer(
        "How much is a walnut worktop?", PUBLIC
    )
    assert (answer.kind, answer.reason, answer.statements) == ("refused", "not_found", ())
    assert answer.closest[0] == "Price list › Worktops"
    assert len(answer.closest) <= 3 and len(set(answer.closest)) == len(answer.closest)


def test_json_shape_has_the_contract_fields(extractive):
    data = extractive.answer("How much is a walnut worktop?", PUBLIC).to_json()
    assert {"kind", "reason", "statements", "discarded", "timings_ms", "id", "retrieved"} <= data.keys()
    quote = data["statements"][0]["quotes"][0]
    assert {"text", "document", "section", "position", "of"} <= quote.keys()
    assert quote["section"] == "Worktops" and quote["of"] == 7
    assert {"embed", "search", "answer", "verify", "total"} <= data["timings_ms"].keys()


def test_no_model_call_below_the_floor(llm, fake_server):
    answer = llm.answer("What is the capital of France?", PUBLIC)
    assert answer.reason == "no_match" and fake_server.requests == [] and answer.model_calls == 0
