"""What both surfaces' settings read the same way."""

from __future__ import annotations

from collections.abc import Mapping

from core import ConfigError


def port_from(env: Mapping[str, str], name: str, default: int) -> int:
    """The port in `name` (SLACK_PORT, TELEGRAM_PORT), else in the shared PORT, else `default`.

    Platforms such as Heroku set PORT for the one process they route to; a single `.env` that
    runs both bots on one machine gives each its own variable instead.
    """
    for variable in (name, "PORT"):
        raw = env.get(variable, "").strip()
        if raw:
            if not raw.isdigit() or not 0 < int(raw) < 65536:
                raise ConfigError(f"{variable} must be a port number, not {raw!r}.")
            return int(raw)
    return default


def voice_from(env: Mapping[str, str]) -> tuple[str, str]:
    """The company's name (VERBATIM_COMPANY_NAME, else "our company") and the example question
    (VERBATIM_EXAMPLE_QUESTION, else none) that every surface's help texts use."""
    company = env.get("VERBATIM_COMPANY_NAME", "").strip() or "our company"
    return company, env.get("VERBATIM_EXAMPLE_QUESTION", "").strip()


DEFAULT_SHUTDOWN_GRACE = 8.0  # under `docker stop`'s 10 s; Heroku and Kubernetes wait 30 s before they kill


def shutdown_grace_from(env: Mapping[str, str]) -> float:
    """VERBATIM_SHUTDOWN_GRACE: the seconds a bot on SIGTERM gives the answers under way before it apologises
    for those unfinished and exits; keep it under the time the platform waits before it kills."""
    raw = env.get("VERBATIM_SHUTDOWN_GRACE", "").strip()
    if not raw:
        return DEFAULT_SHUTDOWN_GRACE
    try:
        grace = float(raw)
    except ValueError:
        raise ConfigError(f"VERBATIM_SHUTDOWN_GRACE must be a number of seconds, not {raw!r}.") from None
    if not 0 <= grace <= 3600:
        raise ConfigError(f"VERBATIM_SHUTDOWN_GRACE must be between 0 and 3600 seconds, not {raw}.")
    return grace
