"""Telegram on a shared PostgreSQL that goes down and comes back: one sentence, then answers again."""

from __future__ import annotations

import asyncio

import pytest

from bot import presenter
from bot.telegram import build_application
from bot.telegram.config import TelegramSettings
from core import KnowledgeBase, Pipeline, Settings
from tests.bot.telegram.conftest import TOKEN, polling, private_message, stop
from tests.fakes import FakeEmbedder

PRICES = "---\ntitle: Prices\naudience: public\n---\n## Fronts\n\nOak fronts cost 185 EUR per m².\n"


@pytest.fixture(autouse=True)
def _short_waits(monkeypatch):
    """The first use after a crash waits this long for the pool (10 s in production); the tests wait less."""
    monkeypatch.setattr("core.store.postgres.CONNECTION_WAIT", 2.0)


def test_a_question_while_the_database_is_down_gets_one_sentence_and_the_next_is_answered(
    outage, tmp_path, write_kb, bot_api
):
    kb = write_kb({"prices.md": PRICES})
    settings = Settings(knowledge_dir=kb, data_dir=tmp_path / "unused", database_url=outage.url, resync_seconds=0)
    pipeline = Pipeline(settings, KnowledgeBase(settings, FakeEmbedder()))
    pipeline.knowledge.sync()
    application = build_application(TelegramSettings(TOKEN, api_base_url=bot_api.base_url), pipeline)

    async def scenario() -> list[str]:
        outage.stop()
        await polling(application, bot_api, [[private_message("How much are oak fronts?")]])
        try:
            await bot_api.wait_for("sendMessage")
            outage.start()
            bot_api.updates.append([private_message("How much are oak fronts?")])
            sent = await bot_api.wait_for("sendMessage", 2)
        finally:
            await stop(application)
        return [s.body["text"] for s in sent]

    try:
        told, answered = asyncio.run(scenario())
        assert told == f"⚠️ {presenter.UNAVAILABLE}"
        assert "185 EUR" in answered
        assert len(bot_api.calls("sendMessage")) == 2
        assert [e.question for e in pipeline.runlog.tail(10)] == ["How much are oak fronts?"], "logged once"
    finally:
        pipeline.close()
