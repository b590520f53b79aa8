"""Slack listeners: mentions, direct messages, /ask, feedback and share buttons.

Every listener acknowledges at once and answers in a lazy listener, because Slack
wants an acknowledgement within 3 seconds and answering can take longer.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from slack_bolt import Ack, App, BoltResponse
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.slack import render
from bot.slack.config import SlackSettings
from core.errors import VerbatimError
from core.knowledge import SCOPES
from core.pipeline import Pipeline, clean_question

log = logging.getLogger(__name__)

SURFACE = "slack"
WORKING = "hourglass_flowing_sand"
_MENTION = re.compile(r"<@[A-Z0-9]+(?:\|[^>]*)?>")
_LINK = re.compile(r"<(?:[^|>]+\|)?([^>]+)>")


def question_text(text: str) -> str:
    """The question in a Slack message: mentions dropped, links to their labels, entities decoded."""
    text = _MENTION.sub(" ", text or "")
    text = _LINK.sub(r"\1", text)
    return " ".join(text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&").split())


class SeenEvents:
    """Event ids seen in the last hour: Slack redelivers events it thinks timed out."""

    def __init__(self, ttl: float = 3600.0, size: int = 10_000) -> None:
        self.ttl, self.size = ttl, size
        self._seen: OrderedDict[str, float] = OrderedDict()
        self._lock = threading.Lock()

    def first_time(self, event_id: str) -> bool:
        now = time.monotonic()
        with self._lock:
            while self._seen and (len(self._seen) > self.size or next(iter(self._seen.values())) < now - self.ttl):
                self._seen.popitem(last=False)
            if event_id in self._seen:
                return False
            self._seen[event_id] = now
            return True


def register(app: App, pipeline: Pipeline, settings: SlackSettings) -> None:
    """Attach every Verbatim listener to a Bolt app."""
    seen = SeenEvents()

    def scope_for(channel: str) -> frozenset[str]:
        return SCOPES["public"] if channel in settings.public_channels else SCOPES["internal"]

    @app.middleware
    def answer_each_event_once(body: dict[str, Any], next: Callable[[], None]) -> BoltResponse | None:
        event_id = body.get("event_id")
        if event_id and not seen.first_time(event_id):
            log.info("skipping redelivered event %s", event_id)
            return BoltResponse(status=200, body="")
        next()
        return None

    def reply(client: WebClient, channel: str, thread_ts: str | None, answer_messages: list[render.Message]) -> None:
        for message in answer_messages:
            client.chat_postMessage(
                channel=channel,
                thread_ts=thread_ts,
                blocks=message.blocks,
                text=message.text,
                unfurl_links=False,
                unfurl_media=False,
            )

    def react(client: WebClient, name: str, channel: str, ts: str, add: bool) -> None:
        try:
            (client.reactions_add if add else client.reactions_remove)(channel=channel, timestamp=ts, name=name)
        except SlackApiError as exc:  # a missing reaction scope must not cost the user the answer
            log.warning("could not %s the %s reaction: %s", "add" if add else "remove", name, exc.response.get("error"))

    def answer_in_thread(client: WebClient, event: dict[str, Any], thread_ts: str | None, conversation: str) -> None:
        channel, ts = event["channel"], event["ts"]
        text = question_text(event.get("text", ""))
        if not text:
            client.chat_postMessage(channel=channel, thread_ts=thread_ts, text=render.HINT)
            return
        try:
            question = clean_question(text)
        except VerbatimError as exc:
            client.chat_postMessage(channel=channel, thread_ts=thread_ts, text=str(exc))
            return
        react(client, WORKING, channel, ts, add=True)
        try:
            answer = pipeline.ask(question, scope_for(channel), SURFACE, conversation)
            reply(client, channel, thread_ts, render.messages(answer))
        except Exception:
            log.exception("answering a Slack message failed")
            client.chat_postMessage(channel=channel, thread_ts=thread_ts, text=f"⚠️ {render.APOLOGY}")
        finally:
            react(client, WORKING, channel, ts, add=False)

    def ignorable(event: dict[str, Any], context: dict[str, Any]) -> bool:
        """Bots (ourselves included), edits, joins, deletions and every other subtype."""
        return bool(
            event.get("subtype") or event.get("bot_id") or event.get("user") in (None, context.get("bot_user_id"))
        )

    def just_ack(ack: Ack) -> None:
        ack()

    def on_mention(client: WebClient, event: dict[str, Any], context: dict[str, Any]) -> None:
        """A mention in a channel: answered in that message's thread, with the thread as history."""
        if ignorable(event, context):
            return
        thread_ts = event.get("thread_ts") or event["ts"]
        conversation = f"slack:{context.get('team_id')}:{event['channel']}:{thread_ts}"
        answer_in_thread(client, event, thread_ts, conversation)

    def on_direct_message(client: WebClient, event: dict[str, Any], context: dict[str, Any]) -> None:
        """A direct message: answered privately, in its thread if it was sent in one."""
        if event.get("channel_type") != "im" or ignorable(event, context):
            return
        thread_ts = event.get("thread_ts")
        conversation = f"slack:{context.get('team_id')}:{event['channel']}" + (f":{thread_ts}" if thread_ts else "")
        answer_in_thread(client, event, thread_ts, conversation)

    def ack_command(ack: Ack, command: dict[str, Any]) -> None:
        if not question_text(command.get("text", "")):
            ack(text="Usage: `/ask your question`, for example `/ask how long is the warranty on hinges?`")
        else:
            ack()

    def on_command(client: WebClient, command: dict[str, Any]) -> None:
        """`/ask question`: answered only to the asker, with a button to post it to the channel."""
        text = question_text(command.get("text", ""))
        if not text:
            return
        channel, user = command["channel_id"], command["user_id"]
        try:
            answer = pipeline.ask(clean_question(text), scope_for(channel), SURFACE)
            actions = [] if answer.reason == "error" else [render.share_actions(answer.id)]
            for message in render.messages(answer, actions):
                client.chat_postEphemeral(channel=channel, user=user, blocks=message.blocks, text=message.text)
        except VerbatimError as exc:
            client.chat_postEphemeral(channel=channel, user=user, text=str(exc))
        except Exception:
            log.exception("answering /ask failed")
            client.chat_postEphemeral(channel=channel, user=user, text=f"⚠️ {render.APOLOGY}")

    def on_feedback(ack: Ack, body: dict[str, Any], action: dict[str, Any], client: WebClient) -> None:
        """👍 / 👎: recorded in the run log against the answer's id."""
        ack()
        value = "up" if action["action_id"].endswith("_up") else "down"
        user = body.get("user", {}).get("id")
        recorded = pipeline.feedback(action.get("value", ""), value, SURFACE, who=user)
        channel = (body.get("channel") or {}).get("id")
        if channel and user:
            text = "Thanks, your feedback was recorded." if recorded else "That answer is no longer in the log."
            thread_ts = (body.get("message") or {}).get("thread_ts")
            try:
                client.chat_postEphemeral(channel=channel, user=user, text=text, thread_ts=thread_ts)
            except SlackApiError as exc:
                log.warning("could not confirm feedback: %s", exc.response.get("error"))

    def on_share(ack: Ack, body: dict[str, Any], action: dict[str, Any], client: WebClient) -> None:
        """The ephemeral answer's "Post to channel" button."""
        ack()
        answer = pipeline.runlog.answer(action.get("value", ""))
        channel = (body.get("channel") or {}).get("id")
        user = (body.get("user") or {}).get("id")
        if answer is None or not channel:
            return
        header = {
            "type": "context",
            "elements": [{"type": "mrkdwn", "text": f"<@{user}> asked: {render.escape(answer.question)}"}],
        }
        first, *rest = render.messages(answer)
        if len(first.blocks) < render.BLOCK_LIMIT:
            first = render.Message([header, *first.blocks], first.text)
        reply(client, channel, None, [first, *rest])

    app.event("app_mention")(ack=just_ack, lazy=[on_mention])
    app.event("message")(ack=just_ack, lazy=[on_direct_message])
    app.command("/ask")(ack=ack_command, lazy=[on_command])
    app.action(re.compile(r"^verbatim_feedback_(up|down)$"))(on_feedback)
    app.action("verbatim_share")(on_share)
