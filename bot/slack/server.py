"""Slack's HTTP mode: /slack/events on tornado, with the checks that come before Bolt sees a request.

Anyone can POST to a public URL, so a request is judged before it is parsed: its size (1 MB at
most; Slack's own payloads are a few kilobytes), its signature headers and its encoding; a
signed body that parses but isn't shaped as a Slack payload (`shape_problem`) is a 400 as well.
A rejected request costs one log line that never holds its body, and never a traceback.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import threading
from typing import Any

import tornado.httpserver
import tornado.web
from slack_bolt import App
from slack_bolt.request import BoltRequest
from slack_sdk.signature import SignatureVerifier

from core import VerbatimError

log = logging.getLogger(__name__)

MAX_BODY_BYTES = 1_000_000
# Connections the kernel queues until the server accepts them (capped by net.core.somaxconn). Python's
# default, 128 at most, is below a burst of Slack's requests; one refused SYN costs its sender a 1 s resend.
BACKLOG = 1024


class _NoBodies(logging.Filter):
    """Bolt logs a whole rejected body at INFO ("Invalid request signature detected … body: …"); we log one line."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "Invalid request signature" not in str(record.msg)


logging.getLogger("slack_bolt.RequestVerification").addFilter(_NoBodies())


@tornado.web.stream_request_body
class EventsHandler(tornado.web.RequestHandler):
    """POST /slack/events: size, headers and encoding checked here; the signature and the rest by Bolt."""

    def initialize(self, app: App) -> None:
        self.app = app
        self.body = bytearray()
        self.oversized = False

    def prepare(self) -> None:
        declared = self.request.headers.get("Content-Length", "")
        if declared.isdigit() and int(declared) > MAX_BODY_BYTES:
            # Answered before the body is read; tornado then closes the connection.
            self.oversized = True
            self._reject(413, f"a body of {int(declared):,} bytes is over the {MAX_BODY_BYTES:,}-byte limit")

    def data_received(self, chunk: bytes) -> None:
        if not self.oversized and len(self.body) + len(chunk) > MAX_BODY_BYTES:
            self.oversized = True  # a chunked body, without Content-Length: read on, keep nothing
            self.body.clear()
        if not self.oversized:
            self.body.extend(chunk)

    def post(self) -> None:
        if self.oversized:
            return self._reject(413, f"the body is over the {MAX_BODY_BYTES:,}-byte limit")
        timestamp = self.request.headers.get("X-Slack-Request-Timestamp", "")
        if not timestamp.isdigit():
            return self._reject(401, "X-Slack-Request-Timestamp is missing or not a number")
        if not self.request.headers.get("X-Slack-Signature"):
            return self._reject(401, "X-Slack-Signature is missing")
        try:
            text = bytes(self.body).decode("utf-8")
        except UnicodeDecodeError:
            return self._reject(400, "the body is not UTF-8 text")
        try:
            request = BoltRequest(body=text, query=self.request.query, headers=dict(self.request.headers))
        except Exception:  # Bolt parses as it builds the request: bad JSON, a list, a broken form payload
            return self._reject(400, "the body is not a Slack payload")
        problem = shape_problem(request.body)
        if problem and self._signed(text):  # unsigned, Bolt answers 401 before any middleware looks inside
            # Bolt's own middleware would fail on it with a 500, or a listener with a traceback.
            return self._reject(400, f"the body is not a Slack payload ({problem})")
        response = self.app.dispatch(request)
        if response.status == 401:
            log.warning("rejected a Slack request from %s: the signature does not match", self.request.remote_ip)
        self.set_status(response.status)
        for name, value in response.first_headers_without_set_cookie().items():
            self.set_header(name, value)
        self.write(response.body)

    def _signed(self, body: str) -> bool:
        # Bolt keeps the secret it verifies with; an app built without one verifies nothing.
        secret = getattr(self.app, "_signing_secret", "")
        headers = self.request.headers
        return not secret or SignatureVerifier(secret).is_valid(
            body, headers.get("X-Slack-Request-Timestamp", ""), headers.get("X-Slack-Signature", "")
        )

    def _reject(self, status: int, why: str) -> None:
        log.warning("rejected a Slack request from %s (HTTP %d): %s", self.request.remote_ip, status, why)
        self.set_status(status)
        self.finish({"error": why})


def shape_problem(body: dict[str, Any]) -> str | None:
    """What keeps a parsed body from being a payload the app can handle, or None.

    Only what Bolt's middleware and our listeners index without looking: a Slack payload always has
    these, so a signed body without them is a bug or a leaked secret, and gets a 400, not a 500.
    """
    if "event_id" in body and not isinstance(body["event_id"], str):
        return "event_id is not a string"
    if "event" in body or body.get("type") == "event_callback":
        event = body.get("event")
        if not isinstance(event, dict) or not isinstance(event.get("type"), str):
            return "event is not an object with a type"
        if event["type"] in ("app_mention", "message") and not event.get("subtype"):
            if not all(isinstance(event.get(name), str) for name in ("channel", "ts")):
                return "the message has no channel or ts"
            if not isinstance(event.get("text", ""), str):
                return "the message's text is not a string"
    if "actions" in body:
        actions = body["actions"]
        if not isinstance(actions, list) or not all(isinstance(a, dict) for a in actions):
            return "actions is not a list of objects"
    if "command" in body and not all(isinstance(body.get(name), str) for name in ("channel_id", "user_id")):
        return "the command has no channel_id or user_id"
    return None


class Health(tornado.web.RequestHandler):
    def get(self) -> None:
        self.write({"ok": True})


def _quiet_access_log(handler: tornado.web.RequestHandler) -> None:
    """Tornado's access log at DEBUG: a rejection already has its one line, and answers their run log."""
    request = handler.request
    log.debug("%d %s %s %.1f ms", handler.get_status(), request.method, request.uri, 1000 * request.request_time())


def tornado_app(app: App) -> tornado.web.Application:
    return tornado.web.Application(
        [("/slack/events", EventsHandler, {"app": app}), ("/healthz", Health)], log_function=_quiet_access_log
    )


def _listening_socket(host: str, port: int) -> socket.socket:
    """A non-blocking listening socket; "" means every interface, IPv6 included where the system has it."""
    if not host and socket.has_dualstack_ipv6():
        sock = socket.create_server(("", port), family=socket.AF_INET6, backlog=BACKLOG, dualstack_ipv6=True)
    else:
        sock = socket.create_server((host, port), backlog=BACKLOG)  # closes its socket itself when binding fails
    sock.setblocking(False)
    return sock


def start_http_server(
    app: App, port: int, host: str = "0.0.0.0", stopped: threading.Event | None = None
) -> tuple[int, threading.Event]:
    """Serve /slack/events in a background thread; returns the bound port and an event that stops it.

    `stopped`, when given, is set once the server has stopped: no request is being taken any more.
    """
    ready = threading.Event()
    stop = threading.Event()
    bound: list[int] = []
    failed: list[OSError] = []

    def run() -> None:
        async def main() -> None:
            server = tornado.httpserver.HTTPServer(tornado_app(app))
            try:
                sock = _listening_socket(host, port)
            except OSError as exc:
                failed.append(exc)
                ready.set()
                return
            server.add_sockets([sock])
            bound.append(sock.getsockname()[1])
            ready.set()
            while not stop.is_set():
                await asyncio.sleep(0.05)
            server.stop()
            await server.close_all_connections()

        try:
            asyncio.run(main())
        finally:
            if stopped is not None:
                stopped.set()

    threading.Thread(target=run, daemon=True, name="slack-http").start()
    ready.wait(10)
    if not bound:
        reason = failed[0].strerror if failed else "it did not start within 10 s"
        raise VerbatimError(f"Slack HTTP mode could not listen on port {port} ({reason}).")
    log.info("Slack HTTP mode: listening on port %d at /slack/events", bound[0])
    return bound[0], stop
