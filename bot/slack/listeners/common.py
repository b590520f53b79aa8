"""What every Slack listener shares: its dependencies, and how it replies and reacts."""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot import presenter
from bot.asking import Asker, Notice, Reply, failure
from bot.slack import render
from bot.slack.config import SlackSettings
from bot.slack.drain import InFlight
from bot.slack.lull import Lull
from core import SCOPES, Pipeline, VerbatimError

log = logging.getLogger(__name__)

SURFACE = "slack"


class Accepted:
    """The events this process accepted: a redelivery of one is acknowledged and skipped without asking the
    store, which a burst of redeliveries would otherwise queue on. One that this process gives back (the
    store down before the acknowledgement, or another process holding its lease) is dropped, and the store
    decides its next delivery. Kept `keep` seconds, past Slack's last redelivery (about 5 minutes after the
    first); the store's answered mark covers anything later.
    """

    def __init__(self, keep: float = 600.0, clock: Callable[[], float] = time.monotonic) -> None:
        self.keep = keep
        self.clock = clock
        self._at: OrderedDict[str, float] = OrderedDict()  # oldest first
        self._lock = threading.Lock()

    def accept(self, event_id: str) -> bool:
        """True the first time this process sees `event_id` (within `keep` s), False for a redelivery."""
        with self._lock:
            now = self.clock()
            while self._at and (oldest := next(iter(self._at.items())))[1] <= now - self.keep:
                del self._at[oldest[0]]
            if event_id in self._at:
                return False
            self._at[event_id] = now
            return True

    def drop(self, event_id: str) -> None:
        with self._lock:
            self._at.pop(event_id, None)


@dataclass(frozen=True)
class Deps:
    """What the listeners need: shared services, never copied (Bolt deep-copies context for lazy listeners)."""

    pipeline: Pipeline
    settings: SlackSettings
    voice: presenter.Voice
    asker: Asker
    in_flight: InFlight = field(default_factory=InFlight)  # what a shutdown waits for (bot/slack/drain.py)
    lull: Lull = field(default_factory=Lull)  # what the answers wait for (bot/slack/lull.py)
    accepted: Accepted = field(default_factory=Accepted)  # the events this process acknowledged to answer

    def __deepcopy__(self, memo: dict[int, Any]) -> Deps:
        return self

    def scope_for(self, channel: str) -> frozenset[str]:
        return SCOPES["public"] if channel in self.settings.public_channels else SCOPES["internal"]


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


def answer_with(
    deps: Deps,
    question: str,
    channel: str,
    conversation: str | None,
    say: Callable[[str], None],
    post: Callable[[Reply], None],
    undo: Callable[[], None] | None = None,
) -> None:
    """Answer `question` asked in `channel`: `post` the answer, or `say` the sentence in its place.

    Posting can fail too (blocks Slack refuses, a channel just archived): that is one more sentence.
    A shutdown that can't wait for the answer says its own sentence instead and calls `undo`.
    """
    ticket = deps.in_flight.begin(say, undo)
    try:
        outcome = deps.asker.reply(question, deps.scope_for(channel), conversation)
        if not deps.in_flight.claim(ticket):
            return  # the shutdown told the asker instead
        if isinstance(outcome, Notice):
            say(outcome.line)
        else:
            post(outcome)
    except Exception as exc:
        say(failure(exc, "posting a Slack answer").line)
    finally:
        deps.in_flight.end(ticket)


def react(client: WebClient, name: str, channel: str, ts: str, add: bool) -> None:
    try:
        (client.reactions_add if add else client.reactions_remove)(channel=channel, timestamp=ts, name=name)
    except SlackApiError as exc:  # a missing reaction scope must not cost the user the answer
        log.warning("could not %s the %s reaction: %s", "add" if add else "remove", name, exc.response.get("error"))


# How long a process that took an event holds it: longer than the slowest answer (an LLM answer has a 45 s
# deadline, its follow-up rewrite included), shorter than Slack's last redelivery, about 5 minutes after the
# first: the delivery after a crash finds the lease run out and is answered.
EVENT_LEASE_SECONDS = 150.0


def answered_key(event_id: str) -> str:
    """The store's mark that an event was answered (kept 30 days, like reply links)."""
    return f"slack-answered:{event_id}"


def take_event(deps: Deps, context: dict[str, Any]) -> bool:
    """Take the event being handled for this process, with a lease in the store (answered by one process
    whichever got its deliveries); False when another process holds it. The store's errors propagate.

    A process that died holding the lease lets it go when the lease runs out, and a later delivery is
    answered instead of lost.
    """
    event_id = context.get("event_id")
    if not event_id:
        return True
    if deps.pipeline.state.first_time(f"slack-event:{event_id}", ttl=EVENT_LEASE_SECONDS):
        return True
    deps.accepted.drop(event_id)  # the next delivery to this process asks the store again
    log.info("skipping event %s: another process has taken it", event_id)
    return False


def mark_answered(deps: Deps, context: dict[str, Any]) -> None:
    """Record that the event being handled was answered, so no later delivery is answered again."""
    event_id = context.get("event_id")
    if not event_id:
        return
    try:
        deps.pipeline.state.link(answered_key(event_id), "answered")
    except VerbatimError as exc:  # the database down, a full disk: the lease still keeps it from a second answer
        log.warning("could not mark event %s answered: %s", event_id, exc)
