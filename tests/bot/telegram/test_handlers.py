"""Telegram handlers: an edited question is not answered again; a bare mention gets the usage hint and costs no slot."""

import asyncio
import time

from telegram import Update

from bot import presenter
from tests.bot.telegram.conftest import group_message, mention_entities, private_message, start, stop


def run(coro):
    return asyncio.run(coro)


async def process(application, *updates):
    """Each update through the real Application's handlers, one after another, each to completion."""
    for update in updates:
        await application.process_update(Update.de_json(update, application.bot))


def replies(bot_api):
    return [s.body for s in bot_api.calls("sendMessage")]


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
