"""Telegram handlers: private questions, group mentions and replies, /ask, /start, /help, feedback."""

from __future__ import annotations

import asyncio
import html
import logging
import re

from telegram import InlineKeyboardButton, InlineKeyboardMarkup, Message, MessageEntity, Update
from telegram.constants import ChatAction, ChatType, ParseMode
from telegram.error import TelegramError
from telegram.ext import ContextTypes

from bot import presenter
from bot.asking import Asker, Notice, Reply, failure
from bot.telegram import render
from bot.telegram.config import TelegramSettings
from core import SCOPES, Pipeline

log = logging.getLogger(__name__)

SURFACE = "telegram"


class Handlers:
    """Everything the Telegram bot does; one instance per Application."""

    def __init__(self, pipeline: Pipeline, settings: TelegramSettings) -> None:
        self.pipeline = pipeline
        self.settings = settings
        self.scope = SCOPES[settings.audience]
        # Reply chains and rate limits live in the store: they survive a restart and are shared by replicas.
        self.state = pipeline.state
        self.asker = Asker(pipeline, SURFACE, settings.questions_per_minute)
        self.voice = presenter.Voice(
            settings.company,
            settings.example_question,
            tuple(pipeline.titles(self.scope)),
            presenter.main_language(pipeline) or "en",
        )

    def voice_for(self, update: Update) -> presenter.Voice:
        """The help texts in the user's own Telegram language when a catalogue speaks it, else the documents'."""
        user = update.effective_user
        return self.voice.in_language(user.language_code if user else None)

    async def start(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """/start: what the bot answers and how."""
        if update.effective_message:
            await update.effective_message.reply_text(self.voice_for(update).start)

    async def help(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """/help: how to ask."""
        if update.effective_message:
            await update.effective_message.reply_text(help_text(self.voice_for(update)), parse_mode=ParseMode.HTML)

    async def ask_command(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """/ask question, in any chat."""
        message = update.effective_message
        if message is None:
            return
        text = " ".join(context.args or [])
        if not text.strip():
            await message.reply_text(self.voice_for(update).command_usage("/ask"))
            return
        await self._answer(message, text, context)

    async def text(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """A text message: always a question in private; in groups only when meant for the bot."""
        message = update.effective_message
        if message is None or not message.text:
            return
        if message.chat.type == ChatType.PRIVATE:
            await self._answer(message, message.text, context)
            return
        username = context.bot.username
        mentioned = any(
            message.parse_entity(e).lower() == f"@{username}".lower()
            for e in message.entities
            if e.type == MessageEntity.MENTION
        )
        replied = message.reply_to_message
        to_bot = replied is not None and replied.from_user is not None and replied.from_user.id == context.bot.id
        if not (mentioned or to_bot):
            return  # group chatter is not for us
        text = (
            re.sub(rf"@{re.escape(username)}\b", " ", message.text, flags=re.IGNORECASE) if username else message.text
        )
        if not text.strip():  # only the mention: say how to ask; no question, so no rate-limit slot
            await message.reply_text(self.voice_for(update).mention_hint(f"@{username}"))
            return
        await self._answer(message, text, context)

    async def feedback(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """👍 / 👎 buttons: recorded in the run log against the answer's id."""
        query = update.callback_query
        if query is None or not query.data:
            return
        _, value, answer_id = ([*query.data.split(":", 2), "", ""])[:3]
        catalogue = self.voice_for(update).catalogue
        if value == "done":  # the button that replaced them: the vote is in already
            await query.answer(catalogue("feedback.thanks"))
            return
        user = str(query.from_user.id) if query.from_user else None
        recorded = value in ("up", "down") and await asyncio.to_thread(
            self.pipeline.feedback, answer_id, value, SURFACE, user
        )
        await query.answer(catalogue("feedback.thanks") if recorded else catalogue("feedback.unknown"))
        if recorded and query.message is not None:
            # The buttons give way to the vote, so the chat shows it was counted (the toast is gone in seconds).
            counted = InlineKeyboardButton(
                f"{'👍' if value == 'up' else '👎'} {catalogue('feedback.counted')}",
                callback_data=f"fb:done:{answer_id}",
            )
            try:
                await query.edit_message_reply_markup(InlineKeyboardMarkup([[counted]]))
            except TelegramError as exc:  # too old to edit, or edited already: the vote is recorded all the same
                log.info("the feedback buttons could not be replaced: %s", exc)

    async def error(self, update: object, context: ContextTypes.DEFAULT_TYPE) -> None:
        """Log first, then tell the user briefly; the bot keeps running."""
        notice = failure(context.error, "a Telegram update")
        if isinstance(update, Update) and update.effective_message:
            try:
                await update.effective_message.reply_text(notice.line)
            except TelegramError:
                log.warning("could not tell the user about the error either")

    async def _answer(self, message: Message, text: str, context: ContextTypes.DEFAULT_TYPE) -> None:
        user = message.from_user.id if message.from_user else message.chat_id
        question = await asyncio.to_thread(self.asker.admit, text, str(user))
        if isinstance(question, Notice):
            await message.reply_text(question.line)
            return
        replied = message.reply_to_message
        linked = None
        if replied is not None:
            linked = await asyncio.to_thread(self.state.linked, _message_key(message.chat_id, replied.message_id))
        # Opaque from the start: the conversation key itself carries no chat or message id.
        conversation = linked or self.state.hashed(f"telegram:{message.chat_id}:{message.message_id}")
        await context.bot.send_chat_action(
            message.chat_id,
            ChatAction.TYPING,
            message_thread_id=message.message_thread_id if message.is_topic_message else None,
        )
        reply = await asyncio.to_thread(self.asker.reply, question, self.scope, conversation)
        if isinstance(reply, Notice):
            await message.reply_text(reply.line)
            return
        await self._send(message, reply, conversation)

    async def _send(self, message: Message, reply: Reply, conversation: str) -> None:
        """The answer as one or more replies, 👍 / 👎 under the last; each reply continues the conversation."""
        parts = render.messages(reply.shown)
        keyboard = None
        if reply.shown.feedback:
            keyboard = InlineKeyboardMarkup(
                [
                    [
                        InlineKeyboardButton("👍", callback_data=f"fb:up:{reply.answer.id}"),
                        InlineKeyboardButton("👎", callback_data=f"fb:down:{reply.answer.id}"),
                    ]
                ]
            )
        for i, part in enumerate(parts):
            last = i == len(parts) - 1
            sent = await message.reply_text(
                part,
                parse_mode=ParseMode.HTML,
                do_quote=i == 0,
                reply_markup=keyboard if last else None,
                disable_web_page_preview=True,
            )
            await asyncio.to_thread(self.state.link, _message_key(sent.chat_id, sent.message_id), conversation)


def _message_key(chat_id: int, message_id: int) -> str:
    return f"telegram-message:{chat_id}:{message_id}"


def help_text(voice: presenter.Voice) -> str:
    """/help as Telegram HTML."""
    usage = f"<code>{html.escape(voice.ask_usage)}</code>"
    tips = "\n".join(html.escape(tip).replace("{ask}", usage) for tip in voice.tips)
    return "\n\n".join([*(html.escape(line) for line in voice.help_lines()), tips])
