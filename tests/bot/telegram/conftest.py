"""A fake Telegram Bot API on 127.0.0.1 that the real python-telegram-bot Application talks to."""

from __future__ import annotations

import asyncio
import itertools
import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from bot.telegram import build_application
from bot.telegram.config import TelegramSettings
from tests.fakes import FakeServer, Recorded, Reply

TOKEN = "123456:TEST-token-abcdefghijklmnopqrstuvwxyz"
# How long a wait for something that must happen may take before the test fails. Reached only on
# failure, so it is generous: a loaded machine makes the wait longer, never the test wrong.
WAIT = 60.0
BOT = {
    "id": 4242,
    "is_bot": True,
    "first_name": "Verbatim",
    "username": "verbatim_test_bot",
    "can_join_groups": True,
    "can_read_all_group_messages": False,
    "supports_inline_queries": False,
}


def decode(body: Any) -> dict[str, Any]:
    """PTB sends form fields whose complex values are JSON text."""
    if not isinstance(body, dict):
        return {}
    out = {}
    for key, value in body.items():
        try:
            out[key] = json.loads(value)
        except (TypeError, ValueError):
            out[key] = value
    return out


class FakeBotAPI:
    """Serves getMe, getUpdates (scripted batches), sendMessage and the rest; records every call."""

    def __init__(self) -> None:
        self.updates: list[list[dict[str, Any]]] = []
        self.lock = threading.Lock()
        self.ids = itertools.count(1000)
        self.server = FakeServer(self.handle)

    @property
    def base_url(self) -> str:
        return self.server.url + "/bot"

    def handle(self, request: Recorded) -> Reply:
        method = request.path.rsplit("/", 1)[-1]
        params = decode(request.body)
        request.body = params
        if method == "getMe":
            return Reply(200, {"ok": True, "result": BOT})
        if method == "getUpdates":
            with self.lock:
                batch = self.updates.pop(0) if self.updates else []
            if not batch:
                threading.Event().wait(0.05)
            return Reply(200, {"ok": True, "result": batch})
        if method == "sendMessage":
            chat = params["chat_id"]
            message = {
                "message_id": next(self.ids),
                "date": int(time.time()),
                "text": params.get("text", ""),
                "chat": {"id": int(chat), "type": "private" if int(chat) > 0 else "supergroup"},
                "from": BOT,
            }
            return Reply(200, {"ok": True, "result": message})
        return Reply(200, {"ok": True, "result": True})

    def calls(self, method: str) -> list[Recorded]:
        return [r for r in self.server.requests if r.path.endswith("/" + method)]

    async def wait_for(self, method: str, count: int = 1, timeout: float = WAIT) -> list[Recorded]:
        """The calls of `method` once there are at least `count` of them (polled, not slept on)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = self.calls(method)
            if len(found) >= count:
                return found
            await asyncio.sleep(0.02)
        raise AssertionError(f"expected {count} {method} calls, saw {len(self.calls(method))}")


@pytest.fixture
def bot_api() -> Iterator[FakeBotAPI]:
    api = FakeBotAPI()
    with api.server:
        yield api


@pytest.fixture
def make_application(bot_api, pipeline):
    def make(**overrides: Any):
        settings = TelegramSettings(TOKEN, api_base_url=bot_api.base_url, **overrides)
        return build_application(settings, pipeline)

    return make


_update_ids = itertools.count(1)
_message_ids = itertools.count(1)


def user(uid: int = 7) -> dict[str, Any]:
    return {"id": uid, "is_bot": False, "first_name": f"User{uid}"}


def private_message(text: str, uid: int = 7, **extra: Any) -> dict[str, Any]:
    mid = next(_message_ids)
    return {
        "update_id": next(_update_ids),
        "message": {
            "message_id": mid,
            "date": int(time.time()),
            "chat": {"id": uid, "type": "private"},
            "from": user(uid),
            "text": text,
            **extra,
        },
    }


def group_message(
    text: str, uid: int = 7, chat: int = -100123, entities: list | None = None, **extra: Any
) -> dict[str, Any]:
    mid = next(_message_ids)
    message = {
        "message_id": mid,
        "date": int(time.time()),
        "chat": {"id": chat, "type": "supergroup", "title": "G"},
        "from": user(uid),
        "text": text,
        **extra,
    }
    if entities:
        message["entities"] = entities
    return {"update_id": next(_update_ids), "message": message}


def mention_entities(text: str) -> list[dict[str, Any]]:
    at = text.index("@verbatim_test_bot")
    return [{"type": "mention", "offset": at, "length": len("@verbatim_test_bot")}]


async def polling(application, bot_api: FakeBotAPI, batches: list[list[dict[str, Any]]]):
    """Start the real Application on long polling against the fake, feed it batches."""
    bot_api.updates.extend(batches)
    await start(application)
    await application.updater.start_polling(poll_interval=0.0, timeout=1)


async def start(application) -> None:
    """What run_polling / run_webhook do before they listen: initialize, post_init, start."""
    await application.initialize()
    if application.post_init:
        await application.post_init(application)
    await application.start()


async def stop(application) -> None:
    """Stop polling, then the Application, which first finishes every update it has fetched.

    Application.stop() joins its update queue, and each update is marked done only once its handlers
    have run: after this, whatever the bot was going to send for the updates so far has been sent.
    """
    if application.updater.running:
        await application.updater.stop()
    await application.stop()
    await application.shutdown()
