"""`/verbatim status | reindex | gaps`: the admins' commands, answered only to the admin who asked.

Admins are the Slack user ids in SLACK_ADMIN_USERS; anyone else gets one line saying so, and
the attempt is logged (with the user id hashed, as the run log keeps it).
"""

from __future__ import annotations

import logging
from typing import Any

from slack_bolt import Ack, App, Respond
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot import presenter
from bot.admin import SUBCOMMANDS, reply, subcommand, user_hash
from bot.presenter import reports
from bot.slack import render
from bot.slack.listeners.common import Deps

log = logging.getLogger(__name__)


def allowed(deps: Deps, command: dict[str, Any]) -> bool:
    return command.get("user_id", "") in deps.settings.admin_users


def ack_admin(ack: Ack, command: dict[str, Any], deps: Deps) -> None:
    """Refuse non-admins and unknown subcommands at once; otherwise acknowledge and work in the lazy listener."""
    sub = subcommand(command.get("text", ""))
    if not allowed(deps, command):
        log.warning(
            "/verbatim %s refused: user %s is not in SLACK_ADMIN_USERS",
            sub or "(none)",
            user_hash(deps.pipeline, command.get("user_id", "")),
        )
        ack(text=reports.NOT_ALLOWED)
    elif sub not in SUBCOMMANDS:
        ack(text=render.escape(reports.ADMIN_USAGE))
    elif sub == "reindex":
        ack(text=reports.REINDEX_STARTED)
    else:
        ack()


def on_admin(client: WebClient, command: dict[str, Any], respond: Respond, deps: Deps) -> None:
    """The slow part of an admin command (a re-index can take minutes), answered ephemerally."""
    sub = subcommand(command.get("text", ""))
    if not allowed(deps, command) or sub not in SUBCOMMANDS:
        return  # already answered by the ack
    channel, user = command["channel_id"], command["user_id"]
    try:
        text = render.escape(reply(deps.pipeline, sub))
    except Exception:
        log.exception("/verbatim %s failed", sub)
        text = f"⚠️ {presenter.APOLOGY}"
    try:
        client.chat_postEphemeral(channel=channel, user=user, text=text)
    except SlackApiError as exc:  # e.g. a channel the bot is not in: the command's own response URL still works
        log.info("ephemeral /verbatim reply failed (%s); using the response URL", exc.response.get("error"))
        respond(text=text, response_type="ephemeral")


def register(app: App, deps: Deps) -> None:
    app.command(reports.ADMIN_COMMAND)(ack=ack_admin, lazy=[on_admin])
