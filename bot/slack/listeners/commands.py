"""`/ask question`: answered only to the asker, with a button to post the answer to the channel."""

from __future__ import annotations

import logging
from typing import Any

from slack_bolt import Ack, App
from slack_sdk import WebClient

from bot import presenter
from bot.slack import render
from bot.slack.listeners.common import SURFACE, Deps
from bot.slack.listeners.messages import question_text
from core import StoreUnavailable, VerbatimError, clean_question

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
    try:
        question = clean_question(text)
    except VerbatimError as exc:  # only the question's own faults are the asker's to mend
        client.chat_postEphemeral(channel=channel, user=user, text=presenter.invalid_question(exc))
        return
    try:
        answer = deps.pipeline.ask(question, deps.scope_for(channel), SURFACE)
        actions = [render.share_actions(answer.id)] if presenter.present(answer).feedback else []
        for message in render.messages(answer, actions):
            client.chat_postEphemeral(channel=channel, user=user, blocks=message.blocks, text=message.text)
    except StoreUnavailable as exc:
        log.warning("/ask was not answered: %s", exc)
        client.chat_postEphemeral(channel=channel, user=user, text=f"⚠️ {presenter.UNAVAILABLE}")
    except Exception:
        log.exception("answering /ask failed")
        client.chat_postEphemeral(channel=channel, user=user, text=f"⚠️ {presenter.APOLOGY}")


def _replayed(command: dict[str, Any], deps: Deps) -> bool:
    """A signed /ask sent again within the signature's 5-minute window carries the same trigger_id."""
    trigger = command.get("trigger_id")
    if not trigger:
        return False
    try:
        return not deps.pipeline.store.state.first_time(f"slack-command:{trigger}", ttl=900.0)
    except StoreUnavailable:
        return False  # answering a replay twice costs less than not answering the asker at all


def register(app: App, deps: Deps) -> None:
    app.command("/ask")(ack=ack_command, lazy=[on_command])
