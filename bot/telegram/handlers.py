"""Telegram handlers: private questions, group mentions and replies, /ask, /start, /help, feedback."""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections import OrderedDict, deque
from dataclasses import dataclass, field

from telegram import InlineKeyboardButton, InlineKeyboardMarkup, Message, MessageEntity, Update
from telegram.constants import ChatAction, ChatType, ParseMode
from telegram.error import TelegramError
from telegram.ext import ContextTypes

from bot.telegram import render
from bot.telegram.config import TelegramSettings
from core.errors import VerbatimError
from core.knowledge import SCOPES
from core.pipeline import Pipeline, clean_question

log = logging.getLogger(__name__)

SURFACE = "telegram"
START_TEXT = (
    "Hello! I answer questions about {company} from its own documents: prices, delivery, "
    "warranty, care, payment and more.\n\n"
    "Every answer quotes the documents word for word, with the document and section it comes from. "
    "When the documents don't cover a question, I say so instead of guessing.\n\n"
    "Just write your question. Reply to one of my answers to ask a follow-up. "
    "In groups, mention me or use /ask."
)
HELP_TEXT = (
    "Write a question, for example: <i>How much is delivery 30 km away?</i>\n\n"
    "• Reply to my answer to ask a follow-up about it.\n"
    "• In groups: mention me, reply to me, or use <code>/ask your question</code>.\n"
    "• 👍 / 👎 under an answer tells us whether it helped.\n"
    "• Quotes are copied from the documents; 📄 shows where each one comes from."
)


class RateLimiter:
    """At most `limit` questions per user per 60 seconds (a sliding window)."""

    def __init__(self, limit: int, window: float = 60.0) -> None:
        self.limit, self.window = limit, window
        self._times: dict[int, deque[float]] = {}
        self._next_sweep = 0.0

    def allow(self, user: int) -> float:
        """0 when the question may go ahead, else the seconds until it may."""
        now = time.monotonic()
        if now >= self._next_sweep:  # forget users quiet for a whole window, so memory stays bounded
            self._times = {u: t for u, t in self._times.items() if t and t[-1] > now - self.window}
            self._next_sweep = now + self.window
        times = self._times.setdefault(user, deque())
        while times and times[0] <= now - self.window:
            times.popleft()
        if len(times) >= self.limit:
            return self.window - (now - times[0])
        times.append(now)
        return 0.0


@dataclass
class Conversations:
    """Which conversation each of the bot's answers belongs to, so a reply continues it."""

    size: int = 50_000
    _by_message: OrderedDict[tuple[int, int], str] = field(default_factory=OrderedDict)

    def of_reply(self, message: Message) -> str | None:
        replied = message.reply_to_message
        if replied is None:
            return None
        return self._by_message.get((message.chat_id, replied.message_id))

    def remember(self, chat_id: int, message_id: int, conversation: str) -> None:
        self._by_message[(chat_id, message_id)] = conversation
        while len(self._by_message) > self.size:
            self._by_message.popitem(last=False)


class Handlers:
    """Everything the Telegram bot does; one instance per Application."""

    def __init__(self, pipeline: Pipeline, settings: TelegramSettings) -> None:
        self.pipeline = pipeline
        self.settings = settings
        self.company = settings.company
        self.scope = SCOPES[settings.audience]
        self.limiter = RateLimiter(settings.questions_per_minute)
        self.conversations = Conversations()

    async def start(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """/start: what the bot answers and how."""
        if update.effective_message:
            await update.effective_message.reply_text(START_TEXT.format(company=self.company))

    async def help(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """/help: how to ask."""
        if update.effective_message:
            await update.effective_message.reply_text(HELP_TEXT, parse_mode=ParseMode.HTML)

    async def ask_command(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """/ask question, in any chat."""
        message = update.effective_message
        if message is None:
            return
        text = " ".join(context.args or [])
        if not text.strip():
            await message.reply_text("Write your question after the command, e.g. /ask how long is the warranty?")
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
        await self._answer(message, text, context)

    async def feedback(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """👍 / 👎 buttons: recorded in the run log against the answer's id."""
        query = update.callback_query
        if query is None or not query.data:
            return
        _, value, answer_id = ([*query.data.split(":", 2), "", ""])[:3]
        user = str(query.from_user.id) if query.from_user else None
        recorded = value in ("up", "down") and await asyncio.to_thread(
            self.pipeline.feedback, answer_id, value, SURFACE, user
        )
        await query.answer("Thanks for the feedback!" if recorded else "That answer is no longer in the log.")

    async def error(self, update: object, context: ContextTypes.DEFAULT_TYPE) -> None:
        """Log first, then tell the user briefly; the bot keeps running."""
        log.error("a Telegram update failed", exc_info=context.error)
        if isinstance(update, Update) and update.effective_message:
            try:
                await update.effective_message.reply_text(f"⚠️ {render.APOLOGY}")
            except TelegramError:
                log.warning("could not tell the user about the error either")

    async def _answer(self, message: Message, text: str, context: ContextTypes.DEFAULT_TYPE) -> None:
        user = message.from_user.id if message.from_user else message.chat_id
        wait = self.limiter.allow(user)
        if wait:
            await message.reply_text(
                f"You're asking faster than I can keep up with. Please wait {int(wait) + 1} seconds and try again."
            )
            return
        try:
            question = clean_question(text)
        except VerbatimError as exc:
            await message.reply_text(str(exc) + " Please ask a shorter question.")
            return
        conversation = self.conversations.of_reply(message) or f"telegram:{message.chat_id}:{message.message_id}"
        await context.bot.send_chat_action(
            message.chat_id,
            ChatAction.TYPING,
            message_thread_id=message.message_thread_id if message.is_topic_message else None,
        )
        answer = await asyncio.to_thread(self.pipeline.ask, question, self.scope, SURFACE, conversation)
        parts = render.messages(answer)
        keyboard = None
        if answer.reason != "error":
            keyboard = InlineKeyboardMarkup(
                [
                    [
                        InlineKeyboardButton("👍", callback_data=f"fb:up:{answer.id}"),
                        InlineKeyboardButton("👎", callback_data=f"fb:down:{answer.id}"),
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
            self.conversations.remember(sent.chat_id, sent.message_id, conversation)
