"""Calling a model server (core/common/http.py): Retry-After, three attempts, a timeout, no key in the logs."""

import logging

from core.answering.llm import LLMAnswerer
from tests.core.conftest import PUBLIC
from tests.fakes import Reply, quoting


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
    # The server holds every reply until the test ends, so a short timeout expires on each attempt however
    # loaded the machine is; the shared fixture's timeout is long, for servers that do answer.
    llm.answerer = LLMAnswerer(
        fake_server.url + "/v1", "test-model", api_key="sk-test-secret", timeout=0.5, base_delay=0.01
    )
    fake_server.handler = lambda request: Reply(200, {}, hang=True)
    answer = llm.answer("How much is a walnut worktop?", PUBLIC)
    assert answer.reason == "error" and len(fake_server.requests) == 3
