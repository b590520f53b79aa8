"""A fake Slack Web API on 127.0.0.1 and helpers to deliver signed events to a real Bolt app."""

from __future__ import annotations

import itertools
import json
import queue
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import urlencode

import pytest
from slack_bolt import App
from slack_bolt.request import BoltRequest
from slack_sdk.signature import SignatureVerifier

from bot.slack import build_app
from bot.slack.config import SlackSettings
from bot.slack.drain import CountingExecutor
from core.answering.pipeline import Pipeline
from tests.fakes import FakeServer, Recorded, Reply

SECRET = "test-signing-secret"
BOT_TOKEN = "xoxb-test-token"
_ts = itertools.count(1)


def slack_api(request: Recorded) -> Reply:
    method = request.path.rsplit("/", 1)[-1]
    if method == "auth.test":
        return Reply(
            200,
            {
                "ok": True,
                "user_id": "UBOT",
                "bot_id": "BBOT",
                "team_id": "T1",
                "team": "Test",
                "url": "https://test.slack.com/",
                "user": "verbatim",
            },
        )
    if method in ("chat.postMessage", "chat.postEphemeral", "chat.update"):
        return Reply(200, {"ok": True, "channel": "C1", "ts": f"1800000000.{next(_ts):06d}", "message_ts": "1"})
    return Reply(200, {"ok": True})


# How long a wait for something that must happen may take before the test fails. Reached only on
# failure, so it is generous: a loaded machine makes the wait longer, never the test wrong.
WAIT = 60.0


def until(condition: Callable[[], object], what: str, timeout: float = WAIT) -> None:
    """Return once `condition()` holds (polled, not slept on); fail naming `what` after `timeout`."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting until {what}")
        time.sleep(0.01)


class FakeSlack:
    def __init__(self, server: FakeServer) -> None:
        self.server = server

    def calls(self, method: str) -> list[Recorded]:
        return [r for r in self.server.requests if r.path.endswith("/" + method)]

    def wait_for(self, method: str, count: int = 1, timeout: float = WAIT) -> list[Recorded]:
        """The calls of `method` once there are at least `count` of them (polled, not slept on)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = self.calls(method)
            if len(found) >= count:
                return found
            time.sleep(0.02)
        raise AssertionError(f"expected {count} {method} calls, saw {len(self.calls(method))}")


def drain(app: App) -> None:
    """Return once every listener the app has started, acks and lazy answers alike, has finished.

    The app runs them on its two executors (acks, answers), and shutting those down waits for each of
    them: what the app was going to post has been posted. This proves that nothing more is coming
    without guessing how long that takes. The app takes no further events, so call it at the end of a test.
    """
    app.listener_runner.listener_executor.shutdown(wait=True)
    answers(app).shutdown(wait=True)


def answers(app: App) -> CountingExecutor:
    """The executor the app's answers (its lazy listeners) run on."""
    executor = app.listener_runner.lazy_listener_runner.executor  # type: ignore[attr-defined]
    assert isinstance(executor, CountingExecutor)
    return executor


@pytest.fixture
def fake_slack() -> Iterator[FakeSlack]:
    with FakeServer(slack_api) as server:
        yield FakeSlack(server)


@pytest.fixture
def make_app(fake_slack, pipeline) -> Callable[..., Any]:
    def make(public_channels: frozenset[str] = frozenset(), the_pipeline: Pipeline | None = None, **wiring: Any):
        settings = SlackSettings(
            bot_token=BOT_TOKEN,
            mode="http",
            signing_secret=SECRET,
            api_url=fake_slack.server.url + "/api/",
            public_channels=public_channels,
        )
        return build_app(settings, the_pipeline or pipeline, **wiring)

    return make


def signed_headers(body: str, content_type: str = "application/json", secret: str = SECRET) -> dict[str, str]:
    timestamp = str(int(time.time()))
    signature = SignatureVerifier(secret).generate_signature(timestamp=timestamp, body=body)
    return {
        "content-type": content_type,
        "x-slack-request-timestamp": timestamp,
        "x-slack-signature": signature,
    }


_event_ids = itertools.count(1)


def event_body(event: dict[str, Any], event_id: str | None = None) -> str:
    return json.dumps(
        {
            "token": "legacy",
            "team_id": "T1",
            "api_app_id": "A1",
            "type": "event_callback",
            "event_id": event_id or f"Ev{next(_event_ids):06d}",
            "event_time": 1700000000,
            "event": event,
            "authorizations": [{"team_id": "T1", "user_id": "UBOT", "is_bot": True}],
        }
    )


def mention(text: str, channel: str = "C1", ts: str = "1700000000.000100", **extra: Any) -> dict[str, Any]:
    return {
        "type": "app_mention",
        "user": "U1",
        "text": f"<@UBOT> {text}",
        "ts": ts,
        "channel": channel,
        "event_ts": ts,
        **extra,
    }


def dispatch(app, body: str, content_type: str = "application/json", **headers: str):
    return app.dispatch(BoltRequest(body=body, headers={**signed_headers(body, content_type), **headers}))


def form(**fields: str) -> str:
    return urlencode(fields)


def socket_mode_server(envelope: dict[str, Any]) -> tuple[Any, str, queue.Queue[dict[str, Any]]]:
    """A fake Slack Socket Mode endpoint on 127.0.0.1 that says hello and sends `envelope`: the server (to shut
    down), its URL, and the queue where every message the bot sends back (its acknowledgements) lands."""
    from websockets.sync.server import serve

    acks: queue.Queue[dict[str, Any]] = queue.Queue()

    def session(websocket: Any) -> None:
        websocket.send(json.dumps({"type": "hello", "num_connections": 1, "connection_info": {"app_id": "A1"}}))
        websocket.send(json.dumps(envelope))
        for message in websocket:
            acks.put(json.loads(message))

    server = serve(session, "127.0.0.1", 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"ws://127.0.0.1:{server.socket.getsockname()[1]}/link", acks
