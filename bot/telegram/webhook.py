"""The Telegram webhook server: the bot's own, in place of the library's.

Anyone who can reach the public webhook URL can POST to it, so a request is judged before its
body is read: the secret header first (403 without reading a byte), then the size (1 MB at most,
as for Slack; the library's server read 100 MB before looking). A body that isn't an update gets a
400 and is never logged. Telegram delivers an update again when a webhook is slow, and replicas
behind a load balancer make that likelier: each `update_id` is answered once, through the store,
whichever process it reaches. Updates go to the Application's own queue, so handlers, concurrency
and the drain on shutdown (every update taken is answered before the process exits) are the
library's, as in long polling.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
import signal
from typing import Any

import tornado.web
from telegram import Update
from telegram.ext import Application
from tornado.httpserver import HTTPServer

from core import DiskFull, Pipeline, StoreUnavailable

log = logging.getLogger(__name__)

MAX_BODY_BYTES = 1 << 20  # a Telegram update is a few kB; a 1 MB body is not one
SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"


@tornado.web.stream_request_body
class UpdateHandler(tornado.web.RequestHandler):
    def initialize(self, telegram: Application, secret: str, pipeline: Pipeline) -> None:
        self.telegram = telegram
        self.secret = secret
        self.state = pipeline.state
        self.body = bytearray()
        self.oversized = False

    def prepare(self) -> None:
        if self.request.method != "POST":
            return
        given = self.request.headers.get(SECRET_HEADER, "")
        if not hmac.compare_digest(given.encode(), self.secret.encode()):
            self._reject(403, "the secret token is missing or wrong")
            return
        length = self.request.headers.get("Content-Length", "")
        if length.isdigit() and int(length) > MAX_BODY_BYTES:
            self._reject(413, f"the body is over the {MAX_BODY_BYTES:,}-byte limit")
            return
        self.request.connection.set_max_body_size(MAX_BODY_BYTES + 1)  # type: ignore[union-attr]

    def data_received(self, chunk: bytes) -> None:
        if len(self.body) + len(chunk) > MAX_BODY_BYTES:
            self.oversized = True  # chunked, without a Content-Length: read on, keep nothing
            self.body.clear()
        if not self.oversized:
            self.body.extend(chunk)

    async def post(self) -> None:
        if self.oversized:
            return self._reject(413, f"the body is over the {MAX_BODY_BYTES:,}-byte limit")
        try:
            data = json.loads(bytes(self.body))
            update = Update.de_json(data, self.telegram.bot) if isinstance(data, dict) else None
        except Exception:  # not JSON, or JSON that isn't an update: the body is the sender's, never logged
            update = None
        if update is None:
            return self._reject(400, "the body is not a Telegram update")
        try:
            first = await asyncio.to_thread(self.state.first_time, f"telegram-update:{update.update_id}")
        except StoreUnavailable as exc:
            # Not acknowledged, so Telegram delivers it again; the first delivery after the store is back is answered.
            log.warning("update %d left for Telegram to deliver again: %s", update.update_id, exc)
            return self._reject(503, "the store is unavailable")
        except DiskFull:
            # The store answers but can't be written: every delivery would fail the same way,
            # and a 500 only brings it back. Handed on unremembered and acknowledged: the handlers tell
            # the asker, and log the full disk in one line.
            first = True
        if first:
            await self.telegram.update_queue.put(update)
        else:
            log.info("skipping redelivered update %d", update.update_id)
        self.set_status(200)
        self.finish()

    def _reject(self, status: int, why: str) -> None:
        log.warning("rejected a Telegram webhook request from %s (HTTP %d): %s", self.request.remote_ip, status, why)
        self.set_status(status)
        self.finish({"error": why})


def webhook_app(application: Application, path: str, secret: str, pipeline: Pipeline) -> tornado.web.Application:
    route = "/" + path.strip("/")
    handlers: list[Any] = [(route, UpdateHandler, {"telegram": application, "secret": secret, "pipeline": pipeline})]
    return tornado.web.Application(handlers, log_function=lambda handler: None)


async def listen(
    application: Application, host: str, port: int, path: str, secret: str, pipeline: Pipeline
) -> HTTPServer:
    """The webhook server, listening; the Application must be started (see `serve_webhook`)."""
    server = HTTPServer(webhook_app(application, path, secret, pipeline), max_body_size=MAX_BODY_BYTES + 1)
    server.listen(port, address=host)
    return server


async def serve_webhook(
    application: Application,
    url: str,
    host: str,
    port: int,
    path: str,
    secret: str,
    pipeline: Pipeline,
    stopping: asyncio.Event | None = None,
) -> None:
    """Run until SIGTERM or SIGINT (or `stopping` is set): register the webhook, answer updates, then drain."""
    if stopping is None:
        stopping = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, stopping.set)
    async with application:
        await application.bot.set_webhook(url, secret_token=secret, allowed_updates=Update.ALL_TYPES)
        if application.post_init:
            await application.post_init(application)
        await application.start()
        server = await listen(application, host, port, path, secret, pipeline)
        try:
            await stopping.wait()
        finally:
            log.info("Telegram webhook: stopping; answering the updates already taken")
            server.stop()  # no new requests
            await server.close_all_connections()  # those under way have put their update on the queue
            await application.stop()  # which answers every update on it
