"""`/ask question`: answered only to the asker, with a button to post the answer to the channel."""

from __future__ import annotations

import logging
from typing import Any

from slack_bolt import Ack, App
from slack_sdk import WebClient

from bot.asking import Notice, Reply
from bot.slack import render
from bot.slack.listeners.common import Deps, answer_with
from bot.slack.listeners.messages import question_text
from core import StoreUnavailable

log = logging.getLogger(__name__)


def ack_command(ack: Ack, command: dict[str, Any], deps: Deps) -> None:
    if not question_text(command.get("text", "")):
        ack(text=render.escape(deps.voice.command_usage("/ask")))
    else:
        ack()


def on_command(client: WebClient, command: dict[str, Any], deps: Deps) -> None:
    """`/ask question`: answered ephemerally; the answer can be shared with the button."""
    text = question_text(command.get("text", ""))
    if not text:
        return
    channel, user = command["channel_id"], command["user_id"]
    if _replayed(command, deps):
        log.info("skipping a replayed /ask (trigger_id seen before)")
        return

    def say(text: str) -> None:
        client.chat_postEphemeral(channel=channel, user=user, text=text)

    def post(reply: Reply) -> None:
        actions = (
            [render.share_actions(reply.answer.id, reply.shown.catalogue("share.label"))]
            if reply.shown.feedback
            else []
        )
        for message in render.messages(reply.shown, actions):
            client.chat_postEphemeral(channel=channel, user=user, blocks=message.blocks, text=message.text)

    question = deps.asker.admit(text)
    if isinstance(question, Notice):
        return say(question.line)
    answer_with(deps, question, channel, None, say, post)


def _replayed(command: dict[str, Any], deps: Deps) -> bool:
    """A signed /ask sent again within the signature's 5-minute window carries the same trigger_id."""
    trigger = command.get("trigger_id")
    if not trigger:
        return False
    try:
        return not deps.pipeline.state.first_time(f"slack-command:{trigger}", ttl=900.0)
    except StoreUnavailable:
        return False  # answering a replay twice costs less than not answering the asker at all


def register(app: App, deps: Deps) -> None:
    app.command("/ask")(ack=ack_command, lazy=[on_command])
