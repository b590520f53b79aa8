"""Slack settings, read once from the environment; a bad value stops start-up with one sentence."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass

from bot.env import DEFAULT_SHUTDOWN_GRACE, port_from, shutdown_grace_from, voice_from
from core import ConfigError


def _placeholder(token: str, prefix: str) -> bool:
    """`xoxb-` as `.env.example` has it (or `xoxb-…`, `xoxb-<token>`): the prefix and nothing real after it."""
    rest = token[len(prefix) :].strip("-_.… ")
    return not rest or (rest.startswith("<") and rest.endswith(">"))


_SLACK_ID = re.compile(r"^[A-Z][A-Z0-9]{2,}$")


@dataclass(frozen=True)
class SlackSettings:
    bot_token: str
    mode: str = "socket"  # or "http"
    app_token: str = ""
    signing_secret: str = ""
    port: int = 3000
    api_url: str = ""
    public_channels: frozenset[str] = frozenset()
    admin_users: frozenset[str] = frozenset()  # Slack user ids allowed /verbatim
    digest_channel: str = ""  # where the weekly gap digest goes; "" for none
    company: str = "our company"
    example_question: str = ""  # shown in usage hints; none by default
    shutdown_grace: float = DEFAULT_SHUTDOWN_GRACE  # seconds on SIGTERM for the answers under way

    def __repr__(self) -> str:
        return f"SlackSettings(mode={self.mode!r}, port={self.port}, api_url={self.api_url!r})"


def _check_app_token(app_token: str) -> None:
    if not app_token:
        raise ConfigError(
            "SLACK_APP_TOKEN is not set: Socket Mode needs an app-level token (xapp-…) with connections:write."
        )
    if not app_token.startswith("xapp-"):
        raise ConfigError("SLACK_APP_TOKEN must be an app-level token starting with xapp-.")
    if _placeholder(app_token, "xapp-"):
        raise ConfigError(
            "SLACK_APP_TOKEN is still the xapp- placeholder from .env.example: "
            "paste an app-level token with connections:write from your Slack app's Basic Information page."
        )


def slack_settings(env: Mapping[str, str] | None = None) -> SlackSettings:
    env = os.environ if env is None else env

    def get(name: str) -> str:
        return env.get(name, "").strip()

    mode = (get("SLACK_MODE") or "socket").lower()
    if mode not in ("socket", "http"):
        raise ConfigError(f"SLACK_MODE must be socket or http, not {mode!r}.")
    bot_token = get("SLACK_BOT_TOKEN")
    if not bot_token:
        raise ConfigError("SLACK_BOT_TOKEN is not set: copy the Bot User OAuth Token (xoxb-…) from your Slack app.")
    if not bot_token.startswith("xoxb-"):
        raise ConfigError("SLACK_BOT_TOKEN must be a bot token starting with xoxb-.")
    if _placeholder(bot_token, "xoxb-"):
        raise ConfigError(
            "SLACK_BOT_TOKEN is still the xoxb- placeholder from .env.example: "
            "paste the Bot User OAuth Token from your Slack app's OAuth & Permissions page."
        )
    app_token = get("SLACK_APP_TOKEN")
    signing_secret = get("SLACK_SIGNING_SECRET")
    if mode == "socket":
        _check_app_token(app_token)
    elif not signing_secret:
        raise ConfigError("SLACK_SIGNING_SECRET is not set: HTTP mode needs it to verify Slack's requests.")
    port = port_from(env, "SLACK_PORT", 3000)
    api_url = get("SLACK_API_URL")
    if api_url and not api_url.startswith(("http://", "https://")):
        raise ConfigError(f"SLACK_API_URL must start with http:// or https://, not {api_url!r}.")
    if api_url and not api_url.endswith("/"):
        api_url += "/"
    channels = frozenset(c.strip() for c in get("SLACK_PUBLIC_CHANNELS").split(",") if c.strip())
    admins = frozenset(u.strip() for u in get("SLACK_ADMIN_USERS").split(",") if u.strip())
    odd = sorted(u for u in admins if not _SLACK_ID.match(u))
    if odd:
        raise ConfigError(f"SLACK_ADMIN_USERS must list Slack user ids such as U0123ABCD, not {', '.join(odd)}.")
    digest = get("VERBATIM_DIGEST_CHANNEL")  # a channel id (C0123ABCD) or name (#kb-owners): Slack takes both
    if digest and digest in channels:
        # The digest quotes refused questions from every surface and names internal sections: staff only.
        raise ConfigError("VERBATIM_DIGEST_CHANNEL must be a staff channel, not one of SLACK_PUBLIC_CHANNELS.")
    company, example = voice_from(env)
    return SlackSettings(
        bot_token,
        mode,
        app_token,
        signing_secret,
        port,
        api_url,
        channels,
        admins,
        digest,
        company,
        example,
        shutdown_grace_from(env),
    )
