"""Mentions in channels and direct messages: answered in a thread, with the thread as history."""

from __future__ import annotations

import logging
import re
from typing import Any

from slack_bolt import Ack, App
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.asking import Notice, Reply, failure
from bot.presenter.catalogue import Catalogue, speaking
from bot.slack import render
from bot.slack.listeners.common import Deps, answer_with, mark_answered, react, reply, take_event
from core import detect_language

log = logging.getLogger(__name__)

WORKING = "hourglass_flowing_sand"
_MENTION = re.compile(r"<@[A-Z0-9]+(?:\|[^>]*)?>")
_LINK = re.compile(r"<(?:[^|>]+\|)?([^>]+)>")


def question_text(text: str) -> str:
    """The question in a Slack message: mentions dropped, links to their labels, entities decoded."""
    text = _MENTION.sub(" ", text or "")
    text = _LINK.sub(r"\1", text)
    return " ".join(text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&").split())


def ignorable(event: dict[str, Any], context: dict[str, Any]) -> bool:
    """Bots (ourselves included), edits, joins, deletions and every other subtype."""
    return bool(event.get("subtype") or event.get("bot_id") or event.get("user") in (None, context.get("bot_user_id")))


def answer_in_thread(
    deps: Deps,
    client: WebClient,
    event: dict[str, Any],
    thread_ts: str | None,
    conversation: str,
    context: dict[str, Any],
) -> None:
    """Take the event, answer it in its thread under a ⏳, and mark it answered, whatever happens."""
    channel, ts = event["channel"], event["ts"]

    def say(text: str) -> None:
        client.chat_postMessage(channel=channel, thread_ts=thread_ts, text=text)

    def post(answered: Reply) -> None:
        reply(client, channel, thread_ts, render.messages(answered.shown))

    def undo() -> None:  # when a shutdown gives the answer up: no ⏳ left behind, and no second answer later
        react(client, WORKING, channel, ts, add=False)
        mark_answered(deps, context)

    try:
        if not take_event(deps, context):
            return  # another process answers it
    except Exception as exc:  # the store went down, or its disk filled up, since the acknowledgement
        return say(failure(exc, "a Slack event", catalogue_about(event)).line)  # acknowledged: no delivery comes again
    try:
        text = question_text(event.get("text", ""))
        if not text:
            return say(render.escape(deps.voice.mention_hint()))
        question = deps.asker.admit(text)
        if isinstance(question, Notice):
            return say(question.line)
        react(client, WORKING, channel, ts, add=True)
        try:
            answer_with(deps, question, channel, conversation, say, post, undo)
        finally:
            react(client, WORKING, channel, ts, add=False)
    finally:
        mark_answered(deps, context)


def question_place(event: dict[str, Any], context: dict[str, Any]) -> tuple[str, str | None] | None:
    """Where the listeners below answer this event (channel, thread), or None when it asks them nothing."""
    if ignorable(event, context):
        return None
    if event.get("type") == "app_mention":
        return event["channel"], event.get("thread_ts") or event["ts"]
    if event.get("type") == "message" and event.get("channel_type") == "im":
        return event["channel"], event.get("thread_ts")
    return None


def catalogue_about(event: dict[str, Any]) -> Catalogue:
    """The catalogue for a notice about this event's text (the store may be down: no document can tell)."""
    return speaking(detect_language(str(event.get("text") or "")))


def tell(client: WebClient, event: dict[str, Any], context: dict[str, Any], text: str) -> None:
    """Say `text` where the answer to `event` would go (that the database is down, say, when Slack sends the
    event again); nothing for an event that asks nothing."""
    place = question_place(event, context)
    if place is None:
        return
    try:
        client.chat_postMessage(channel=place[0], thread_ts=place[1], text=text)
    except SlackApiError as exc:
        log.warning("could not tell the asker why the event is not answered: %s", exc.response.get("error"))


def just_ack(ack: Ack) -> None:
    ack()


def on_mention(client: WebClient, event: dict[str, Any], context: dict[str, Any], deps: Deps) -> None:
    """A mention in a channel: answered in that message's thread, with the thread as history."""
    if ignorable(event, context):
        return
    thread_ts = event.get("thread_ts") or event["ts"]
    conversation = f"slack:{context.get('team_id')}:{event['channel']}:{thread_ts}"
    answer_in_thread(deps, client, event, thread_ts, conversation, context)


def on_direct_message(client: WebClient, event: dict[str, Any], context: dict[str, Any], deps: Deps) -> None:
    """A direct message: answered privately, in its thread if it was sent in one."""
    if event.get("channel_type") != "im" or ignorable(event, context):
        return
    thread_ts = event.get("thread_ts")
    conversation = f"slack:{context.get('team_id')}:{event['channel']}" + (f":{thread_ts}" if thread_ts else "")
    answer_in_thread(deps, client, event, thread_ts, conversation, context)


def register(app: App, deps: Deps) -> None:
    app.event("app_mention")(ack=just_ack, lazy=[on_mention])
    app.event("message")(ack=just_ack, lazy=[on_direct_message])
