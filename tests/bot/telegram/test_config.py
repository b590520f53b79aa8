"""Telegram settings: placeholder and empty tokens are refused by name; TELEGRAM_PORT overrides the shared PORT."""

import pytest

from bot.telegram.config import telegram_settings
from core import ConfigError
from tests.bot.telegram.conftest import TOKEN


@pytest.mark.parametrize(
    "token", ["123456:ABC-DEF1234ghIkl-zyx57W2v1u123ew11", "110201543:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw", "<token>"]
)
def test_the_documentation_tokens_are_refused_as_placeholders(token):
    with pytest.raises(ConfigError, match=r"^TELEGRAM_BOT_TOKEN is still a placeholder"):
        telegram_settings({"TELEGRAM_BOT_TOKEN": token})


def test_an_empty_token_names_the_variable():
    with pytest.raises(ConfigError, match=r"^TELEGRAM_BOT_TOKEN is not set"):
        telegram_settings({"TELEGRAM_BOT_TOKEN": "  "})


def test_telegram_port_overrides_the_shared_port():
    assert telegram_settings({"TELEGRAM_BOT_TOKEN": TOKEN}).port == 8443
    assert telegram_settings({"TELEGRAM_BOT_TOKEN": TOKEN, "PORT": "3000"}).port == 3000
    both = {"TELEGRAM_BOT_TOKEN": TOKEN, "PORT": "3000", "TELEGRAM_PORT": "8443"}
    assert telegram_settings(both).port == 8443
    with pytest.raises(ConfigError, match=r"^TELEGRAM_PORT must be a port number"):
        telegram_settings({"TELEGRAM_BOT_TOKEN": TOKEN, "TELEGRAM_PORT": "99999"})
