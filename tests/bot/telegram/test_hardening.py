"""Telegram hardening: edits are not answered twice, a bare mention gets the hint, placeholders, ports, start-up."""

import asyncio
import logging
import time

import pytest
from telegram import Update

from bot import presenter
from bot.telegram import _check, build_application
from bot.telegram.config import TelegramSettings, telegram_settings
from core import ConfigError, KnowledgeBase, Pipeline, Settings
from core.fakes import WordEmbedder
from tests.bot.telegram.conftest import TOKEN, group_message, mention_entities, private_message, start, stop


def run(coro):
    return asyncio.run(coro)


async def process(application, *updates):
    """Each update through the real Application's handlers, one after another, each to completion."""
    for update in updates:
        await application.process_update(Update.de_json(update, application.bot))


def replies(bot_api):
    return [s.body for s in bot_api.calls("sendMessage")]


# --- item 11: an edited question is not answered a second time --------------------------------


def edited(update):
    message = {**update["message"], "edit_date": int(time.time()), "text": "how much is a beech worktop?"}
    return {"update_id": update["update_id"] + 100_000, "edited_message": message}


def test_an_edited_question_gets_no_second_answer(make_application, bot_api):
    question = private_message("how much is a walnut worktop?")
    cmd = {"type": "bot_command", "offset": 0, "length": 4}
    asked = private_message("/ask how much is a walnut worktop?", entities=[cmd])

    async def scenario():
        application = make_application()
        await start(application)
        try:
            await process(application, question, asked)
            before = len(replies(bot_api))
            await process(application, edited(question), edited(asked))
            return before
        finally:
            await stop(application)

    before = run(scenario())
    assert before == 2
    assert len(replies(bot_api)) == 2, "an edit was answered again"


# --- item 12: a group message that only mentions the bot ----------------------------------------


def test_a_bare_mention_gets_the_usage_hint_and_costs_no_rate_slot(make_application, bot_api):
    bare = group_message("@verbatim_test_bot", entities=mention_entities("@verbatim_test_bot"))
    text = "@verbatim_test_bot how much is a walnut worktop?"
    real = group_message(text, entities=mention_entities(text))

    async def scenario():
        application = make_application(questions_per_minute=1)
        await start(application)
        try:
            await process(application, bare, real)
        finally:
            await stop(application)

    run(scenario())
    hint, answer = replies(bot_api)
    assert hint["text"] == presenter.Voice("our company", "", ()).mention_hint("@verbatim_test_bot")
    assert "520 EUR" in answer["text"], "the bare mention spent the only rate-limit slot"


# --- item 14: placeholders ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "token", ["123456:ABC-DEF1234ghIkl-zyx57W2v1u123ew11", "110201543:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw", "<token>"]
)
def test_the_documentation_tokens_are_refused_as_placeholders(token):
    with pytest.raises(ConfigError, match=r"^TELEGRAM_BOT_TOKEN is still a placeholder"):
        telegram_settings({"TELEGRAM_BOT_TOKEN": token})


def test_an_empty_token_names_the_variable():
    with pytest.raises(ConfigError, match=r"^TELEGRAM_BOT_TOKEN is not set"):
        telegram_settings({"TELEGRAM_BOT_TOKEN": "  "})


# --- item 18: its own port, quiet start-up, a warning for an empty public folder ----------------


def test_telegram_port_overrides_the_shared_port():
    assert telegram_settings({"TELEGRAM_BOT_TOKEN": TOKEN}).port == 8443
    assert telegram_settings({"TELEGRAM_BOT_TOKEN": TOKEN, "PORT": "3000"}).port == 3000
    both = {"TELEGRAM_BOT_TOKEN": TOKEN, "PORT": "3000", "TELEGRAM_PORT": "8443"}
    assert telegram_settings(both).port == 8443
    with pytest.raises(ConfigError, match=r"^TELEGRAM_PORT must be a port number"):
        telegram_settings({"TELEGRAM_BOT_TOKEN": TOKEN, "TELEGRAM_PORT": "99999"})


def test_signing_in_is_logged_at_info(make_application, caplog):
    with caplog.at_level(logging.DEBUG):
        run(_check(make_application()))
    lines = [r for r in caplog.records if "signed in as" in r.getMessage()]
    assert [r.levelno for r in lines] == [logging.INFO]


def test_a_folder_without_public_documents_is_warned_about(tmp_path, write_kb, bot_api, caplog):
    folder = write_kb({"staff.md": "---\naudience: internal\n---\n# Staff\n\nDiscounts need approval.\n"})
    settings = Settings(knowledge_dir=folder, data_dir=tmp_path / "data")
    kb = KnowledgeBase(settings, WordEmbedder())
    kb.sync()
    with caplog.at_level(logging.INFO):
        build_application(TelegramSettings(TOKEN, api_base_url=bot_api.base_url), Pipeline(settings, kb))
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING and "no public document" in r.getMessage()]
    assert len(warnings) == 1
    caplog.clear()
    with caplog.at_level(logging.INFO):
        internal = TelegramSettings(TOKEN, api_base_url=bot_api.base_url, audience="internal")
        build_application(internal, Pipeline(settings, kb))
    assert not [r for r in caplog.records if "no internal document" in r.getMessage()]
