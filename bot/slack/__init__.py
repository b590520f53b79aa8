"""The Slack surface: staff ask in channels (by mention), in direct messages, or with /ask."""

from __future__ import annotations

import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Callable

from slack_bolt import App
from slack_bolt.error import BoltError
from slack_bolt.lazy_listener import ThreadLazyListenerRunner
from slack_sdk import WebClient

from bot.asking import Asker
from bot.presenter import Voice, main_language
from bot.presenter.catalogue import speaking
from bot.slack.config import SlackSettings, slack_settings
from bot.slack.drain import CountingExecutor, InFlight
from bot.slack.listeners import Deps, register
from bot.slack.listeners.common import SURFACE
from bot.slack.lull import Lull
from bot.slack.server import start_http_server
from core import SCOPES, ConfigError, Pipeline, VerbatimError

__all__ = ["SlackSettings", "build_app", "serve", "slack_settings", "start_http_server"]

log = logging.getLogger(__name__)

ACK_WORKERS = 5  # Bolt's own default; an ack function is quick (a usage line, a permission check)
ANSWER_WORKERS = 5  # answers at once: an LLM answer mostly waits on the model server


class _SameTokenNotice(logging.Filter):
    """Bolt warns that SLACK_BOT_TOKEN goes unused when a client is given; the client carries that token."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "`token` will be unused" not in record.getMessage()


logging.getLogger("slack_bolt.App").addFilter(_SameTokenNotice())


def build_app(
    settings: SlackSettings, pipeline: Pipeline, in_flight: InFlight | None = None, lull: Lull | None = None
) -> App:
    """A Bolt app wired to the pipeline; checks the bot token with auth.test at start-up.

    `in_flight` counts what the app has under way, for a shutdown to wait for (bot/slack/drain.py);
    `lull` is what its answers wait for before they start (bot/slack/lull.py).
    """
    in_flight = in_flight or InFlight()
    lull = lull or Lull()
    client = WebClient(token=settings.bot_token, base_url=settings.api_url or WebClient.BASE_URL)
    try:
        app = App(
            client=client,
            signing_secret=settings.signing_secret or None,
            # Socket Mode requests come over an authenticated websocket; nothing to sign.
            request_verification_enabled=settings.mode == "http",
            process_before_response=False,
            listener_executor=CountingExecutor(in_flight, ACK_WORKERS, "slack-ack"),
        )
    except BoltError as exc:
        raise ConfigError(f"Slack rejected SLACK_BOT_TOKEN ({exc}).") from exc
    except OSError as exc:  # urllib's URLError and socket errors: Slack is out of reach
        raise VerbatimError(f"Could not reach Slack at {client.base_url} to check SLACK_BOT_TOKEN ({exc}).") from exc
    topics = tuple(pipeline.titles(SCOPES["internal"]))
    voice = Voice(settings.company, settings.example_question, topics, main_language(pipeline) or "en")
    # Bolt runs ack functions and lazy listeners on one executor: a command's ack would queue behind answers
    # under way. Answers get an executor of their own, and start only in a lull between acknowledgements.
    answers = CountingExecutor(in_flight, ANSWER_WORKERS, "slack-answer", lull=lull)
    app.listener_runner.lazy_listener_runner = ThreadLazyListenerRunner(logger=app.logger, executor=answers)
    register(app, Deps(pipeline, settings, voice, Asker(pipeline, SURFACE), in_flight, lull))
    return app


def serve(settings: SlackSettings, pipeline: Pipeline) -> None:
    """Run until SIGTERM or SIGINT: Socket Mode by default, or the HTTP Events API on $SLACK_PORT (or $PORT);
    then take no new events, finish the answers under way within the grace period, and return."""
    in_flight = InFlight()
    app = build_app(settings, pipeline, in_flight)
    if settings.digest_channel:
        from bot.slack import digest

        digest.start(app.client, pipeline, settings.digest_channel)
    stopping = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stopping.set())
    stop = _start_http(app, settings) if settings.mode == "http" else _start_socket_mode(app, settings)
    while not stopping.wait(1.0):
        pass
    log.info("Slack: stopping; finishing the answers under way (at most %g s)", settings.shutdown_grace)
    in_flight.closed = True  # an event that arrives from now on is refused, so Slack sends it again
    signalled = time.monotonic()
    stop()  # Socket Mode's close takes about 3 s of the grace period: the platform's kill timer is already running
    left = max(0.0, settings.shutdown_grace - (time.monotonic() - signalled))
    given_up = in_flight.close(left, f"⚠️ {speaking(main_language(pipeline))('error.restarting')}")
    if given_up:
        log.warning("Slack: %d answer(s) could not finish in time; their askers were told", given_up)
        # The threads still waiting on those answers (a model server, say) would hold up the interpreter's exit.
        logging.shutdown()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)
    log.info("Slack: stopped")


def _start_http(app: App, settings: SlackSettings) -> Callable[[], None]:
    """Listen on every interface; the returned function stops listening and returns once no request is taken."""
    stopped = threading.Event()
    _, stop = start_http_server(app, settings.port, host="", stopped=stopped)

    def halt() -> None:
        stop.set()
        stopped.wait(10)

    return halt


def _start_socket_mode(app: App, settings: SlackSettings) -> Callable[[], None]:
    from slack_bolt.adapter.socket_mode import SocketModeHandler

    log.info("Slack Socket Mode: connecting")
    handler = SocketModeHandler(app, settings.app_token)
    handler.connect()
    return handler.close
