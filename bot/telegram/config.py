"""Telegram settings, read once from the environment; a bad value stops start-up with one sentence."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlparse

from bot.env import port_from, voice_from
from core import ConfigError

# The example tokens in Telegram's own documentation, which people paste as placeholders.
_EXAMPLE_TOKENS = frozenset(
    {"123456:ABC-DEF1234ghIkl-zyx57W2v1u123ew11", "110201543:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw"}
)
_TOKEN = re.compile(r"^\d{3,}:[A-Za-z0-9_-]{30,}$")
_SECRET = re.compile(r"^[A-Za-z0-9_-]{1,256}$")


@dataclass(frozen=True)
class TelegramSettings:
    token: str
    webhook_url: str = ""
    webhook_secret: str = ""
    port: int = 8443
    api_base_url: str = ""
    audience: str = "public"
    questions_per_minute: int = 5
    company: str = "our company"
    example_question: str = ""  # shown in /help and usage hints; none by default
    admin_users: frozenset[int] = frozenset()  # Telegram user ids allowed /verbatim

    @property
    def webhook_path(self) -> str:
        return urlparse(self.webhook_url).path.lstrip("/") or "telegram"

    def __repr__(self) -> str:
        return f"TelegramSettings(webhook_url={self.webhook_url!r}, port={self.port}, audience={self.audience!r})"


def telegram_settings(env: Mapping[str, str] | None = None) -> TelegramSettings:
    env = os.environ if env is None else env

    def get(name: str) -> str:
        return env.get(name, "").strip()

    token = get("TELEGRAM_BOT_TOKEN")
    if not token:
        raise ConfigError("TELEGRAM_BOT_TOKEN is not set: create a bot with @BotFather and copy its token.")
    if token in _EXAMPLE_TOKENS or token.startswith("<"):
        raise ConfigError(
            "TELEGRAM_BOT_TOKEN is still a placeholder: create a bot with @BotFather and paste the token it gives you."
        )
    if not _TOKEN.match(token):
        raise ConfigError("TELEGRAM_BOT_TOKEN does not look like a bot token (digits, a colon, then 30+ characters).")
    webhook_url = get("TELEGRAM_WEBHOOK_URL")
    secret = get("TELEGRAM_WEBHOOK_SECRET")
    if webhook_url:
        if not webhook_url.startswith("https://") and not webhook_url.startswith("http://127.0.0.1"):
            raise ConfigError("TELEGRAM_WEBHOOK_URL must be an https:// address that Telegram can reach.")
        if not secret:
            raise ConfigError("TELEGRAM_WEBHOOK_SECRET is not set: webhook mode needs it to reject forged updates.")
        if not _SECRET.match(secret):
            raise ConfigError("TELEGRAM_WEBHOOK_SECRET may hold only A-Z, a-z, 0-9, _ and -, at most 256 of them.")
    port = port_from(env, "TELEGRAM_PORT", 8443)
    base = get("TELEGRAM_API_BASE_URL")
    if base and not base.startswith(("http://", "https://")):
        raise ConfigError(f"TELEGRAM_API_BASE_URL must start with http:// or https://, not {base!r}.")
    audience = (get("TELEGRAM_AUDIENCE") or "public").lower()
    if audience not in ("public", "internal"):
        raise ConfigError(f"TELEGRAM_AUDIENCE must be public or internal, not {audience!r}.")
    raw_rate = get("TELEGRAM_QUESTIONS_PER_MINUTE") or "5"
    if not raw_rate.isdigit() or int(raw_rate) < 1:
        raise ConfigError(f"TELEGRAM_QUESTIONS_PER_MINUTE must be a whole number above 0, not {raw_rate!r}.")
    company, example = voice_from(env)
    raw_admins = [u.strip() for u in get("TELEGRAM_ADMIN_USERS").split(",") if u.strip()]
    odd = [u for u in raw_admins if not u.isdigit()]
    if odd:
        raise ConfigError(f"TELEGRAM_ADMIN_USERS must list numeric Telegram user ids, not {', '.join(odd)}.")
    admins = frozenset(int(u) for u in raw_admins)
    return TelegramSettings(token, webhook_url, secret, port, base, audience, int(raw_rate), company, example, admins)
