"""SIGTERM in both Slack modes: no new events, the answers under way finished or apologised for, exit 0.

Each test runs `python -m bot.cli serve slack` as a real subprocess, its Slack Web API and its model
server one fake on 127.0.0.1. The model holds its reply until the test releases it, so the signal
always lands mid-answer, whatever the machine's load.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from bot import presenter
from bot.slack import SlackSettings, build_app
from bot.slack.drain import InFlight
from tests.bot.slack.conftest import (
    BOT_TOKEN,
    SECRET,
    WAIT,
    FakeSlack,
    dispatch,
    drain,
    event_body,
    mention,
    signed_headers,
    slack_api,
    socket_mode_server,
)
from tests.conftest import REPO
from tests.fakes import FakeServer, Recorded, Reply, quoting

pytest.importorskip("websockets.sync.server")

PRICES = "---\ntitle: Prices\n---\n## Fronts\n\nOak fronts cost 185 EUR per m².\n"
THREAD = "1700000300.000100"


class Model:
    """The fake model's answers wait for `release`; `asked` is set when a question reaches it."""

    def __init__(self) -> None:
        self.asked = threading.Event()
        self.release = threading.Event()
        self.answer = quoting("185 EUR")

    def __call__(self, request: Recorded) -> Reply:
        if request.path.startswith("/api/"):
            return slack_api(request)
        self.asked.set()
        if not self.release.wait(WAIT):
            return Reply(hang=True)  # never released: the shutdown gave up on this answer
        return self.answer(request)


@pytest.fixture
def model() -> Iterator[tuple[Model, FakeSlack]]:
    handler = Model()
    with FakeServer(handler) as server:
        yield handler, FakeSlack(server)
        handler.release.set()


def unused_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_bot(tmp_path: Path, slack: FakeSlack, grace: float, **env: str) -> subprocess.Popen[str]:
    (tmp_path / "kb").mkdir(exist_ok=True)
    (tmp_path / "kb" / "prices.md").write_text(PRICES, encoding="utf-8")
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("VERBATIM_", "SLACK_", "TELEGRAM_"))}
    settings = {
        "PYTHONPATH": str(REPO),
        "VERBATIM_KNOWLEDGE_DIR": str(tmp_path / "kb"),
        "VERBATIM_DATA_DIR": str(tmp_path / "data"),
        "VERBATIM_ANSWERER": "llm",
        "VERBATIM_LLM_BASE_URL": slack.server.url + "/v1",
        "VERBATIM_LLM_MODEL": "test-model",
        "VERBATIM_LLM_TIMEOUT": "600",
        "VERBATIM_LLM_DEADLINE": "600",
        "VERBATIM_SHUTDOWN_GRACE": str(grace),
        "SLACK_BOT_TOKEN": BOT_TOKEN,
        "SLACK_API_URL": slack.server.url + "/api/",
        **env,
    }
    with open(tmp_path / "bot.log", "w") as output:  # a file, not a pipe: a pipe nobody reads can fill up
        return subprocess.Popen(
            [sys.executable, "-m", "bot.cli", "serve", "slack"],
            cwd=tmp_path,
            env={**clean, **settings},
            stdout=output,
            stderr=subprocess.STDOUT,
            text=True,
        )


def output(tmp_path: Path) -> str:
    return (tmp_path / "bot.log").read_text()


def wait_until(condition: Callable[[], object], what: str, bot: subprocess.Popen[str], tmp_path: Path) -> None:
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        if condition():
            return
        if bot.poll() is not None:
            raise AssertionError(f"the bot exited ({bot.returncode}) before {what}:\n{output(tmp_path)}")
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}:\n{output(tmp_path)}")


def deliver_over_http(tmp_path: Path, slack: FakeSlack, grace: float) -> subprocess.Popen[str]:
    port = unused_port()
    bot = start_bot(tmp_path, slack, grace, SLACK_MODE="http", SLACK_SIGNING_SECRET=SECRET, SLACK_PORT=str(port))

    def healthy() -> bool:
        try:
            return httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200
        except httpx.TransportError:
            return False

    wait_until(healthy, "the HTTP server listened", bot, tmp_path)
    body = event_body(mention("How much are oak fronts?", ts=THREAD))
    url = f"http://127.0.0.1:{port}/slack/events"
    assert httpx.post(url, content=body, headers=signed_headers(body), timeout=WAIT).status_code == 200
    return bot


def deliver_over_socket_mode(tmp_path: Path, slack: FakeSlack, grace: float) -> subprocess.Popen[str]:
    envelope = {
        "envelope_id": "env-1",
        "type": "events_api",
        "accepts_response_payload": False,
        "retry_attempt": 0,
        "payload": json.loads(event_body(mention("How much are oak fronts?", ts=THREAD))),
    }

    _server, ws_url, acks = socket_mode_server(envelope)  # a daemon thread: it ends with the test run
    answer_slack = slack.server.handler

    def api(request: Recorded) -> Reply:
        if request.path.endswith("apps.connections.open"):
            return Reply(200, {"ok": True, "url": ws_url})
        return answer_slack(request)  # type: ignore[misc]

    slack.server.handler = api
    bot = start_bot(tmp_path, slack, grace, SLACK_MODE="socket", SLACK_APP_TOKEN="xapp-test")
    wait_until(lambda: not acks.empty(), "the event was acknowledged", bot, tmp_path)
    assert acks.get() == {"envelope_id": "env-1"}
    return bot


DELIVERIES = {"http": deliver_over_http, "socket": deliver_over_socket_mode}


def posted_texts(slack: FakeSlack) -> list[str]:
    return [json.dumps(call.body) for call in slack.calls("chat.postMessage")]


@contextmanager
def terminated_mid_answer(
    tmp_path: Path, model: tuple[Model, FakeSlack], mode: str, grace: float
) -> Iterator[subprocess.Popen[str]]:
    """The bot, given a question over `mode` and sent SIGTERM once the question reached the model; killed after."""
    fake_model, slack = model
    bot = DELIVERIES[mode](tmp_path, slack, grace)
    try:
        wait_until(fake_model.asked.is_set, "the question reached the model", bot, tmp_path)
        bot.send_signal(signal.SIGTERM)
        yield bot
    finally:
        bot.kill()


@pytest.mark.parametrize("mode", DELIVERIES)
def test_sigterm_mid_answer_finishes_the_answer_and_exits_0(tmp_path, model, mode):
    fake_model, slack = model
    with terminated_mid_answer(tmp_path, model, mode, 60.0) as bot:
        stopping = "finishing the answers under way"
        wait_until(lambda: stopping in output(tmp_path), "the bot began to stop", bot, tmp_path)
        fake_model.release.set()  # only now can the answer finish: after the signal
        assert bot.wait(WAIT) == 0, output(tmp_path)
    (answer,) = slack.calls("chat.postMessage")
    assert answer.body["thread_ts"] == THREAD and "185 EUR" in json.dumps(answer.body["blocks"])
    assert slack.calls("reactions.remove"), "the ⏳ is taken off"


@pytest.mark.parametrize("mode", DELIVERIES)
def test_an_answer_that_cannot_finish_in_the_grace_period_gets_the_apology(tmp_path, model, mode):
    _, slack = model
    with terminated_mid_answer(tmp_path, model, mode, 0.5) as bot:  # the model never answers
        assert bot.wait(WAIT) == 0, output(tmp_path)
    (told,) = slack.calls("chat.postMessage")
    assert told.body["thread_ts"] == THREAD and told.body["text"] == f"⚠️ {presenter.RESTARTING}"
    assert [r.body["name"] for r in slack.calls("reactions.remove")] == ["hourglass_flowing_sand"]


# --- in one process: what the drain decides --------------------------------------------------------


@pytest.fixture
def stoppable(fake_slack, pipeline):
    in_flight = InFlight()
    settings = SlackSettings(BOT_TOKEN, "http", signing_secret=SECRET, api_url=fake_slack.server.url + "/api/")
    return build_app(settings, pipeline, in_flight), in_flight


def test_an_event_that_arrives_while_stopping_is_left_for_slack_to_deliver_again(stoppable, fake_slack, pipeline):
    app, in_flight = stoppable
    in_flight.closed = True
    assert dispatch(app, event_body(mention("how much is a walnut worktop?"), event_id="EvLATE")).status == 503
    drain(app)
    assert fake_slack.calls("chat.postMessage") == []
    assert pipeline.store.state.first_time("slack-event:EvLATE"), "not taken: the next delivery is answered"


def test_an_answer_that_arrives_after_the_apology_is_not_posted_too(stoppable, fake_slack, pipeline):
    app, in_flight = stoppable
    asking, gate = threading.Event(), threading.Event()
    ask = pipeline.ask

    def gated(*args, **kwargs):
        asking.set()
        gate.wait(WAIT)
        return ask(*args, **kwargs)

    pipeline.ask = gated
    assert dispatch(app, event_body(mention("how much is a walnut worktop?", ts=THREAD))).status == 200
    assert asking.wait(WAIT)
    assert in_flight.close(0.0, "restarting") == 1
    gate.set()  # the answer is ready now, too late
    drain(app)
    assert [c.body["text"] for c in fake_slack.calls("chat.postMessage")] == ["restarting"]
