"""Slack hardening: escaped fallback text, HTTP mode that rejects junk in one log line, placeholder tokens, ports."""

import logging
import socket
import time

import httpx
import pytest

from bot.slack import start_http_server
from bot.slack.config import slack_settings
from bot.slack.http import MAX_BODY_BYTES
from core import ConfigError, KnowledgeBase, Pipeline, Settings, VerbatimError
from core.answers import Claim, Draft
from core.fakes import ScriptedAnswerer, WordEmbedder
from tests.bot.slack.conftest import dispatch, event_body, form, mention, signed_headers

HOSTILE = "Big news <!channel>: ask <@U0BADGUY> at <https://evil.example|our shop> about the spring offer today."


@pytest.fixture
def hostile_pipeline(tmp_path, write_kb):
    """A document whose text, and a model whose statement, try to ping everyone and forge a link."""
    folder = write_kb({"offers.md": f"# Offers\n\n{HOSTILE}\n"})
    settings = Settings(knowledge_dir=folder, data_dir=tmp_path / "hostile-data", min_similarity=0.1)
    kb = KnowledgeBase(settings, WordEmbedder())
    kb.sync()
    statement = "Everyone <!here> should ask <https://evil.example|at our shop>"
    return Pipeline(settings, kb, ScriptedAnswerer(Draft(True, (Claim(statement, 1, HOSTILE),))))


# --- item 8: the text fallback is escaped like the blocks ---------------------------------------


def test_the_notification_text_can_never_ping_or_forge_a_link(make_app, fake_slack, hostile_pipeline):
    dispatch(make_app(the_pipeline=hostile_pipeline), event_body(mention("spring offer at the shop?")))
    post = fake_slack.wait_for("chat.postMessage")[0].body
    for raw in ("<!channel>", "<!here>", "<@U0BADGUY>", "<https://evil.example|"):
        assert raw not in post["text"], f"{raw} reached chat.postMessage's text"
        assert raw not in str(post["blocks"])
    assert "&lt;!channel&gt;" in post["text"] and "&lt;!here&gt;" in post["text"]
    assert "&lt;https://evil.example|our shop&gt;" in post["text"]


# --- items 9 and 10: HTTP mode ----------------------------------------------------------------


@pytest.fixture
def events_url(make_app, fake_slack):
    port, stop = start_http_server(make_app(), 0, "127.0.0.1")
    yield f"http://127.0.0.1:{port}/slack/events"
    stop.set()


def rejections(caplog):
    return [r for r in caplog.records if "rejected a Slack request" in r.getMessage()]


def test_an_unsigned_request_is_one_log_line_without_its_body(events_url, caplog):
    marker = "SECRET-CUSTOMER-TEXT-"
    body = '{"type": "event_callback", "padding": "' + marker * 20_000 + '"}'  # ~420 KB
    headers = signed_headers(body, secret="wrong")
    with caplog.at_level(logging.DEBUG):
        response = httpx.post(events_url, content=body, headers=headers)
    assert response.status_code == 401
    assert marker not in caplog.text and len(caplog.text) < 2_000
    assert len(rejections(caplog)) == 1


@pytest.mark.parametrize(
    ("body", "content_type", "status"),
    [
        ("{not json", "application/json", 400),
        (b"\xff\xfe\x00binary\x80", "application/octet-stream", 400),
        (form(payload="{broken"), "application/x-www-form-urlencoded", 400),
        ("[1, 2, 3]", "application/json", 400),
    ],
)
def test_a_malformed_body_is_a_400_without_a_traceback(events_url, caplog, body, content_type, status):
    raw = body if isinstance(body, bytes) else body.encode()
    headers = signed_headers(raw.decode("latin-1"), content_type)  # judged before the signature is
    with caplog.at_level(logging.DEBUG):
        response = httpx.post(events_url, content=raw, headers=headers)
    assert response.status_code == status
    assert "Traceback" not in caplog.text and not [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(rejections(caplog)) == 1


@pytest.mark.parametrize("timestamp", ["soon", "", "1e9", "-5"])
def test_a_non_numeric_timestamp_is_a_401_without_a_traceback(events_url, caplog, timestamp):
    body = event_body(mention("how much is a walnut worktop?"))
    headers = {**signed_headers(body), "x-slack-request-timestamp": timestamp}
    with caplog.at_level(logging.DEBUG):
        response = httpx.post(events_url, content=body, headers=headers)
    assert response.status_code == 401
    assert "Traceback" not in caplog.text and not [r for r in caplog.records if r.levelno >= logging.ERROR]


def test_a_body_over_the_limit_is_refused_before_it_is_read(events_url, caplog):
    host, port = events_url.removeprefix("http://").split("/")[0].split(":")
    head = (
        f"POST /slack/events HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {10 * MAX_BODY_BYTES}\r\n\r\n"
    )
    with caplog.at_level(logging.DEBUG), socket.create_connection((host, int(port)), timeout=10) as conn:
        conn.sendall(head.encode() + b"{" + b"x" * 1000)  # the rest of the 10 MB never comes
        reply = b""
        while b"\r\n" not in reply:
            chunk = conn.recv(4096)
            if not chunk:
                break
            reply += chunk
    assert reply.startswith(b"HTTP/1.1 413")
    assert len(rejections(caplog)) == 1


def test_a_chunked_body_over_the_limit_is_refused_too(events_url):
    def chunks():
        for _ in range(12):
            yield b"x" * 100_000

    response = httpx.post(events_url, content=chunks(), headers={"content-type": "application/json"})
    assert response.status_code == 413


def test_signed_events_are_still_answered_over_http(events_url, fake_slack):
    body = event_body(mention("how much is a walnut worktop?"))
    assert httpx.post(events_url, content=body, headers=signed_headers(body)).status_code == 200
    assert "520 EUR" in fake_slack.wait_for("chat.postMessage")[0].body["text"]


def test_listening_is_logged_at_info(make_app, caplog):
    with caplog.at_level(logging.DEBUG):
        port, stop = start_http_server(make_app(), 0, "127.0.0.1")
        stop.set()
    lines = [r for r in caplog.records if "listening on port" in r.getMessage()]
    assert [r.levelno for r in lines] == [logging.INFO] and str(port) in lines[0].getMessage()


# --- item 14: placeholders -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("env", "variable"),
    [
        ({"SLACK_BOT_TOKEN": "xoxb-", "SLACK_APP_TOKEN": "xapp-1-A1-2-abc"}, "SLACK_BOT_TOKEN"),
        ({"SLACK_BOT_TOKEN": "xoxb-…", "SLACK_APP_TOKEN": "xapp-1-A1-2-abc"}, "SLACK_BOT_TOKEN"),
        ({"SLACK_BOT_TOKEN": "xoxb-1-2-abc", "SLACK_APP_TOKEN": "xapp-"}, "SLACK_APP_TOKEN"),
    ],
)
def test_placeholder_tokens_are_refused_in_one_sentence_naming_the_variable(env, variable):
    with pytest.raises(ConfigError) as error:
        slack_settings(env)
    message = str(error.value)
    assert message.startswith(f"{variable} is still the") and message.count(". ") == 0 and "\n" not in message


# --- item 18: a port of its own ----------------------------------------------------------------


def test_slack_port_overrides_the_shared_port():
    base = {"SLACK_BOT_TOKEN": "xoxb-1-2-abc", "SLACK_MODE": "http", "SLACK_SIGNING_SECRET": "s"}
    assert slack_settings(base).port == 3000
    assert slack_settings({**base, "PORT": "5000"}).port == 5000
    assert slack_settings({**base, "PORT": "5000", "SLACK_PORT": "5100"}).port == 5100
    with pytest.raises(ConfigError, match=r"^SLACK_PORT must be a port number"):
        slack_settings({**base, "SLACK_PORT": "http"})


def test_nothing_is_left_waiting_after_a_rejection(events_url):
    # Several junk requests in a row leave the server answering normally.
    started = time.monotonic()
    for _ in range(5):
        assert httpx.post(events_url, content="{", headers={"content-type": "application/json"}).status_code == 401
    assert httpx.get(events_url.replace("/slack/events", "/healthz")).json() == {"ok": True}
    assert time.monotonic() - started < 10


def test_a_port_in_use_is_one_sentence(make_app):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        with pytest.raises(VerbatimError, match=r"could not listen on port \d+"):
            start_http_server(make_app(), taken.getsockname()[1], "127.0.0.1")
