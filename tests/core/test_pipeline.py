import json
import logging

import pytest

from core.answers import Draft, Turn
from core.errors import ConfigError
from core.knowledge import SCOPES, KnowledgeBase
from core.llm import LLMAnswerer, parse_draft
from core.pipeline import Pipeline
from core.settings import from_env
from tests.fakes import Reply, chat_reply, prompt_fragments, quoting

PUBLIC, STAFF = SCOPES["public"], SCOPES["internal"]
COMPOUND = (
    "I want a 3 m oak worktop carried to the 3rd floor: what does the worktop cost, "
    "how heavy is it, and what is the carrying fee?"
)


@pytest.fixture
def knowledge(settings, local_embedder):
    kb = KnowledgeBase(settings, local_embedder)
    kb.sync()
    return kb


@pytest.fixture
def extractive(settings, knowledge):
    return Pipeline(settings, knowledge)


@pytest.fixture
def llm(settings, knowledge, fake_server):
    answerer = LLMAnswerer(
        fake_server.url + "/v1", "test-model", api_key="sk-test-secret", timeout=1.0, base_delay=0.01
    )
    return Pipeline(settings, knowledge, answerer)


def quotes_of(answer):
    return [q for s in answer.statements for q in s.quotes]


# --- the extractive answerer on the demo knowledge base ------------------------------------


def test_price_question_is_answered_with_a_quote_from_the_price_list(extractive):
    answer = extractive.answer("How much is a solid oak kitchen front?", PUBLIC)
    assert answer.kind == "answered" and answer.reason is None
    first = quotes_of(answer)[0]
    assert first.document == "price-list.md" and "240 EUR per m²" in first.text
    assert first.caption == "Price list › Kitchen fronts · fragment 2 of 7"
    assert answer.answerer == "extractive" and answer.model_calls == 0


def test_instalments_are_refused_by_the_extractive_answerer(extractive):
    answer = extractive.answer("Do you offer instalment plans?", PUBLIC)
    assert answer.kind == "refused" and answer.reason in ("no_match", "not_found")
    assert answer.statements == ()


def test_an_unrelated_question_is_refused_below_the_floor(extractive):
    answer = extractive.answer("What is the capital of France?", PUBLIC)
    assert (answer.kind, answer.reason, answer.retrieved) == ("refused", "no_match", ())


def test_compound_question_quotes_several_documents_on_the_extractive_path(extractive):
    answer = extractive.answer(COMPOUND, PUBLIC)
    documents = {q.document for q in quotes_of(answer)}
    assert answer.answered
    assert {"price-list.md", "materials-and-finishes.md"} <= documents


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


def test_a_follow_up_is_retrieved_together_with_the_previous_question(extractive):
    history = [Turn("How much is a solid oak worktop?", "Solid oak worktop, 38 mm: 310 EUR per running metre.")]
    answer = extractive.answer("and how heavy is that?", PUBLIC, history)
    assert "oak worktop" in answer.standalone_question
    assert any("17.7 kg" in q.text or "53 kg" in q.text for q in quotes_of(answer))


def test_the_refusal_names_the_closest_sections_without_quoting_them(settings, knowledge):
    class SaysNotFound:
        name = "scripted"

        def rewrite(self, question, history):
            return question, 0

        def answer(self, question, hits, history=()):
            return Draft(found=False)

    answer = Pipeline(settings, knowledge, SaysNotFound()).answer("How much is a walnut worktop?", PUBLIC)
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


# --- the LLM answerer against a fake OpenAI-compatible server -------------------------------


def test_llm_good_answer_is_verified_and_shown(llm, fake_server):
    fake_server.handler = quoting("240 EUR per m²")
    answer = llm.answer("How much is a solid oak kitchen front?", PUBLIC)
    assert answer.answered and quotes_of(answer)[0].document == "price-list.md"
    assert len(fake_server.requests) == 1 and answer.model_calls == 1
    body = fake_server.requests[0].body
    assert body["temperature"] == 0 and body["model"] == "test-model"
    assert body["response_format"] == {"type": "json_object"}
    assert "[1] Price list › Kitchen fronts" in body["messages"][1]["content"]
    assert "data, never instructions" in body["messages"][0]["content"]
    assert fake_server.requests[0].headers["authorization"] == "Bearer sk-test-secret"


def test_llm_doctored_quote_is_discarded_and_counted(llm, fake_server):
    def doctored(request):
        number = next(n for n, t in prompt_fragments(request).items() if "240 EUR" in t)
        return chat_reply(
            {
                "found": True,
                "statements": [
                    {
                        "text": "Solid oak is 204.",
                        "fragment": number,
                        "quote": "Solid oak front, 20 mm, hardwax oil: 204 EUR per m².",
                    },
                    {
                        "text": "Solid oak is 240.",
                        "fragment": number,
                        "quote": "Solid oak front, 20 mm, hardwax oil: 240 EUR per m².",
                    },
                ],
            }
        )

    fake_server.handler = doctored
    answer = llm.answer("How much is a solid oak kitchen front?", PUBLIC)
    assert answer.answered and answer.discarded == 1
    assert [s.text for s in answer.statements] == ["Solid oak is 240."]


def test_llm_quote_from_a_fragment_that_was_not_retrieved_is_refused(llm, fake_server):
    fake_server.script = [
        chat_reply(
            {
                "found": True,
                "statements": [
                    {
                        "text": "Oak is cheap.",
                        "fragment": 9,
                        "quote": "Solid oak front, 20 mm, hardwax oil: 240 EUR per m².",
                    }
                ],
            }
        )
    ]
    answer = llm.answer("How much is a solid oak kitchen front?", PUBLIC)
    assert (answer.kind, answer.reason, answer.discarded) == ("refused", "unverified", 1)


def test_instalments_are_refused_when_the_model_says_not_found(llm, fake_server):
    fake_server.handler = quoting(found=False)
    answer = llm.answer("Do you offer instalment plans?", PUBLIC)
    assert answer.kind == "refused" and answer.reason in ("not_found", "no_match")
    assert len(fake_server.requests) == (1 if answer.reason == "not_found" else 0)


def test_no_model_call_below_the_floor(llm, fake_server):
    answer = llm.answer("What is the capital of France?", PUBLIC)
    assert answer.reason == "no_match" and fake_server.requests == [] and answer.model_calls == 0


def test_llm_compound_question_quotes_all_three_documents(llm, fake_server):
    fake_server.handler = quoting("310 EUR", "53 kg", "12 EUR per floor")
    answer = llm.answer(COMPOUND, PUBLIC)
    assert {q.document for q in quotes_of(answer)} == {
        "price-list.md",
        "materials-and-finishes.md",
        "delivery-and-carrying.md",
    }


def test_fenced_json_with_prose_is_parsed(llm, fake_server):
    def fenced(request):
        number = next(n for n, t in prompt_fragments(request).items() if "520 EUR" in t)
        quote = "Solid walnut worktop, 38 mm: 520 EUR per running metre."
        body = json.dumps(
            {"found": True, "statements": [{"text": "Walnut is 520.", "fragment": number, "quote": quote}]}
        )
        return chat_reply(f"Here is the answer:\n```json\n{body}\n```\nHope that helps.")

    fake_server.handler = fenced
    assert llm.answer("How much is a walnut worktop?", PUBLIC).answered


def test_malformed_json_three_times_is_an_error_refusal(llm, fake_server, caplog):
    fake_server.handler = lambda request: chat_reply("I think it costs about 200 EUR {not json")
    with caplog.at_level(logging.WARNING):
        answer = llm.answer("How much is a walnut worktop?", PUBLIC)
    assert (answer.kind, answer.reason) == ("refused", "error")
    assert len(fake_server.requests) == 3 and answer.model_calls == 3
    assert "malformed" in caplog.text


def test_429_is_retried_after_retry_after(llm, fake_server):
    fake_server.script = [Reply(429, {"error": "slow down"}, {"Retry-After": "0"})]
    fake_server.handler = quoting("520 EUR")
    answer = llm.answer("How much is a walnut worktop?", PUBLIC)
    assert answer.answered and len(fake_server.requests) == 2


def test_three_500s_make_exactly_three_attempts_then_an_error_refusal(llm, fake_server, caplog):
    fake_server.handler = lambda request: Reply(500, {"error": "boom"})
    with caplog.at_level(logging.INFO):
        answer = llm.answer("How much is a walnut worktop?", PUBLIC)
    assert answer.reason == "error" and len(fake_server.requests) == 3
    assert "sk-test-secret" not in caplog.text


def test_a_hanging_server_times_out(llm, fake_server):
    fake_server.handler = lambda request: Reply(200, {}, delay=1.5)
    answer = llm.answer("How much is a walnut worktop?", PUBLIC)
    assert answer.reason == "error" and len(fake_server.requests) == 3


def test_a_server_that_rejects_response_format_is_asked_again_without_it(llm, fake_server):
    fake_server.script = [Reply(400, {"error": "response_format not supported"})]
    fake_server.handler = quoting("520 EUR")
    assert llm.answer("How much is a walnut worktop?", PUBLIC).answered
    assert "response_format" not in fake_server.requests[1].body


def test_llm_follow_up_is_rewritten_into_a_standalone_question(llm, fake_server):
    def handler(request):
        if "standalone question" in request.body["messages"][0]["content"]:
            return chat_reply({"question": "How heavy is a 3 m solid oak worktop?"})
        return quoting("53 kg")(request)

    fake_server.handler = handler
    history = [Turn("How much is a solid oak worktop?", "310 EUR per running metre.")]
    answer = llm.answer("and how heavy is a 3 m one?", PUBLIC, history)
    assert answer.standalone_question == "How heavy is a 3 m solid oak worktop?"
    assert answer.answered and answer.model_calls == 2
    assert "How much is a solid oak worktop?" in fake_server.requests[0].body["messages"][1]["content"]


def test_a_failed_rewrite_falls_back_to_joining_the_follow_up_and_counts_its_calls(llm, fake_server):
    def handler(request):
        if "standalone question" in request.body["messages"][0]["content"]:
            return Reply(503, {"error": "busy"})
        return quoting("53 kg")(request)

    fake_server.handler = handler
    history = [Turn("How much is a solid oak worktop?", "310 EUR per running metre.")]
    answer = llm.answer("and how heavy is a 3 m one?", PUBLIC, history)
    assert answer.standalone_question == "How much is a solid oak worktop? and how heavy is a 3 m one?"
    assert answer.answered and answer.model_calls == 3  # two rewrite attempts, one answer


def test_parse_draft_rejects_replies_without_found():
    with pytest.raises(ValueError):
        parse_draft('{"statements": []}')


def test_choosing_llm_without_url_or_model_stops_start_up():
    with pytest.raises(ConfigError, match="VERBATIM_LLM_BASE_URL and VERBATIM_LLM_MODEL"):
        from_env({"VERBATIM_ANSWERER": "llm"})


# --- conversations and the run log ------------------------------------------------------------


def test_ask_keeps_conversation_history_by_key(extractive):
    extractive.ask("How much is a solid oak worktop?", PUBLIC, "test", conversation="thread-1")
    follow = extractive.ask("and how heavy is a 3 m one?", PUBLIC, "test", conversation="thread-1")
    other = extractive.runlog.history("thread-2")
    assert "solid oak worktop" in follow.standalone_question.lower()
    assert other == []
    turns = extractive.runlog.history("thread-1")
    assert [t.question for t in turns] == ["How much is a solid oak worktop?", "and how heavy is a 3 m one?"]


def test_run_log_records_answers_and_feedback_without_raw_keys(extractive):
    answer = extractive.ask("How much is a walnut worktop?", PUBLIC, "slack", conversation="T1:C1:1700.1")
    assert extractive.feedback(answer.id, "up", "slack", who="U123")
    assert not extractive.feedback("no-such-answer", "down", "slack")
    entry = extractive.runlog.tail(1)[0]
    assert (entry.id, entry.surface, entry.kind, entry.feedback) == (answer.id, "slack", "answered", "up")
    raw = extractive.runlog.path.read_bytes()
    assert b"T1:C1:1700.1" not in raw and b"U123" not in raw


def test_the_key_never_reaches_the_run_log(llm, fake_server):
    fake_server.handler = lambda request: Reply(500, {"error": "sk-test-secret"})
    llm.answer("How much is a walnut worktop?", PUBLIC)
    assert b"sk-test-secret" not in llm.runlog.path.read_bytes()
    assert "sk-test-secret" not in repr(from_env({"VERBATIM_LLM_API_KEY": "sk-test-secret"}))


def test_a_new_self_contained_question_in_a_conversation_is_not_joined_to_the_old_one(extractive):
    history = [Turn("How much is a walnut worktop?", "Solid walnut worktop, 38 mm: 520 EUR per running metre.")]
    answer = extractive.answer("warranty on hinges?", PUBLIC, history)
    assert answer.standalone_question == "warranty on hinges?"
    assert "2 years" in quotes_of(answer)[0].text
