"""One way to call a model server over HTTP: a timeout, three attempts, growing delays.

A caller may add a wall-clock `deadline` for the whole call (every attempt and every delay
between them) and a cap on the reply's size. httpx's timeouts bound each read, not their sum:
a server trickling a byte at a time never trips them, so the deadline is enforced separately.
"""

from __future__ import annotations

import json
import logging
import threading
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

    def __init__(self, reason: str, status: int | None = None, *, expired: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.status = status
        self.expired = expired  # the caller's deadline passed before a usable reply arrived


def post_json(
    client: httpx.Client,
    url: str,
    payload: dict[str, Any],
    *,
    attempts: int = ATTEMPTS,
    base_delay: float = 0.5,
    sleep: Callable[[float], None] | None = None,
    on_request: Callable[[], None] | None = None,
    deadline: float | None = None,
    max_bytes: int | None = None,
) -> Any:
    """POST `payload` and return the decoded JSON reply, retrying timeouts, 429 and 5xx.

    The delay grows 0.5 s, 1 s, 2 s…; a 429's Retry-After is honoured (capped at 30 s).
    `deadline` (a `time.monotonic()` value) ends the whole call, retries included, with an
    `expired` HTTPFailure; `max_bytes` refuses a larger reply. The client carries the key in
    its headers, so nothing here ever formats it.
    """
    origin = _origin(url)
    reason = "no attempt was made"
    status: int | None = None
    for attempt in range(1, attempts + 1):
        delay = base_delay * 2 ** (attempt - 1)
        if _passed(deadline):
            raise _expired(origin)
        if on_request:
            on_request()
        try:
            status, headers, body = _within(deadline, origin, lambda: _send(client, url, payload, deadline, max_bytes))
        except httpx.TimeoutException:
            reason, status = f"the server at {origin} did not answer in time", None
        except httpx.TransportError as exc:
            reason, status = f"could not reach {origin} ({type(exc).__name__})", None
        else:
            if 200 <= status < 300:
                try:
                    return json.loads(body)
                except ValueError:
                    raise HTTPFailure(f"{origin} replied with something that is not JSON", status) from None
            reason = f"{origin} answered HTTP {status}"
            if status not in RETRY_STATUSES:
                raise HTTPFailure(reason, status)
            delay = max(delay, _retry_after(headers))
        if _passed(deadline):
            raise _expired(origin)
        log.warning("attempt %d of %d failed: %s", attempt, attempts, reason)
        if attempt < attempts:
            if deadline is not None and time.monotonic() + delay >= deadline:
                raise _expired(origin)  # no time is left for another attempt
            (sleep or time.sleep)(delay)
    raise HTTPFailure(f"{reason} (after {attempts} attempts)", status)


def _send(
    client: httpx.Client, url: str, payload: dict[str, Any], deadline: float | None, max_bytes: int | None
) -> tuple[int, httpx.Headers, bytes]:
    """One attempt: the status, the headers, and (for a success) the body, read in chunks against the limits."""
    with client.stream("POST", url, json=payload, timeout=_capped(client.timeout, deadline)) as response:
        if not response.is_success:
            return response.status_code, response.headers, b""
        declared = response.headers.get("content-length", "")
        if max_bytes is not None and declared.isdigit() and int(declared) > max_bytes:
            raise _too_large(url, max_bytes, response.status_code)
        chunks: list[bytes] = []
        size = 0
        for chunk in response.iter_bytes():
            size += len(chunk)
            if max_bytes is not None and size > max_bytes:
                raise _too_large(url, max_bytes, response.status_code)
            if _passed(deadline):
                raise _expired(_origin(url))  # stops a worker whose caller has already given up
            chunks.append(chunk)
        return response.status_code, response.headers, b"".join(chunks)


def _within(deadline: float | None, origin: str, work: Callable[[], Any]) -> Any:
    """`work()`, or an expired HTTPFailure the moment the deadline passes, whatever `work` is waiting for.

    With a deadline the attempt runs in a daemon thread, so a read that blocks past the deadline
    cannot hold the caller; the thread itself ends at its next chunk or read timeout.
    """
    if deadline is None:
        return work()
    if _passed(deadline):
        raise _expired(origin)
    outcome: dict[str, Any] = {}
    done = threading.Event()

    def run() -> None:
        try:
            outcome["value"] = work()
        except BaseException as exc:  # handed to the caller below
            outcome["error"] = exc
        finally:
            done.set()

    threading.Thread(target=run, name="model-request", daemon=True).start()
    if not done.wait(max(0.0, deadline - time.monotonic())):
        raise _expired(origin)
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def _capped(timeout: httpx.Timeout, deadline: float | None) -> httpx.Timeout:
    """The client's per-attempt timeouts, none longer than the time left before the deadline."""
    if deadline is None:
        return timeout
    left = max(0.001, deadline - time.monotonic())

    def cap(value: float | None) -> float:
        return left if value is None else min(value, left)

    return httpx.Timeout(
        connect=cap(timeout.connect), read=cap(timeout.read), write=cap(timeout.write), pool=cap(timeout.pool)
    )


def _passed(deadline: float | None) -> bool:
    return deadline is not None and time.monotonic() >= deadline


def _expired(origin: str) -> HTTPFailure:
    return HTTPFailure(f"the server at {origin} did not finish within the time allowed", expired=True)


def _too_large(url: str, max_bytes: int, status: int) -> HTTPFailure:
    return HTTPFailure(f"{_origin(url)} sent a reply larger than {max_bytes:,} bytes", status)


def _retry_after(headers: httpx.Headers) -> float:
    value = headers.get("retry-after", "")
    try:
        return min(max(float(value), 0.0), MAX_RETRY_AFTER)
    except ValueError:
        return 0.0


def _origin(url: str) -> str:
    parsed = httpx.URL(url)
    return f"{parsed.scheme}://{parsed.host}" + (f":{parsed.port}" if parsed.port else "")


def auth_headers(api_key: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {api_key}"} if api_key else {}
