"""The Slack surface: staff ask in channels (by mention), in direct messages, or with /ask."""

from __future__ import annotations

import logging
import threading
from typing import Any

from slack_bolt import App
from slack_bolt.error import BoltError
from slack_sdk import WebClient

from bot.presenter import Voice
from bot.slack.config import SlackSettings, slack_settings
from bot.slack.listeners import Deps, register
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
    register(app, Deps(pipeline, settings, Voice.from_env(pipeline.knowledge.titles(SCOPES["internal"]))))
    return app


def _tornado_app(app: App) -> Any:
    import tornado.web
    from slack_bolt.adapter.tornado import SlackEventsHandler

    class Health(tornado.web.RequestHandler):
        def get(self) -> None:
            self.write({"ok": True})

    return tornado.web.Application([("/slack/events", SlackEventsHandler, {"app": app}), ("/healthz", Health)])


def start_http_server(app: App, port: int, host: str = "0.0.0.0") -> tuple[int, threading.Event]:
    """Serve /slack/events in a background thread; returns the bound port and an event that stops it."""
    import asyncio

    import tornado.httpserver
    import tornado.netutil

    ready = threading.Event()
    stop = threading.Event()
    bound: list[int] = []

    def run() -> None:
        async def main() -> None:
            server = tornado.httpserver.HTTPServer(_tornado_app(app))
            sockets = tornado.netutil.bind_sockets(port, host)
            server.add_sockets(sockets)
            bound.append(sockets[0].getsockname()[1])
            ready.set()
            while not stop.is_set():
                await asyncio.sleep(0.05)
            server.stop()

        asyncio.run(main())

    threading.Thread(target=run, daemon=True, name="slack-http").start()
    ready.wait(10)
    return bound[0], stop


def serve(settings: SlackSettings, pipeline: Pipeline) -> None:
    """Run until interrupted: Socket Mode by default, or the HTTP Events API on $PORT."""
    app = build_app(settings, pipeline)
    if settings.mode == "http":
        import asyncio

        import tornado.httpserver

        async def main() -> None:
            server = tornado.httpserver.HTTPServer(_tornado_app(app))
            server.listen(settings.port)
            log.warning("Slack HTTP mode: listening on port %d at /slack/events", settings.port)
            await asyncio.Event().wait()

        asyncio.run(main())
    else:
        from slack_bolt.adapter.socket_mode import SocketModeHandler

        log.warning("Slack Socket Mode: connecting")
        SocketModeHandler(app, settings.app_token).start()
