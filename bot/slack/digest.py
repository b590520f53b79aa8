"""The weekly gap digest: the top refused topics of the last 7 days, posted to VERBATIM_DIGEST_CHANNEL.

When it last went out is kept in the store, so a restart does not post it again and, with several
Slack processes on one data folder, exactly one of them posts. `tick` decides and posts; the
timer thread only calls it now and then, so tests call `tick` with a clock of their own.
"""

from __future__ import annotations

import logging
import threading
import time

from slack_sdk import WebClient

from bot.presenter import reports
from bot.slack import render
from core import Pipeline, recent_gaps

log = logging.getLogger(__name__)

KEY = "slack-digest"
WEEK = 7 * 86_400.0
CHECK_EVERY = 3600.0  # how often the timer asks whether a digest is due


def due(last: float | None, now: float, every: float = WEEK) -> bool:
    """Whether a digest last sent at `last` (None: never) is due again at `now`."""
    return last is None or now - last >= every


def tick(client: WebClient, pipeline: Pipeline, channel: str, now: float | None = None) -> bool:
    """Post the digest if it is due and no other process has just claimed it; True when this call posted it."""
    now = time.time() if now is None else now
    state = pipeline.state
    if not due(state.stamped(KEY), now) or not state.claim(KEY, WEEK, now):
        return False
    gaps = recent_gaps(pipeline.knowledge, 7.0, now)
    text = render.escape(reports.gaps_text(gaps, reports.DIGEST_HEADING))
    client.chat_postMessage(channel=channel, text=text, unfurl_links=False, unfurl_media=False)
    log.info("weekly gap digest posted to %s (%d topics)", channel, len(gaps))
    return True


def start(client: WebClient, pipeline: Pipeline, channel: str, every: float = CHECK_EVERY) -> threading.Event:
    """Check for a due digest now and every `every` seconds in a daemon thread; set the returned event to stop."""
    stop = threading.Event()

    def run() -> None:
        while not stop.is_set():
            try:
                tick(client, pipeline, channel)
            except Exception:  # the bot goes on answering; a digest claimed but not posted waits for next week
                log.exception("posting the weekly gap digest to %s failed", channel)
            stop.wait(every)

    threading.Thread(target=run, name="verbatim-digest", daemon=True).start()
    return stop
