"""Buttons under answers: 👍 / 👎 feedback, and "Post to channel" for an ephemeral /ask answer."""

from __future__ import annotations

import logging
import re
from typing import Any

from slack_bolt import Ack, App
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot import presenter
from bot.slack import render
from bot.slack.listeners.common import SURFACE, Deps, reply

log = logging.getLogger(__name__)


def on_feedback(ack: Ack, body: dict[str, Any], action: dict[str, Any], client: WebClient, deps: Deps) -> None:
    """👍 / 👎: recorded in the run log against the answer's id."""
    ack()
    value = "up" if action["action_id"].endswith("_up") else "down"
    user = body.get("user", {}).get("id")
    recorded = deps.pipeline.feedback(action.get("value", ""), value, SURFACE, who=user)
    channel = (body.get("channel") or {}).get("id")
    if channel and user:
        catalogue = deps.voice.catalogue
        text = catalogue("feedback.thanks") if recorded else catalogue("feedback.unknown")
        thread_ts = (body.get("message") or {}).get("thread_ts")
        try:
            client.chat_postEphemeral(channel=channel, user=user, text=text, thread_ts=thread_ts)
        except SlackApiError as exc:
            log.warning("could not confirm feedback: %s", exc.response.get("error"))


def on_share(ack: Ack, body: dict[str, Any], action: dict[str, Any], client: WebClient, deps: Deps) -> None:
    """The ephemeral answer's "Post to channel" button."""
    ack()
    answer = deps.pipeline.logged_answer(action.get("value", ""))
    channel = (body.get("channel") or {}).get("id")
    user = (body.get("user") or {}).get("id")
    if answer is None or not channel:
        return
    if not answer.scope or not set(answer.scope) <= deps.scope_for(channel):
        # The answer may quote documents this channel may not read (it became public since, or the
        # answer predates recorded scopes): never post it here.
        if user:
            client.chat_postEphemeral(channel=channel, user=user, text=presenter.catalogue_for(answer)("share.refused"))
        return
    header = {
        "type": "context",
        "elements": [
            {
                "type": "mrkdwn",
                "text": presenter.shared_by(
                    f"<@{user}>", render.escape(answer.question), presenter.catalogue_for(answer)
                ),
            }
        ],
    }
    first, *rest = render.messages(presenter.present(answer))
    if len(first.blocks) < render.BLOCK_LIMIT:
        first = render.Message([header, *first.blocks], first.text)
    reply(client, channel, None, [first, *rest])


def register(app: App, deps: Deps) -> None:
    app.action(re.compile(r"^verbatim_feedback_(up|down)$"))(on_feedback)
    app.action("verbatim_share")(on_share)
