"""The Slack surface: staff ask in channels (by mention), in direct messages, or with /ask."""

from __future__ import annotations

import logging

from slack_bolt import App
from slack_bolt.error import BoltError
from slack_sdk import WebClient

from bot.asking import Asker
from bot.presenter import Voice, main_language
from bot.slack.config import SlackSettings, slack_settings
from bot.slack.listeners import Deps, register
from bot.slack.listeners.common import SURFACE
from bot.slack.server import serve_http, start_http_server
from core import SCOPES, ConfigError, Pipeline, VerbatimError

__all__ = ["SlackSettings", "build_app", "serve", "slack_settings", "start_http_server"]

log = logging.getLogger(__name__)


class _SameTokenNotice(logging.Filter):
    """Bolt warns that SLACK_BOT_TOKEN goes unused when a client is given; the client carries that token."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "`token` will be unused" not in record.getMessage()


logging.getLogger("slack_bolt.App").addFilter(_SameTokenNotice())


def build_app(settings: SlackSettings, pipeline: Pipeline) -> App:
    """A Bolt app wired to the pipeline; checks the bot token with auth.test at start-up."""
    client = WebClient(token=settings.bot_token, base_url=settings.api_url or WebClient.BASE_URL)
    try:
        app = App(
            client=client,
            signing_secret=settings.signing_secret or None,
            # Socket Mode requests come over an authenticated websocket; nothing to sign.
            request_verification_enabled=settings.mode == "http",
            process_before_response=False,
        )
    except BoltError as exc:
        raise ConfigError(f"Slack rejected SLACK_BOT_TOKEN ({exc}).") from exc
    except OSError as exc:  # urllib's URLError and socket errors: Slack is out of reach
        raise VerbatimError(f"Could not reach Slack at {client.base_url} to check SLACK_BOT_TOKEN ({exc}).") from exc
    topics = tuple(pipeline.knowledge.titles(SCOPES["internal"]))
    voice = Voice(settings.company, settings.example_question, topics, main_language(pipeline) or "en")
    register(app, Deps(pipeline, settings, voice, Asker(pipeline, SURFACE)))
    return app


def serve(settings: SlackSettings, pipeline: Pipeline) -> None:
    """Run until interrupted: Socket Mode by default, or the HTTP Events API on $SLACK_PORT (or $PORT)."""
    app = build_app(settings, pipeline)
    if settings.digest_channel:
        from bot.slack import digest

        digest.start(app.client, pipeline, settings.digest_channel)
    if settings.mode == "http":
        serve_http(app, settings.port)
    else:
        from slack_bolt.adapter.socket_mode import SocketModeHandler

        log.info("Slack Socket Mode: connecting")
        SocketModeHandler(app, settings.app_token).start()
