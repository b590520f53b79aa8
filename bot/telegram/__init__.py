"""The Telegram surface: customers message a bot (python-telegram-bot v22, asyncio)."""

from __future__ import annotations

import asyncio
import logging

from telegram import BotCommand, Update
from telegram.error import InvalidToken, NetworkError
from telegram.ext import (
    AIORateLimiter,
    Application,
    CallbackQueryHandler,
    CommandHandler,
    MessageHandler,
    filters,
)

from bot.presenter.catalogue import ENGLISH, Catalogue, languages, speaking
from bot.telegram.admin import Admin
from bot.telegram.config import TelegramSettings, telegram_settings
from bot.telegram.handlers import Handlers
from bot.telegram.webhook import serve_webhook
from core import ConfigError, Pipeline, VerbatimError

__all__ = ["TelegramSettings", "build_application", "serve", "telegram_settings"]

log = logging.getLogger(__name__)


class _NoBodies(logging.Filter):
    """python-telegram-bot logs a whole update (the user's message and ids) when one can't be parsed, at
    CRITICAL, and every webhook body at DEBUG: the record keeps its words, not the data."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = str(record.msg)
        if "Received data was" in message or "received data" in message.lower():
            record.msg = message.split(":", 1)[0] + " (the update's content is not logged)"
            record.args = ()
        return True


def quiet_library_logs() -> None:
    """Keep message bodies out of the library's own log records (idempotent)."""
    updater = logging.getLogger("telegram.ext.Updater")
    if not any(isinstance(f, _NoBodies) for f in updater.filters):
        updater.addFilter(_NoBodies())


def commands(catalogue: Catalogue = ENGLISH) -> list[BotCommand]:
    """The command menu, described in one catalogue's language."""
    return [BotCommand(name, catalogue(f"commands.{name}")) for name in ("ask", "help", "start")]


COMMANDS = commands()


def build_application(settings: TelegramSettings, pipeline: Pipeline) -> Application:
    """One Application with every handler registered; the Bot API base URL comes from settings."""
    # httpx logs every request URL at INFO, and the Bot API carries the bot token in its URLs.
    for noisy in ("httpx", "httpcore"):
        logging.getLogger(noisy).setLevel(max(logging.WARNING, logging.getLogger(noisy).level))
    builder = (
        Application.builder()
        .token(settings.token)
        # Telegram's flood control: wait out RetryAfter and keep within its per-chat limits.
        .rate_limiter(AIORateLimiter(max_retries=3))
        .concurrent_updates(16)
    )
    if settings.api_base_url:
        base = settings.api_base_url.rstrip("/")
        builder = builder.base_url(base).base_file_url(base.removesuffix("/bot") + "/file/bot")

    admin = Admin(pipeline, settings)

    async def post_init(application: Application) -> None:
        await application.bot.set_my_commands(COMMANDS)  # everyone's list: /verbatim is not in it
        for code in languages()[1:]:  # users whose Telegram speaks a catalogue's language read it in theirs
            await application.bot.set_my_commands(commands(speaking(code)), language_code=code)
        await admin.publish(application.bot, COMMANDS)

    quiet_library_logs()
    application = builder.post_init(post_init).build()
    handlers = Handlers(pipeline, settings)
    if not handlers.voice.topics:
        log.warning(
            "Telegram serves the %s audience, but %s holds no %s document: every question will be refused.",
            settings.audience,
            pipeline.settings.knowledge_dir,
            settings.audience,
        )
    # An edited message is never answered again: the first answer stands (see README, "Telegram").
    new = ~filters.UpdateType.EDITED
    application.add_handler(CommandHandler("start", handlers.start, filters=new))
    application.add_handler(CommandHandler("help", handlers.help, filters=new))
    application.add_handler(CommandHandler("ask", handlers.ask_command, filters=new))
    application.add_handler(CommandHandler("verbatim", admin.command, filters=new))
    application.add_handler(MessageHandler(filters.TEXT & ~filters.COMMAND & new, handlers.text))
    application.add_handler(CallbackQueryHandler(handlers.feedback, pattern=r"^fb:"))
    application.add_error_handler(handlers.error)
    return application


def serve(settings: TelegramSettings, pipeline: Pipeline) -> None:
    """Run until interrupted: long polling, or a webhook on $TELEGRAM_PORT (or $PORT) with TELEGRAM_WEBHOOK_URL."""
    application = build_application(settings, pipeline)
    try:
        asyncio.run(_check(application))  # one clear sentence instead of the library's retry log
        _run(application, settings, pipeline)
    except InvalidToken as exc:
        raise ConfigError("Telegram rejected TELEGRAM_BOT_TOKEN: check it with @BotFather.") from exc
    except NetworkError as exc:
        raise VerbatimError(f"Could not reach the Telegram Bot API ({exc.message}).") from exc


async def _check(application: Application) -> None:
    async with application.bot:
        me = await application.bot.get_me()
    log.info("Telegram: signed in as @%s", me.username)


def _run(application: Application, settings: TelegramSettings, pipeline: Pipeline) -> None:
    if settings.webhook_url:
        log.info("Telegram webhook mode: listening on port %d", settings.port)
        # The bot's own server, not run_webhook's: the secret is checked before the body is read, bodies are
        # capped at 1 MB, and a redelivered update_id is answered once (bot/telegram/webhook.py).
        asyncio.run(
            serve_webhook(
                application,
                settings.webhook_url,
                "0.0.0.0",
                settings.port,
                settings.webhook_path,
                settings.webhook_secret,
                pipeline,
            )
        )
    else:
        log.info("Telegram long polling: started")
        application.run_polling(allowed_updates=Update.ALL_TYPES)
