"""`verbatim doctor`: the configuration read the way the bots read it, each problem in one sentence.

Nothing is started and nothing is contacted: Slack and Telegram check their tokens themselves when a
bot starts. What can be told from the values alone is told here: a token of the wrong kind, HTTP mode
without its signing secret, a webhook Telegram will not call, two servers on one port, a placeholder
left from `.env.example`, an id where a name was given, an embedder that doesn't read the documents'
languages. From the index as it stands it also tells what a customer-facing bot can't see: prices, opening
hours or terms that only staff-only documents state. Every problem in one run: a reading that stops at its first
is read again past it.
"""

from __future__ import annotations

import importlib.util
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar
from urllib.parse import urlparse

from bot.cli.records import public_surfaces
from bot.env import port_from
from bot.presenter import reports
from bot.slack.config import slack_settings
from bot.telegram.config import telegram_settings
from core import ConfigError, Settings, VerbatimError, folder_advice, from_env, public_shortfalls

# Telegram calls a webhook only on these ports (https://core.telegram.org/bots/api#setwebhook).
WEBHOOK_PORTS = (443, 80, 88, 8443)
# What the demo's .env once said; a company of its own should not greet customers as the demo's.
DEMO_VALUES = {
    "VERBATIM_COMPANY_NAME": "Hollowmere Joinery",
    "VERBATIM_EXAMPLE_QUESTION": "How much is delivery 30 km away?",
}
_SLACK_ID = re.compile(r"^[A-Z][A-Z0-9]{2,}$")
_PLACEHOLDER_HOSTS = ("example.com", "example.org", "example.net")
_FIND_CHANNEL = "open the channel, click its name at the top, and copy the Channel ID at the bottom of About"
_FIND_MEMBER = "open the person's profile, click ⋮ (More), and choose Copy member ID"
_FIND_TELEGRAM_ID = "message @userinfobot in Telegram and it replies with your numeric id"
# The variable a settings sentence begins with ("TELEGRAM_WEBHOOK_SECRET is not set: …", "PORT must be …").
_VARIABLE = re.compile(r"^((?:VERBATIM|SLACK|TELEGRAM)_[A-Z0-9_]*[A-Z0-9]|PORT)\b")
# Values the readings accept, put in place of a variable found wrong so that the reading goes on to the next
# problem; a variable not here is emptied, which gives its default.
_WORKING = {
    "SLACK_BOT_TOKEN": "xoxb-0-0-doctor",
    "SLACK_APP_TOKEN": "xapp-0-doctor",
    "SLACK_SIGNING_SECRET": "doctor",
    "TELEGRAM_BOT_TOKEN": "123456:" + "a" * 35,
    "TELEGRAM_WEBHOOK_URL": "https://doctor.invalid/telegram",
    "TELEGRAM_WEBHOOK_SECRET": "doctor",
    "VERBATIM_EMBEDDING_BASE_URL": "http://localhost/v1",
    "VERBATIM_LLM_BASE_URL": "http://localhost/v1",
}
T = TypeVar("T")


@dataclass(frozen=True)
class Finding:
    """One problem: the variable it is in, and one sentence saying what is wrong and what to do."""

    variable: str
    sentence: str


@dataclass
class Diagnosis:
    """What `verbatim doctor` found: one line per part that is set up, and the problems."""

    parts: list[str] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)

    def add(self, variable: str, sentence: str) -> None:
        self.findings.append(Finding(variable, sentence))

    def about(self, variable: str) -> bool:
        return any(f.variable == variable for f in self.findings)


def diagnose(env: Mapping[str, str]) -> Diagnosis:
    """Every problem the settings in `env` have, without starting a bot or connecting anywhere."""
    found = Diagnosis()

    def get(name: str) -> str:
        return env.get(name, "").strip()

    _core(get, env, found)
    slack_http = _slack(get, env, found)
    telegram_webhook = _telegram(get, env, found)
    if slack_http and telegram_webhook:
        _ports(env, found)
    _placeholders(get, env, found)
    return found


def _every_problem(
    read: Callable[[Mapping[str, str]], T], env: Mapping[str, str], found: Diagnosis, fallback: str, mend: set[str]
) -> T | None:
    """What `read` (the settings read the way core or a bot reads them) returns, every problem it stops on found.

    A reading stops at its first problem; here the variable that problem's sentence names is given a working
    value and the settings are read again, so one run lists every problem, not one per run. `mend`: the
    variables already found wrong, given working values first so that no problem is said twice.
    """
    trial = {**env, **{name: _WORKING.get(name, "") for name in mend}}
    while True:
        try:
            return read(trial)
        except ConfigError as exc:
            named = _VARIABLE.match(str(exc))
            variable = named.group(1) if named else fallback
            if not found.about(variable):
                found.add(variable, str(exc))
            if named is None or variable in mend:
                return None
            mend.add(variable)
            trial[variable] = _WORKING.get(variable, "")


def _core(get: Callable[[str], str], env: Mapping[str, str], found: Diagnosis) -> None:
    before = len(found.findings)
    settings = _every_problem(from_env, env, found, "VERBATIM_*", set())
    if settings is None:
        return
    if len(found.findings) == before:  # else the settings read are the mended ones: no line describes them
        llm = settings.answerer == "llm"
        answerer = f"the LLM answerer ({settings.llm_model})" if llm else "the extractive answerer"
        store = f"SQLite in {settings.data_dir}"
        if settings.database_url:  # the server isn't contacted here: its pgvector decides, and status says which
            store = (
                "PostgreSQL (searched with pgvector's iterative index scans from 0.8, before 0.8 with a wider HNSW "
                "search ranked exactly: verbatim status says which this server uses)"
            )
        embeddings = f"{settings.embedder} embeddings"
        if not settings.embedder_set:  # unset: a new index is settled by its documents' language
            embeddings = "local embeddings (multilingual for a new index of documents mostly not in English)"
        found.parts.append(f"Answers: {answerer}, {embeddings}, {store}.")
    if not settings.knowledge_dir.is_dir():
        found.add(
            "VERBATIM_KNOWLEDGE_DIR",
            f"The knowledge folder {settings.knowledge_dir} does not exist here: create it, or set "
            "VERBATIM_KNOWLEDGE_DIR to the folder that holds your documents.",
        )
    elif advice := folder_advice(settings):  # MiniLM on documents mostly not in English
        found.add("VERBATIM_EMBEDDER", advice)
    _public_documents(settings, env, found)
    if settings.database_url and importlib.util.find_spec("psycopg") is None:
        found.add(
            "VERBATIM_DATABASE_URL",
            "VERBATIM_DATABASE_URL is set but psycopg is not installed: run pip install '.[postgres]'.",
        )
    for base, key in (
        ("VERBATIM_LLM_BASE_URL", "VERBATIM_LLM_API_KEY"),
        ("VERBATIM_EMBEDDING_BASE_URL", "VERBATIM_EMBEDDING_API_KEY"),
    ):
        if urlparse(get(base)).hostname == "api.openai.com" and not get(key):
            found.add(key, f"{base} is OpenAI's, which needs a key: put your OpenAI API key (sk-…) in {key}.")


def _public_documents(settings: Settings, env: Mapping[str, str], found: Diagnosis) -> None:
    """Prices, opening hours or terms that only staff-only documents state, while a surface answers customers.

    Read from the index as it stands in the data folder (none yet: nothing to say); a database is not contacted.
    """
    surfaces = public_surfaces(env)
    if not surfaces or settings.database_url:
        return
    try:
        lacking = public_shortfalls(settings)
    except VerbatimError:
        return  # an index that can't be read is `verbatim index`'s and `status`'s to report, not the settings'
    for shortfall in lacking:
        line = reports.public_lacks_line(shortfall.kind, shortfall.documents, ", ".join(surfaces))
        found.add("VERBATIM_KNOWLEDGE_DIR", f"{line}.")


def _slack(get: Callable[[str], str], env: Mapping[str, str], found: Diagnosis) -> bool:
    """Slack's settings, when any is set; True when it is to run in HTTP mode."""
    if not get("SLACK_BOT_TOKEN") and not get("SLACK_APP_TOKEN") and not get("SLACK_SIGNING_SECRET"):
        found.parts.append("Slack: not set up (set SLACK_BOT_TOKEN to run `verbatim serve slack`).")
        return False
    before = len(found.findings)
    mode = (get("SLACK_MODE") or "socket").lower()
    _slack_bot_token(get("SLACK_BOT_TOKEN"), found)
    _slack_ids(get, found)
    if mode not in ("socket", "http"):  # which of the app token and the signing secret it needs is not known
        found.add("SLACK_MODE", f"SLACK_MODE must be socket or http, not {mode!r}: leave it unset for Socket Mode.")
        return False
    if mode == "socket":
        _slack_app_token(get("SLACK_APP_TOKEN"), found)
    else:
        _slack_signing_secret(get("SLACK_SIGNING_SECRET"), found)
    # Anything else the bot itself would stop on: the port, the API URL, the digest channel, the grace.
    _every_problem(slack_settings, env, found, "SLACK_*", {f.variable for f in found.findings[before:]})
    how = "Socket Mode" if mode == "socket" else "HTTP mode" + _port(env, "SLACK_PORT", 3000)
    found.parts.append(_part("Slack", how, found, before))
    return mode == "http"


def _port(env: Mapping[str, str], name: str, default: int) -> str:
    try:
        return f" on port {port_from(env, name, default)}"
    except ConfigError:
        return ""  # said among the problems


def _part(surface: str, how: str, found: Diagnosis, before: int) -> str:
    return f"{surface}: {how}" + (", with the problems below." if len(found.findings) > before else ".")


def _placeholder_token(token: str, prefix: str) -> bool:
    rest = token[len(prefix) :].strip("-_.… ")
    return token.startswith(prefix) and (not rest or (rest.startswith("<") and rest.endswith(">")))


def _slack_bot_token(token: str, found: Diagnosis) -> None:
    where = "the Bot User OAuth Token (xoxb-…) from your Slack app's OAuth & Permissions page"
    if not token:
        found.add("SLACK_BOT_TOKEN", f"SLACK_BOT_TOKEN is not set: paste {where}.")
    elif _placeholder_token(token, "xoxb-"):
        found.add(
            "SLACK_BOT_TOKEN",
            f"SLACK_BOT_TOKEN is still the xoxb- placeholder from .env.example: paste {where} "
            "(or empty the SLACK_ lines if you don't use Slack).",
        )
    elif token.startswith("xapp-"):
        found.add(
            "SLACK_BOT_TOKEN",
            f"SLACK_BOT_TOKEN holds an app-level token (xapp-…): move it to SLACK_APP_TOKEN and paste {where}.",
        )
    elif token.startswith("xoxp-"):
        found.add("SLACK_BOT_TOKEN", f"SLACK_BOT_TOKEN holds a user token (xoxp-…), not the bot's: paste {where}.")
    elif not token.startswith("xoxb-"):
        found.add("SLACK_BOT_TOKEN", f"SLACK_BOT_TOKEN must start with xoxb-: paste {where}.")


def _slack_app_token(token: str, found: Diagnosis) -> None:
    where = (
        "an app-level token with the connections:write scope (Basic Information → App-Level Tokens, "
        "xapp-…), or set SLACK_MODE=http"
    )
    if not token:
        found.add("SLACK_APP_TOKEN", f"SLACK_APP_TOKEN is not set, and Socket Mode needs it: create {where}.")
    elif _placeholder_token(token, "xapp-"):
        found.add(
            "SLACK_APP_TOKEN", f"SLACK_APP_TOKEN is still the xapp- placeholder from .env.example: create {where}."
        )
    elif token.startswith("xox"):
        found.add(
            "SLACK_APP_TOKEN",
            "SLACK_APP_TOKEN holds a bot or user token (xox…), not an app-level token: "
            f"keep the xoxb- token in SLACK_BOT_TOKEN and create {where}.",
        )
    elif not token.startswith("xapp-"):
        found.add("SLACK_APP_TOKEN", f"SLACK_APP_TOKEN must start with xapp-: create {where}.")


def _slack_signing_secret(secret: str, found: Diagnosis) -> None:
    where = "the Signing Secret from your Slack app's Basic Information → App Credentials"
    if not secret:
        found.add("SLACK_SIGNING_SECRET", f"SLACK_MODE=http needs SLACK_SIGNING_SECRET: paste {where}.")
    elif secret.startswith(("xox", "xapp-")):
        found.add("SLACK_SIGNING_SECRET", f"SLACK_SIGNING_SECRET holds a token, not the secret: paste {where}.")
    elif secret.startswith("<"):
        found.add("SLACK_SIGNING_SECRET", f"SLACK_SIGNING_SECRET is still a placeholder: paste {where}.")


def _slack_ids(get: Callable[[str], str], found: Diagnosis) -> None:
    """Channel and member ids: a #name or @name never matches, so it is as if the variable were empty."""
    channels = [c.strip() for c in get("SLACK_PUBLIC_CHANNELS").split(",") if c.strip()]
    names = [c for c in channels if not _SLACK_ID.match(c)]
    if names:
        found.add(
            "SLACK_PUBLIC_CHANNELS",
            f"SLACK_PUBLIC_CHANNELS needs channel ids such as C0123ABCD, not {', '.join(names)}: "
            f"to find one, {_FIND_CHANNEL}.",
        )
    users = [u.strip() for u in get("SLACK_ADMIN_USERS").split(",") if u.strip()]
    odd = [u for u in users if not _SLACK_ID.match(u)]
    if odd:
        found.add(
            "SLACK_ADMIN_USERS",
            f"SLACK_ADMIN_USERS needs member ids such as U0123ABCD, not {', '.join(odd)}: to find one, {_FIND_MEMBER}.",
        )


def _telegram(get: Callable[[str], str], env: Mapping[str, str], found: Diagnosis) -> bool:
    """Telegram's settings, when any is set; True when it is to run a webhook."""
    if not get("TELEGRAM_BOT_TOKEN") and not get("TELEGRAM_WEBHOOK_URL"):
        found.parts.append("Telegram: not set up (set TELEGRAM_BOT_TOKEN to run `verbatim serve telegram`).")
        return False
    before = len(found.findings)
    token = get("TELEGRAM_BOT_TOKEN")
    if token.startswith(("xoxb-", "xapp-", "xoxp-")):
        found.add("TELEGRAM_BOT_TOKEN", "TELEGRAM_BOT_TOKEN holds a Slack token: paste the token @BotFather gave you.")
    url = get("TELEGRAM_WEBHOOK_URL")
    if url:
        _webhook(url, bool(get("TELEGRAM_API_BASE_URL")), found)
    users = [u.strip() for u in get("TELEGRAM_ADMIN_USERS").split(",") if u.strip()]
    odd = [u for u in users if not u.isdigit()]
    if odd:
        found.add(
            "TELEGRAM_ADMIN_USERS",
            f"TELEGRAM_ADMIN_USERS needs numeric user ids, not {', '.join(odd)}: to find yours, {_FIND_TELEGRAM_ID}.",
        )
    # The token's shape, the secret, the audience, the rate: what the bot itself would stop on.
    _every_problem(telegram_settings, env, found, "TELEGRAM_*", {f.variable for f in found.findings[before:]})
    how = "a webhook" + _port(env, "TELEGRAM_PORT", 8443) if url else "long polling"
    found.parts.append(_part("Telegram", how, found, before))
    return bool(url)


def _webhook(url: str, own_api_server: bool, found: Diagnosis) -> None:
    """Telegram's own servers call only https:// on four ports; a self-hosted Bot API server calls anything."""
    parsed = urlparse(url)
    host = parsed.hostname or ""
    if host.startswith("your-host") or host.endswith(_PLACEHOLDER_HOSTS):
        found.add(
            "TELEGRAM_WEBHOOK_URL",
            f"TELEGRAM_WEBHOOK_URL still names a placeholder host ({host}): put your public https:// address "
            "there, or empty it to use long polling.",
        )
    if own_api_server:
        return
    if parsed.scheme != "https":
        found.add(
            "TELEGRAM_WEBHOOK_URL",
            "TELEGRAM_WEBHOOK_URL must be an https:// address (Telegram calls no other): put the bot behind a "
            "TLS reverse proxy, or empty it to use long polling, which needs no public address.",
        )
        return
    try:
        port = parsed.port or 443
    except ValueError:
        port = -1
    if port not in WEBHOOK_PORTS:
        found.add(
            "TELEGRAM_WEBHOOK_URL",
            f"TELEGRAM_WEBHOOK_URL uses port {parsed.netloc.rpartition(':')[2]}, and Telegram calls webhooks only "
            "on 443, 80, 88 or 8443: publish it on one of those (TELEGRAM_PORT, where the bot listens, may differ "
            "behind a proxy).",
        )


def _ports(env: Mapping[str, str], found: Diagnosis) -> None:
    try:
        slack, telegram = port_from(env, "SLACK_PORT", 3000), port_from(env, "TELEGRAM_PORT", 8443)
    except ConfigError:
        return  # already said by the surface it belongs to
    if slack == telegram:
        source = "PORT" if not env.get("SLACK_PORT", "").strip() or not env.get("TELEGRAM_PORT", "").strip() else ""
        found.add(
            "PORT",
            f"Slack's HTTP mode and Telegram's webhook would both listen on port {slack}"
            + (f" (from {source})" if source else "")
            + ": give them different SLACK_PORT and TELEGRAM_PORT values when both run on one machine.",
        )


def _placeholders(get: Callable[[str], str], env: Mapping[str, str], found: Diagnosis) -> None:
    for name, demo in DEMO_VALUES.items():
        if get(name) == demo:
            found.add(
                name,
                f"{name} is still the demo's {demo!r}: set your own, or remove the line for the default.",
            )
    for name in sorted(env):
        value = get(name)
        bracketed = value.startswith("<") and value.endswith(">")
        if name.startswith(("VERBATIM_", "SLACK_", "TELEGRAM_")) and bracketed and not found.about(name):
            found.add(name, f"{name} is still a placeholder ({value}): put the real value there, or remove it.")


def env_file_line(path: Path = Path(".env")) -> str:
    """Where the values came from, so a reader knows which file to edit."""
    if path.is_file():
        return f"Read {path} and the environment (the environment wins)."
    return f"No {path} here, so only the environment was read: `cp .env.example .env` and edit it."
