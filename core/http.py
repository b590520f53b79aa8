"""One way to call a model server over HTTP: a timeout, three attempts, growing delays."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

import httpx

log = logging.getLogger(__name__)

ATTEMPTS = 3
RETRY_STATUSES = frozenset({408, 409, 425, 429, 500, 502, 503, 504})
MAX_RETRY_AFTER = 30.0


class HTTPFailure(Exception):
    """The request failed after every attempt; `reason` is safe to show (no key, no body)."""

    def __init__(self, reason: str, status: int | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.status = status


def post_json(
    client: httpx.Client,
    url: str,
    payload: dict[str, Any],
    *,
    attempts: int = ATTEMPTS,
    base_delay: float = 0.5,
    sleep: Callable[[float], None] | None = None,
    on_request: Callable[[], None] | None = None,
) -> Any:
    """POST `payload` and return the decoded JSON reply, retrying timeouts, 429 and 5xx.

    The delay grows 0.5 s, 1 s, 2 s…; a 429's Retry-After is honoured (capped at 30 s).
    The client carries the key in its headers, so nothing here ever formats it.
    """
    reason = "no attempt was made"
    status: int | None = None
    for attempt in range(1, attempts + 1):
        delay = base_delay * 2 ** (attempt - 1)
        if on_request:
            on_request()
        try:
            response = client.post(url, json=payload)
        except httpx.TimeoutException:
            reason, status = f"the server at {_origin(url)} did not answer in time", None
        except httpx.TransportError as exc:
            reason, status = f"could not reach {_origin(url)} ({type(exc).__name__})", None
        else:
            status = response.status_code
            if response.is_success:
                try:
                    return response.json()
                except ValueError:
                    raise HTTPFailure(f"{_origin(url)} replied with something that is not JSON", status) from None
            reason = f"{_origin(url)} answered HTTP {status}"
            if status not in RETRY_STATUSES:
                raise HTTPFailure(reason, status)
            delay = max(delay, _retry_after(response))
        log.warning("attempt %d of %d failed: %s", attempt, attempts, reason)
        if attempt < attempts:
            (sleep or time.sleep)(delay)
    raise HTTPFailure(f"{reason} (after {attempts} attempts)", status)


def _retry_after(response: httpx.Response) -> float:
    value = response.headers.get("retry-after", "")
    try:
        return min(max(float(value), 0.0), MAX_RETRY_AFTER)
    except ValueError:
        return 0.0


def _origin(url: str) -> str:
    parsed = httpx.URL(url)
    return f"{parsed.scheme}://{parsed.host}" + (f":{parsed.port}" if parsed.port else "")


def auth_headers(api_key: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {api_key}"} if api_key else {}
