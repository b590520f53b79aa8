"""Telegram handlers: an edited question is not answered again; a bare mention gets the usage hint and costs no slot;
a question on a full disk gets the apology and the operator one log line."""

import asyncio
import logging
import time

import pytest
from telegram import Update

from bot import presenter
from tests.bot.telegram.conftest import group_message, mention_entities, private_message, start, stop
from tests.fakes import FullDiskConnection


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


def full_disk_now(store, monkeypatch):
    """The disk fills up under the running bot: the question's rate-limit slot is the first write to fail."""
    monkeypatch.setattr(store.runlog, "db", FullDiskConnection(store.runlog.db))


def full_disk_at_the_log_row(store, monkeypatch):
    """The disk fills between the question's rate-limit slot and its answer's log row."""
    runlog = store.runlog
    record = runlog.record

    def record_on_a_full_disk(*args, **kwargs):
        runlog.db = FullDiskConnection(runlog.db)
        return record(*args, **kwargs)

    monkeypatch.setattr(runlog, "record", record_on_a_full_disk)


@pytest.mark.parametrize("fill", [full_disk_now, full_disk_at_the_log_row])
def test_a_question_on_a_full_disk_gets_the_apology_and_one_log_line(
    make_application, bot_api, pipeline, caplog, monkeypatch, fill
):
    async def scenario():
        application = make_application()
        await start(application)
        try:
            fill(pipeline.store, monkeypatch)
            await process(application, private_message("how much is a walnut worktop?"))
        finally:
            await stop(application)

    with caplog.at_level(logging.INFO):
        run(scenario())
    [told] = replies(bot_api)
    assert told["text"] == f"⚠️ {presenter.APOLOGY}"
    [logged] = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert "the disk is full" in logged.getMessage()
    assert logged.exc_info is None, "no traceback: core's sentence says it all, once per question"
