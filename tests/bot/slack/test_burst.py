"""A burst of Slack requests: each acknowledged without waiting for any answer, each event answered once.

How fast is the benchmark's business (benchmarks/slack_load.py prints it); these tests pin the order
of things, which holds on any machine: an answer held at a gate never holds up an acknowledgement,
answers wait while a request is being acknowledged, and a redelivery to the process that took its
event is skipped without queueing on the store.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest

from bot.slack import ANSWER_WORKERS, start_http_server
from bot.slack.listeners.common import Accepted
from bot.slack.lull import Lull
from tests.bot.slack.conftest import WAIT, dispatch, drain, event_body, form, mention, signed_headers, until

QUESTION = "how much is a walnut worktop?"


class HeldAnswers:
    """pipeline.ask behind a gate: `asked` lists the questions that reached it, `release` lets them through."""

    def __init__(self, ask: Callable[..., Any]) -> None:
        self.ask = ask
        self.asked: list[str] = []
        self.release = threading.Event()

    def __call__(self, question: str, *args: Any, **kwargs: Any) -> Any:
        self.asked.append(question)
        self.release.wait(WAIT)
        return self.ask(question, *args, **kwargs)


@pytest.fixture
def held(pipeline, monkeypatch) -> Iterator[HeldAnswers]:
    gate = HeldAnswers(pipeline.ask)
    monkeypatch.setattr(pipeline, "ask", gate)
    yield gate
    gate.release.set()


def ask_command(text: str) -> str:
    fields = {"command": "/ask", "text": text, "channel_id": "C1", "user_id": "U1", "team_id": "T1"}
    return form(**fields, response_url="http://127.0.0.1:9/unused", trigger_id="t-burst")


def test_a_command_is_acknowledged_while_every_answer_worker_holds_an_answer(make_app, fake_slack, held):
    app = make_app()
    for i in range(ANSWER_WORKERS):
        event = event_body(mention(QUESTION, ts=f"1700000500.{i:06d}"))
        assert dispatch(app, event).status == 200
    until(lambda: len(held.asked) == ANSWER_WORKERS, "every answer worker holds a question")
    # Bolt runs a command's ack function on an executor and waits for it: not the one the answers fill.
    assert dispatch(app, ask_command("warranty on hinges?"), "application/x-www-form-urlencoded").status == 200
    held.release.set()
    fake_slack.wait_for("chat.postMessage", ANSWER_WORKERS)
    fake_slack.wait_for("chat.postEphemeral")
    drain(app)


def test_an_answer_waits_while_another_request_is_being_acknowledged(make_app, fake_slack, pipeline, monkeypatch):
    lull = Lull(quiet=0.0, longest=WAIT)  # held for the acknowledgement alone, however slow the machine
    app = make_app(lull=lull)
    asked: list[str] = []
    ask = pipeline.ask

    def asking(question: str, *args: Any, **kwargs: Any) -> Any:
        asked.append(question)
        return ask(question, *args, **kwargs)

    monkeypatch.setattr(pipeline, "ask", asking)
    state, linked = pipeline.store.state, pipeline.store.state.linked
    in_ack, release = threading.Event(), threading.Event()

    def slow_for_one(key: str, wait: float | None = None) -> str | None:
        if key.endswith("EvSLOW"):  # this event's acknowledgement waits on the store
            in_ack.set()
            release.wait(WAIT)
        return linked(key, wait)

    monkeypatch.setattr(state, "linked", slow_for_one)
    statuses: list[int] = []
    slow = event_body(mention("warranty on hinges?", ts="1700000600.000100"), event_id="EvSLOW")
    acknowledging = threading.Thread(target=lambda: statuses.append(dispatch(app, slow).status))
    acknowledging.start()
    try:
        assert in_ack.wait(WAIT)
        fast = event_body(mention(QUESTION, ts="1700000600.000200"), event_id="EvFAST")
        assert dispatch(app, fast).status == 200
        until(lambda: lull.held == 1, "the acknowledged event's answer waits")
        assert asked == [], "no answer starts while a request is being acknowledged"
    finally:
        release.set()
        acknowledging.join(WAIT)
    assert statuses == [200]
    fake_slack.wait_for("chat.postMessage", 2)
    drain(app)
    assert sorted(asked) == sorted([QUESTION, "warranty on hinges?"])


def test_twenty_deliveries_of_one_event_at_once_are_answered_once_from_one_lease(
    make_app, fake_slack, pipeline, held, monkeypatch
):
    state, first_time = pipeline.store.state, pipeline.store.state.first_time
    leases: list[str] = []

    def leasing(key: str, ttl: float = 3600.0) -> bool:
        leases.append(key)
        return first_time(key, ttl)

    monkeypatch.setattr(state, "first_time", leasing)
    linked, read = state.linked, []

    def reading(key: str, *args: object, **kwargs: object) -> object:
        read.append(key)
        return linked(key, *args, **kwargs)

    monkeypatch.setattr(state, "linked", reading)
    app = make_app()
    port, stop = start_http_server(app, 0, "127.0.0.1")
    body = event_body(mention(QUESTION, ts="1700000700.000100"), event_id="EvBURST")

    def deliver(n: int) -> int:
        retry = {"X-Slack-Retry-Num": str(n % 4), "X-Slack-Retry-Reason": "http_timeout"} if n % 4 else {}
        url = f"http://127.0.0.1:{port}/slack/events"
        return client.post(url, content=body, headers=signed_headers(body) | retry).status_code

    try:
        with httpx.Client(timeout=WAIT) as client, ThreadPoolExecutor(20) as pool:
            statuses = list(pool.map(deliver, range(20)))
        assert statuses == [200] * 20, "all acknowledged while the one answer is still held"
        until(lambda: held.asked == [QUESTION], "the answer reaches the pipeline")
        held.release.set()
        fake_slack.wait_for("chat.postMessage")
    finally:
        held.release.set()
        stop.set()
    drain(app)  # a second answer, had any delivery started one, has been posted by now
    assert len(fake_slack.calls("chat.postMessage")) == 1 and held.asked == [QUESTION]
    assert leases == ["slack-event:EvBURST"], "the redeliveries were skipped without asking the store"
    assert [k for k in read if "EvBURST" in k] == ["slack-answered:EvBURST"], "one store read: the first delivery's"


def test_an_answer_starts_after_a_quiet_spell_and_never_later_than_longest():
    now = [100.0]
    lull = Lull(quiet=0.02, longest=2.0, clock=lambda: now[0])
    assert lull.holds(asked=100.0, now=100.0) == 0, "nothing acknowledged yet: start at once"
    with lull.acknowledging():
        assert lull.holds(asked=100.0, now=100.5) == pytest.approx(1.5), "until woken, at most `longest`"
        assert lull.holds(asked=100.0, now=102.0) == 0, "`longest` is up"
        now[0] = 101.0
    assert lull.holds(asked=100.5, now=101.01) == pytest.approx(0.01), "the quiet spell after the last one"
    assert lull.holds(asked=100.5, now=101.02) == 0


def test_a_redelivery_is_known_until_past_slacks_last_one_unless_given_back():
    now = [0.0]
    accepted = Accepted(keep=600.0, clock=lambda: now[0])
    assert accepted.accept("Ev1") and accepted.accept("Ev2")
    now[0] = 330.0  # Slack's third delivery comes about 5 minutes after the first
    assert not accepted.accept("Ev1"), "a redelivery"
    accepted.drop("Ev2")  # given back: the store was down, or another process has it
    assert accepted.accept("Ev2"), "its next delivery asks the store again"
    now[0] = 600.0  # after that, the store's mark decides, as it does for another process
    assert accepted.accept("Ev1")
