"""The run log (core/store/runlog.py, reached through the pipeline): history, answers, feedback."""

from core.common.settings import from_env
from tests.core.conftest import PUBLIC
from tests.fakes import Reply


def test_ask_keeps_conversation_history_by_key(extractive):
    extractive.ask("How much is a solid oak worktop?", PUBLIC, "test", conversation="thread-1")
    follow = extractive.ask("and how heavy is a 3 m one?", PUBLIC, "test", conversation="thread-1")
    other = extractive.history("thread-2")
    assert "solid oak worktop" in follow.standalone_question.lower()
    assert other == []
    turns = extractive.history("thread-1")
    assert [t.question for t in turns] == ["How much is a solid oak worktop?", "and how heavy is a 3 m one?"]


def test_run_log_records_answers_and_feedback_without_raw_keys(extractive):
    answer = extractive.ask("How much is a walnut worktop?", PUBLIC, "slack", conversation="T1:C1:1700.1")
    assert extractive.feedback(answer.id, "up", "slack", who="U123")
    assert not extractive.feedback("no-such-answer", "down", "slack")
    entry = extractive.runlog.tail(1)[0]
    assert (entry.id, entry.surface, entry.kind, entry.up, entry.down) == (answer.id, "slack", "answered", 1, 0)
    raw = extractive.runlog.path.read_bytes()
    assert b"T1:C1:1700.1" not in raw and b"U123" not in raw


def test_the_key_never_reaches_the_run_log(llm, fake_server):
    fake_server.handler = lambda request: Reply(500, {"error": "sk-test-secret"})
    llm.answer("How much is a walnut worktop?", PUBLIC)
    assert b"sk-test-secret" not in llm.runlog.path.read_bytes()
    assert "sk-test-secret" not in repr(from_env({"VERBATIM_LLM_API_KEY": "sk-test-secret"}))


def test_an_answer_shown_again_from_the_log_keeps_its_calculation(extractive):
    answer = extractive.ask("How much are 3 m of oak worktop?", PUBLIC, "slack", conversation="T1:C1:1")
    assert answer.calculations, "the extractive answerer computes quantity × unit price"
    again = extractive.logged_answer(answer.id)
    assert again is not None and again.calculations == answer.calculations, "inputs keep their quotes and captions"
