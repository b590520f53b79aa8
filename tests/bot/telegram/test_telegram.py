import asyncio
import contextlib
import html.parser
import json
import logging

import httpx
import pytest

from bot import presenter
from bot.telegram import build_application, webhook
from bot.telegram.config import TelegramSettings, telegram_settings
from bot.telegram.render import LIMIT, messages
from core import KnowledgeBase, Pipeline
from core.common.answers import Answer, Quote, Statement
from core.common.errors import ConfigError
from tests.bot.telegram.conftest import (
    TOKEN,
    WAIT,
    group_message,
    mention_entities,
    polling,
    private_message,
    start,
    stop,
)
from tests.fakes import FullDiskConnection


def run(coro):
    return asyncio.run(coro)


@contextlib.asynccontextmanager
async def polled(make_application, bot_api, updates, **overrides):
    """An application long-polling the fake, fed `updates` in one batch, and stopped after: stop() returns only once
    every update it fetched has been handled, so whatever it would send has been sent."""
    application = make_application(**overrides)
    await polling(application, bot_api, [updates])
    try:
        yield
    finally:
        await stop(application)


async def ask_privately(make_application, bot_api, updates, count=None, timeout=WAIT, **overrides):
    async with polled(make_application, bot_api, updates, **overrides):
        return await bot_api.wait_for("sendMessage", count or len(updates), timeout)


def test_private_question_is_answered_as_a_reply_with_blockquote_and_caption(make_application, bot_api):
    update = private_message("how much is a walnut worktop?")
    sent = run(ask_privately(make_application, bot_api, [update]))[0].body
    assert sent["reply_parameters"]["message_id"] == update["message"]["message_id"]
    assert sent["parse_mode"] == "HTML"
    assert "<blockquote>Solid walnut worktop, 38 mm: 520 EUR per running metre.</blockquote>" in sent["text"]
    assert "<i>📄 Price list › Worktops · fragment 3 of 7" in sent["text"]
    buttons = sent["reply_markup"]["inline_keyboard"][0]
    assert [b["text"] for b in buttons] == ["👍", "👎"] and buttons[0]["callback_data"].startswith("fb:up:")
    assert bot_api.calls("sendChatAction")[0].body["action"] == "typing"
    menus = {c.body.get("language_code"): c.body["commands"] for c in bot_api.calls("setMyCommands")}
    assert menus[None][0] == {"command": "ask", "description": "Ask a question about our documents"}
    assert menus["de"][0]["description"] == "Eine Frage zu unseren Dokumenten stellen", "one menu per language"


def test_refusal_is_a_distinct_style_without_quotes(make_application, bot_api):
    sent = run(ask_privately(make_application, bot_api, [private_message("What is the capital of France?")]))[0].body
    assert sent["text"].startswith("🚫 <b>Not in the knowledge base</b>")
    assert "<blockquote>" not in sent["text"]


def test_an_internal_only_fact_is_refused_to_customers(make_application, bot_api):
    question = "how much discount can a salesperson give without approval?"
    sent = run(ask_privately(make_application, bot_api, [private_message(question)]))[0].body
    assert "Not in the knowledge base" in sent["text"]
    assert "Discount authority" not in sent["text"] and "5%" not in sent["text"]


def test_group_chatter_is_ignored_and_mentions_replies_and_ask_are_answered(make_application, bot_api, pipeline):
    async def scenario():
        text = "@verbatim_test_bot how much is a walnut worktop?"
        chatter = group_message("anyone for lunch?")
        mentioned = group_message(text, entities=mention_entities(text))
        asked = group_message(
            "/ask how long is the warranty on hinges?", entities=[{"type": "bot_command", "offset": 0, "length": 4}]
        )
        # Once stopped, every fetched update (the chatter included) has been handled: a reply to the chatter
        # would be among the calls checked below.
        async with polled(make_application, bot_api, [chatter, mentioned, asked]):
            sent = await bot_api.wait_for("sendMessage", 2)
            reply_to_bot = group_message(
                "and a beech one?",
                reply_to_message={
                    "message_id": 1000,
                    "date": 1,
                    "chat": {"id": -100123, "type": "supergroup"},
                    "from": {"id": 4242, "is_bot": True, "first_name": "Verbatim"},
                    "text": "...",
                },
            )
            bot_api.updates.append([reply_to_bot])
            sent = await bot_api.wait_for("sendMessage", 3)
            return sent, chatter, mentioned, asked, reply_to_bot

    _sent, chatter, mentioned, asked, reply_to_bot = run(scenario())
    replied_to = [s.body["reply_parameters"]["message_id"] for s in bot_api.calls("sendMessage")]
    assert chatter["message"]["message_id"] not in replied_to
    assert mentioned["message"]["message_id"] in replied_to
    assert asked["message"]["message_id"] in replied_to
    assert reply_to_bot["message"]["message_id"] in replied_to
    assert len(replied_to) == 3


def test_a_reply_to_the_bots_answer_continues_the_conversation(make_application, bot_api):
    async def scenario():
        async with polled(make_application, bot_api, [private_message("How much is a solid oak worktop?")]):
            first = (await bot_api.wait_for("sendMessage"))[0]
            answer_id = 1000  # the fake numbers the bot's messages from 1000
            follow = private_message(
                "and how heavy is a 3 m one?",
                reply_to_message={
                    "message_id": answer_id,
                    "date": 1,
                    "chat": {"id": 7, "type": "private"},
                    "from": {"id": 4242, "is_bot": True, "first_name": "Verbatim"},
                    "text": first.body["text"][:50],
                },
            )
            bot_api.updates.append([follow])
            return (await bot_api.wait_for("sendMessage", 2))[1].body

    second = run(scenario())
    assert "53 kg" in second["text"]


def test_feedback_buttons_are_recorded_in_the_run_log(make_application, bot_api, pipeline):
    async def scenario():
        async with polled(make_application, bot_api, [private_message("how much is a walnut worktop?")]):
            sent = (await bot_api.wait_for("sendMessage"))[0].body
            data = sent["reply_markup"]["inline_keyboard"][0][1]["callback_data"]
            bot_api.updates.append(
                [
                    {
                        "update_id": 99999,
                        "callback_query": {
                            "id": "cb1",
                            "from": {"id": 7, "is_bot": False, "first_name": "U"},
                            "chat_instance": "x",
                            "data": data,
                        },
                    }
                ]
            )
            return (await bot_api.wait_for("answerCallbackQuery"))[0].body

    answered = run(scenario())
    assert answered["text"] == presenter.FEEDBACK_THANKS
    assert (pipeline.runlog.tail(1)[0].up, pipeline.runlog.tail(1)[0].down) == (0, 1)


def test_start_and_help_explain_the_bot(make_application, bot_api):
    cmd = {"type": "bot_command", "offset": 0, "length": 6}
    updates = [private_message("/start", entities=[cmd]), private_message("/help", entities=[{**cmd, "length": 5}])]
    sent = run(ask_privately(make_application, bot_api, updates))
    texts = " ".join(s.body["text"] for s in sent)
    assert "quotes the documents word for word" in texts and "/ask" in texts


def test_rate_limit_and_length_cap_answer_politely(make_application, bot_api):
    updates = [private_message("how much is a walnut worktop?", uid=9) for _ in range(3)]
    updates.append(private_message("oak " * 900, uid=10))
    sent = run(ask_privately(make_application, bot_api, updates, questions_per_minute=2))
    texts = [s.body["text"] for s in sent]
    assert sum("faster than I can keep up" in t for t in texts) == 1
    assert any("at most 2,000 characters" in t for t in texts)


def test_forum_topic_replies_stay_in_the_topic(make_application, bot_api):
    text = "@verbatim_test_bot how much is a walnut worktop?"
    update = group_message(text, entities=mention_entities(text), message_thread_id=77, is_topic_message=True)
    sent = run(ask_privately(make_application, bot_api, [update]))[0].body
    assert sent["message_thread_id"] == 77


def test_errors_are_logged_then_told_and_the_bot_keeps_running(make_application, bot_api, pipeline, caplog):
    calls = {"n": 0}
    original = pipeline.ask

    def flaky(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 1:
            raise RuntimeError("index exploded")
        return original(*args, **kwargs)

    pipeline.ask = flaky
    updates = [private_message("how much is a walnut worktop?"), private_message("how much is a beech worktop?")]
    sent = run(ask_privately(make_application, bot_api, updates, count=2))
    texts = [s.body["text"] for s in sent]
    assert any("Sorry, something went wrong" in t for t in texts)
    # Updates run concurrently, so either question may be the one that failed; the other is answered.
    assert any("260 EUR" in t or "520 EUR" in t for t in texts)
    assert "index exploded" in caplog.text


def test_fifty_users_in_one_batch_are_all_answered_once(make_application, bot_api):
    updates = [private_message("how much is a walnut worktop?", uid=100 + i) for i in range(50)]
    # Fifty answers through the real model on a loaded machine: wait for them as long as they take.
    # The exact count below is checked after stop(), which has finished every update, so a second
    # answer to anyone would be counted.
    run(ask_privately(make_application, bot_api, updates, timeout=3 * WAIT))
    chats = sorted(int(s.body["chat_id"]) for s in bot_api.calls("sendMessage"))
    assert chats == list(range(100, 150))


@contextlib.asynccontextmanager
async def webhook_listening(make_application, pipeline, port: int):
    """A started application in webhook mode, listening on 127.0.0.1:`port`/hook for the secret "s3cret"; stopped
    after, which answers every update it took."""
    application = make_application(webhook_url=f"http://127.0.0.1:{port}/hook", webhook_secret="s3cret")
    await start(application)
    server = await webhook.listen(application, "127.0.0.1", port, "hook", "s3cret", pipeline)
    try:
        yield
    finally:
        server.stop()
        await stop(application)


async def post_update(port: int, body: str | bytes, secret: str | None, **headers: str) -> httpx.Response:
    sent = {"content-type": "application/json", **headers}
    if secret is not None:
        sent[webhook.SECRET_HEADER] = secret
    async with httpx.AsyncClient(timeout=WAIT) as client:
        return await client.post(f"http://127.0.0.1:{port}/hook", content=body, headers=sent)


def test_webhook_accepts_the_right_secret_and_rejects_a_wrong_one(make_application, pipeline, bot_api, unused_port):
    async def scenario():
        async with webhook_listening(make_application, pipeline, unused_port):
            body = json.dumps(private_message("how much is a walnut worktop?"))
            wrong = await post_update(unused_port, body, "nope")
            right = await post_update(unused_port, body, "s3cret")
            sent = await bot_api.wait_for("sendMessage")
            return wrong.status_code, right.status_code, sent

    wrong, right, sent = run(scenario())
    assert wrong == 403 and right == 200
    assert len(sent) == 1 and "520 EUR" in sent[0].body["text"]


def test_webhook_refuses_big_and_ill_shaped_bodies_and_answers_a_redelivered_update_once(
    make_application, pipeline, bot_api, unused_port, caplog
):
    async def scenario():
        async with webhook_listening(make_application, pipeline, unused_port):
            big = b'{"update_id": 1, "pad": "' + b"x" * (2 * webhook.MAX_BODY_BYTES) + b'"}'
            statuses = {
                "too big": (await post_update(unused_port, big, "s3cret")).status_code,
                "no secret": (await post_update(unused_port, big, None)).status_code,
                "not json": (await post_update(unused_port, "my salary is 4,100 EUR", "s3cret")).status_code,
                "a list": (await post_update(unused_port, "[1, 2]", "s3cret")).status_code,
            }
            update = json.dumps(private_message("how much is a walnut worktop?"))
            statuses["first"] = (await post_update(unused_port, update, "s3cret")).status_code
            statuses["again"] = (await post_update(unused_port, update, "s3cret")).status_code
            await bot_api.wait_for("sendMessage")
            return statuses

    with caplog.at_level(logging.DEBUG):
        statuses = run(scenario())
    sent = bot_api.calls("sendMessage")  # after the stop: a second answer would have been sent by now
    assert statuses == {"too big": 413, "no secret": 403, "not json": 400, "a list": 400, "first": 200, "again": 200}
    assert len(sent) == 1
    assert "4,100" not in caplog.text


def test_webhook_on_a_full_disk_acknowledges_the_update_and_the_asker_hears_the_apology(
    make_application, pipeline, bot_api, unused_port, caplog
):
    async def scenario():
        async with webhook_listening(make_application, pipeline, unused_port):
            pipeline.store.runlog.db = FullDiskConnection(pipeline.store.runlog.db)  # the update's id can't be kept
            update = json.dumps(private_message("how much is a walnut worktop?"))
            status = (await post_update(unused_port, update, "s3cret")).status_code
            await bot_api.wait_for("sendMessage")
            return status

    with caplog.at_level(logging.INFO):
        status = run(scenario())
    assert status == 200, "a 500 only brings the update back, to fail again"
    assert [s.body["text"] for s in bot_api.calls("sendMessage")] == [f"⚠️ {presenter.APOLOGY}"]
    problems = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(problems) == 1 and "the disk is full" in problems[0].getMessage() and not problems[0].exc_info


@pytest.fixture
def unused_port():
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# --- rendering -------------------------------------------------------------------------------------


class TagChecker(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.stack = []

    def handle_starttag(self, tag, attrs):
        self.stack.append(tag)

    def handle_endtag(self, tag):
        assert self.stack and self.stack.pop() == tag, f"unbalanced </{tag}>"


def answered(*texts):
    statements = tuple(Statement(t, (Quote(t, i, "d.md", "Doc <A&B>", ("S",), i, 9),)) for i, t in enumerate(texts, 1))
    return Answer("a1", "q", "answered", None, statements, 1, (), {}, "extractive")


def test_html_survives_angle_brackets_ampersands_and_long_text():
    long_quote = "Prices < 100 & > 50 apply. " * 300  # ~8,000 characters, far over one message
    parts = messages(presenter.present(answered("Use <b>bold</b> & <script>", long_quote, "Short one.")))
    assert len(parts) > 1
    for part in parts:
        assert len(part) <= LIMIT
        checker = TagChecker()
        checker.feed(part)
        assert checker.stack == []
        assert "<script>" not in part and "<b>bold</b>" not in part
    joined = "".join(parts)
    assert "&lt;script&gt;" in joined and "Doc &lt;A&amp;B&gt;" in joined
    assert "1 quote could not be verified and was left out" in parts[-1]


def test_settings_name_the_variable_that_is_wrong():
    with pytest.raises(ConfigError, match="TELEGRAM_BOT_TOKEN is not set"):
        telegram_settings({})
    with pytest.raises(ConfigError, match="does not look like a bot token"):
        telegram_settings({"TELEGRAM_BOT_TOKEN": "nope"})
    with pytest.raises(ConfigError, match="TELEGRAM_WEBHOOK_SECRET is not set"):
        telegram_settings({"TELEGRAM_BOT_TOKEN": TOKEN, "TELEGRAM_WEBHOOK_URL": "https://example.com/hook"})
    assert telegram_settings({"TELEGRAM_BOT_TOKEN": TOKEN}).audience == "public"


def test_the_bot_token_never_reaches_the_logs(make_application, bot_api, caplog):
    # INFO is what `verbatim serve` logs at (python-telegram-bot itself prints its URLs at DEBUG).
    with caplog.at_level(logging.INFO):
        run(ask_privately(make_application, bot_api, [private_message("how much is a walnut worktop?")]))
    assert caplog.records, "the run logged something"
    assert TOKEN not in caplog.text and TOKEN.split(":")[1] not in caplog.text


def test_a_reply_after_a_restart_continues_the_conversation(bot_api, settings, local_embedder):
    """The reply chain lives in the store, so a new process on the same data folder picks it up."""

    def application_on_a_fresh_pipeline():
        pipeline = Pipeline(settings, KnowledgeBase(settings, local_embedder))
        return build_application(TelegramSettings(TOKEN, api_base_url=bot_api.base_url), pipeline), pipeline

    async def scenario():
        before, first_pipeline = application_on_a_fresh_pipeline()
        await polling(before, bot_api, [[private_message("How much is a solid oak worktop?")]])
        try:
            first = (await bot_api.wait_for("sendMessage"))[0]
        finally:
            await stop(before)
            first_pipeline.close()
        after, second_pipeline = application_on_a_fresh_pipeline()
        follow = private_message(
            "and how heavy is a 3 m one?",
            reply_to_message={
                "message_id": 1000,  # the fake numbers the bot's messages from 1000
                "date": 1,
                "chat": {"id": 7, "type": "private"},
                "from": {"id": 4242, "is_bot": True, "first_name": "Verbatim"},
                "text": first.body["text"][:50],
            },
        )
        await polling(after, bot_api, [[follow]])
        try:
            return (await bot_api.wait_for("sendMessage", 2))[1].body
        finally:
            await stop(after)
            second_pipeline.close()

    assert "53 kg" in run(scenario())["text"]


def test_the_library_never_logs_an_update_s_body(caplog):
    from telegram.ext._utils.webhookhandler import _LOGGER

    from bot.telegram import quiet_library_logs

    quiet_library_logs()
    body = {"update_id": 7, "message": {"text": "my salary is 4,100 EUR", "from": {"id": 123456789}}}
    with caplog.at_level(logging.DEBUG):
        _LOGGER.critical(
            "Something went wrong processing the data received from Telegram. "
            "Received data was *not* processed! Received data was: %r",
            body,
        )
        _LOGGER.debug("Webhook received data: %s", json.dumps(body))
    assert "4,100" not in caplog.text and "123456789" not in caplog.text
    assert "not logged" in caplog.text


def test_webhook_mode_registers_its_secret_answers_and_drains_on_stop(make_application, pipeline, bot_api, unused_port):
    async def scenario():
        url = f"http://127.0.0.1:{unused_port}/hook"
        application = make_application(webhook_url=url, webhook_secret="s3cret")
        stopping = asyncio.Event()
        serving = asyncio.create_task(
            webhook.serve_webhook(application, url, "127.0.0.1", unused_port, "hook", "s3cret", pipeline, stopping)
        )
        await bot_api.wait_for("setWebhook")
        for _ in range(100):  # until it listens
            try:
                response = await post_update(
                    unused_port, json.dumps(private_message("how much is a walnut worktop?")), "s3cret"
                )
                break
            except httpx.ConnectError:
                await asyncio.sleep(0.05)
        stopping.set()  # at once: the update taken must still be answered before it returns
        await serving
        return response.status_code, bot_api.calls("sendMessage")

    status, sent = run(scenario())
    assert status == 200 and len(sent) == 1 and "520 EUR" in sent[0].body["text"]
    assert bot_api.calls("setWebhook")[0].body["secret_token"] == "s3cret"


def test_a_vote_replaces_the_buttons_so_the_chat_shows_it_was_counted(make_application, bot_api, pipeline):
    async def scenario():
        async with polled(make_application, bot_api, [private_message("how much is a walnut worktop?")]):
            sent = (await bot_api.wait_for("sendMessage"))[0].body
            data = sent["reply_markup"]["inline_keyboard"][0][0]["callback_data"]  # 👍
            message = {"message_id": 5, "date": 0, "chat": {"id": 7, "type": "private"}, "text": "answer"}
            query = {"id": "cb2", "from": {"id": 7, "is_bot": False, "first_name": "U"}, "chat_instance": "x"}
            bot_api.updates.append(
                [{"update_id": 99998, "callback_query": {**query, "data": data, "message": message}}]
            )
            edited = (await bot_api.wait_for("editMessageReplyMarkup"))[0].body
            # Pressing what is left records nothing twice and still thanks.
            done = edited["reply_markup"]["inline_keyboard"][0][0]["callback_data"]
            bot_api.updates.append([{"update_id": 99997, "callback_query": {**query, "id": "cb3", "data": done}}])
            answers = await bot_api.wait_for("answerCallbackQuery", count=2)
            return edited, [a.body["text"] for a in answers]

    edited, toasts = run(scenario())
    (button,) = edited["reply_markup"]["inline_keyboard"][0]
    assert button["text"] == f"👍 {presenter.FEEDBACK_COUNTED}"
    assert toasts == [presenter.FEEDBACK_THANKS, presenter.FEEDBACK_THANKS]
    assert [(e.up, e.down) for e in pipeline.runlog.tail(5) if e.up or e.down] == [(1, 0)]
