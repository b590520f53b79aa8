"""`/verbatim` in Telegram through the real Application, long-polling the fake Bot API."""

import asyncio
import logging

import pytest

from bot.presenter import reports
from bot.telegram.config import telegram_settings
from core import ConfigError
from core.common.questions import SCOPES
from tests.bot.telegram.conftest import TOKEN, group_message, polling, private_message, start, stop

ADMIN = 501


def command(text, uid):
    return private_message(text, uid=uid, entities=[{"type": "bot_command", "offset": 0, "length": len("/verbatim")}])


async def replies(make_application, bot_api, updates, count):
    application = make_application(admin_users=frozenset({ADMIN}))
    await polling(application, bot_api, [updates])
    try:
        return [c.body for c in await bot_api.wait_for("sendMessage", count)]
    finally:
        await stop(application)


@pytest.mark.parametrize("text", ["/verbatim status", "/verbatim reindex", "/verbatim gaps", "/verbatim"])
def test_everyone_else_gets_one_line_and_the_attempt_is_logged(make_application, bot_api, caplog, text):
    with caplog.at_level(logging.WARNING):
        sent = asyncio.run(replies(make_application, bot_api, [command(text, 7)], 1))
    assert [s["text"] for s in sent] == [reports.NOT_ALLOWED]
    refused = [r.getMessage() for r in caplog.records if "refused" in r.getMessage()]
    assert refused and " 7 " not in refused[0]


def test_a_refused_user_is_logged_under_the_hash_their_feedback_is_kept_under(
    make_application, bot_api, caplog, pipeline
):
    # The run log keeps a 👍 / 👎 from Telegram user 7 under state.hashed("7") (who=str(user id)): the
    # operator can match the log line to that user's feedback only if both use the one key.
    with caplog.at_level(logging.WARNING):
        asyncio.run(replies(make_application, bot_api, [command("/verbatim status", 7)], 1))
    [refused] = [r.getMessage() for r in caplog.records if "refused" in r.getMessage()]
    assert pipeline.store.state.hashed("7") in refused


def test_status_for_an_admin(make_application, bot_api, pipeline):
    pipeline.ask("do you gift wrap orders?", SCOPES["public"], "telegram")
    [sent] = asyncio.run(replies(make_application, bot_api, [command("/verbatim status", ADMIN)], 1))
    assert sent["chat_id"] == ADMIN
    assert "indexed, none failed" in sent["text"] and "Last 7 days: 1 asked, 1 refused (100%)" in sent["text"]


def test_reindex_for_an_admin_says_so_then_replies_with_the_sync_report(make_application, bot_api):
    first, report = asyncio.run(replies(make_application, bot_api, [command("/verbatim reindex", ADMIN)], 2))
    assert first["text"] == reports.REINDEX_STARTED
    assert report["text"].startswith("Re-read the documents: 0 added, 0 updated,")


def test_an_admin_in_a_group_is_told_to_ask_privately_and_the_group_sees_no_report(make_application, bot_api, pipeline):
    pipeline.ask("do you gift wrap orders?", SCOPES["public"], "telegram")
    entities = [{"type": "bot_command", "offset": 0, "length": len("/verbatim")}]
    in_group = group_message("/verbatim gaps", uid=ADMIN, entities=entities)
    [sent] = asyncio.run(replies(make_application, bot_api, [in_group], 1))
    assert sent["text"] == reports.ADMIN_PRIVATE_ONLY and "gift" not in sent["text"]


def test_gaps_for_an_admin(make_application, bot_api, pipeline):
    for question in ("do you gift wrap orders?", "is gift wrapping available?"):
        pipeline.ask(question, SCOPES["public"], "telegram")
    [sent] = asyncio.run(replies(make_application, bot_api, [command("/verbatim gaps", ADMIN)], 1))
    assert sent["text"].startswith(reports.GAPS_HEADING) and "2× “" in sent["text"]


def test_the_command_is_listed_only_in_the_admins_chat(make_application, bot_api):
    async def scenario():
        application = make_application(admin_users=frozenset({ADMIN}))
        await start(application)
        await stop(application)

    asyncio.run(scenario())
    published = [c.body for c in bot_api.calls("setMyCommands")]
    public = [p for p in published if not p.get("scope")]
    scoped = [p for p in published if p.get("scope")]
    assert public and all(c["command"] != "verbatim" for c in public[0]["commands"])
    assert scoped and scoped[0]["scope"] == {"type": "chat", "chat_id": ADMIN}
    assert "verbatim" in [c["command"] for c in scoped[0]["commands"]]


def test_admin_ids_are_checked_at_start_up():
    env = {"TELEGRAM_BOT_TOKEN": TOKEN}
    assert telegram_settings({**env, "TELEGRAM_ADMIN_USERS": "12, 34"}).admin_users == {12, 34}
    with pytest.raises(ConfigError, match="TELEGRAM_ADMIN_USERS must list numeric Telegram user ids"):
        telegram_settings({**env, "TELEGRAM_ADMIN_USERS": "@alice"})
