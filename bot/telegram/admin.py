"""`/verbatim status | reindex | gaps` in Telegram, for the user ids in TELEGRAM_ADMIN_USERS.

The command is not in the public command list; each admin's own chat with the bot lists it.
Anyone else gets one line saying it is not allowed, and the attempt is logged (user id hashed).
"""

from __future__ import annotations

import asyncio
import logging

from telegram import Bot, BotCommand, BotCommandScopeChat, Update
from telegram.constants import ChatType
from telegram.error import TelegramError
from telegram.ext import ContextTypes

from bot.admin import SUBCOMMANDS, reply, subcommand, user_hash
from bot.asking import split
from bot.presenter import reports
from bot.telegram.config import TelegramSettings
from bot.telegram.render import LIMIT
from core import Pipeline

log = logging.getLogger(__name__)


class Admin:
    """The admin command of one Application."""

    def __init__(self, pipeline: Pipeline, settings: TelegramSettings) -> None:
        self.pipeline = pipeline
        self.admins = settings.admin_users

    async def command(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """/verbatim status | reindex | gaps."""
        message = update.effective_message
        if message is None:
            return
        sub = subcommand(" ".join(context.args or []))
        user = update.effective_user
        if user is None or user.id not in self.admins:
            log.warning(
                "/verbatim %s refused: user %s is not in TELEGRAM_ADMIN_USERS",
                sub or "(none)",
                user_hash(self.pipeline, user.id if user else message.chat_id),
            )
            await message.reply_text(reports.NOT_ALLOWED)
            return
        if message.chat.type != ChatType.PRIVATE:
            # The report names refused questions from every surface (staff DMs too) and internal sections.
            await message.reply_text(reports.ADMIN_PRIVATE_ONLY)
            return
        if sub not in SUBCOMMANDS:
            await message.reply_text(reports.ADMIN_USAGE)
            return
        if sub == "reindex":
            await message.reply_text(reports.REINDEX_STARTED)
        text = await asyncio.to_thread(reply, self.pipeline, sub)
        for part in split(text, LIMIT):
            await message.reply_text(part)

    async def publish(self, bot: Bot, public: list[BotCommand]) -> None:
        """List /verbatim in each admin's private chat only; an admin who never opened one is skipped."""
        listed = [*public, BotCommand(reports.ADMIN_COMMAND.lstrip("/"), reports.ADMIN_COMMAND_DESCRIPTION)]
        for admin in sorted(self.admins):
            try:
                await bot.set_my_commands(listed, scope=BotCommandScopeChat(admin))
            except TelegramError as exc:
                log.info("could not list /verbatim for admin %s: %s", user_hash(self.pipeline, admin), exc)
