"""Slack settings: placeholder tokens are refused in one sentence; SLACK_PORT overrides the shared PORT."""

import pytest

from bot.slack.config import slack_settings
from core import ConfigError


@pytest.mark.parametrize(
    ("env", "variable"),
    [
        ({"SLACK_BOT_TOKEN": "xoxb-", "SLACK_APP_TOKEN": "xapp-1-A1-2-abc"}, "SLACK_BOT_TOKEN"),
        ({"SLACK_BOT_TOKEN": "xoxb-…", "SLACK_APP_TOKEN": "xapp-1-A1-2-abc"}, "SLACK_BOT_TOKEN"),
        ({"SLACK_BOT_TOKEN": "xoxb-1-2-abc", "SLACK_APP_TOKEN": "xapp-"}, "SLACK_APP_TOKEN"),
    ],
)
def test_placeholder_tokens_are_refused_in_one_sentence_naming_the_variable(env, variable):
    with pytest.raises(ConfigError) as error:
        slack_settings(env)
    message = str(error.value)
    assert message.startswith(f"{variable} is still the") and message.count(". ") == 0 and "\n" not in message


def test_slack_port_overrides_the_shared_port():
    base = {"SLACK_BOT_TOKEN": "xoxb-1-2-abc", "SLACK_MODE": "http", "SLACK_SIGNING_SECRET": "s"}
    assert slack_settings(base).port == 3000
    assert slack_settings({**base, "PORT": "5000"}).port == 5000
    assert slack_settings({**base, "PORT": "5000", "SLACK_PORT": "5100"}).port == 5100
    with pytest.raises(ConfigError, match=r"^SLACK_PORT must be a port number"):
        slack_settings({**base, "SLACK_PORT": "http"})


def test_the_shutdown_grace_is_read_in_seconds_and_a_bad_value_is_one_sentence():
    base = {"SLACK_BOT_TOKEN": "xoxb-1-2-abc", "SLACK_MODE": "http", "SLACK_SIGNING_SECRET": "s"}
    assert slack_settings(base).shutdown_grace == 8.0
    assert slack_settings({**base, "VERBATIM_SHUTDOWN_GRACE": "25"}).shutdown_grace == 25.0
    for bad in ("soon", "-1", "7200"):
        with pytest.raises(ConfigError, match=r"^VERBATIM_SHUTDOWN_GRACE must be"):
            slack_settings({**base, "VERBATIM_SHUTDOWN_GRACE": bad})
