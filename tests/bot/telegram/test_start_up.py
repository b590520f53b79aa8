"""Telegram start-up: signing in is logged at INFO; a folder with nothing for the audience is warned about."""

import asyncio
import logging

from bot.telegram import _check, build_application
from bot.telegram.config import TelegramSettings
from core import KnowledgeBase, Pipeline, Settings
from core.measuring.fakes import WordEmbedder
from tests.bot.telegram.conftest import TOKEN


def run(coro):
    return asyncio.run(coro)


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
