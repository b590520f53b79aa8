"""Slack listeners, one module per surface: messages (mentions and DMs), the /ask command, actions,
and the admins' /verbatim command.

Every listener acknowledges at once and answers in a lazy listener, because Slack wants an
acknowledgement within 3 seconds and answering can take longer; the lazy listeners run on an
executor of their own, after a lull in acknowledgements (bot/slack/__init__.py). Listeners are top-level
functions; what they need arrives as the `deps` argument, which a middleware puts into
Bolt's context (and which lazy listeners share rather than copy).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from contextlib import nullcontext

from slack_bolt import App, BoltResponse
from slack_bolt.middleware import Middleware
from slack_bolt.request import BoltRequest

from bot.slack.listeners import actions, admin, commands, messages
from bot.slack.listeners.common import Deps, answered_key
from bot.slack.listeners.messages import catalogue_about, question_text, tell
from core import ACK_WAIT, StoreUnavailable, VerbatimError

__all__ = ["Deps", "question_text", "register"]

log = logging.getLogger(__name__)


class _Inject(Middleware):
    """Puts `deps` into every request's context, and answers each event id once across processes."""

    def __init__(self, deps: Deps) -> None:
        self.deps = deps

    def process(self, *, req: BoltRequest, resp: BoltResponse, next: Callable[[], BoltResponse]) -> BoltResponse:
        # Counted until its listeners are on the executors, which count them on: a shutdown waits for both.
        self.deps.in_flight.enter()
        try:
            # Answers wait while a request is acknowledged (bot/slack/lull.py); a refusal while stopping holds none.
            with nullcontext() if self.deps.in_flight.closed else self.deps.lull.acknowledging():
                return self._process(req, next)
        finally:
            self.deps.in_flight.leave()

    def _process(self, req: BoltRequest, next: Callable[[], BoltResponse]) -> BoltResponse:
        req.context["deps"] = self.deps
        event_id = req.body.get("event_id") if isinstance(req.body, dict) else None
        if not event_id:
            return next()
        if self.deps.in_flight.closed:
            # Shutting down: not acknowledged, so Slack sends it again, to another replica or to this one restarted.
            log.info("event %s left for Slack to deliver again: shutting down", event_id)
            return BoltResponse(status=503, body="")
        if not self.deps.accepted.accept(event_id):  # a redelivery to this process: known without the store
            log.info("skipping redelivered event %s", event_id)
            return BoltResponse(status=200, body="")
        try:
            # Slack redelivers events it thinks timed out; the store remembers ids for every process on it.
            # Before the acknowledgement only this read: it skips an event answered already, and shows that
            # the store answers. The lease that makes one process the answerer is a write, taken by the answer
            # (`take_event`): a burst of acknowledgements never waits on the disk.
            answered = self.deps.pipeline.state.linked(answered_key(event_id), wait=ACK_WAIT) is not None
        except StoreUnavailable as exc:
            # Not acknowledged, so Slack delivers it again (after about 1 and 5 minutes), to this replica or
            # another; the first delivery after the database is back is answered, once. The asker hears of
            # the wait once: on Slack's first delivery, which one replica gets.
            self.deps.accepted.drop(event_id)
            log.warning("event %s left for Slack to deliver again: %s", event_id, exc)
            if not req.headers.get("x-slack-retry-num") and isinstance(req.body.get("event"), dict):
                event = req.body["event"]
                tell(
                    req.context.client, event, req.context, f"⏳ {catalogue_about(event)('error.unavailable_retrying')}"
                )
            return BoltResponse(status=503, body="")
        except VerbatimError as exc:
            # The store answers but can't be used (its file can't be reopened): every delivery would fail the
            # same way, and a 500 only makes Slack send it again. The asker is told once, and the event acknowledged.
            log.error("event %s can't be answered: %s", event_id, exc)
            if not req.headers.get("x-slack-retry-num") and isinstance(req.body.get("event"), dict):
                event = req.body["event"]
                tell(req.context.client, event, req.context, f"⚠️ {catalogue_about(event)('error.apology')}")
            return BoltResponse(status=200, body="")
        if answered:
            log.info("skipping redelivered event %s", event_id)
            return BoltResponse(status=200, body="")
        req.context["event_id"] = event_id
        return next()


def register(app: App, deps: Deps) -> None:
    """Attach every Verbatim listener to a Bolt app."""
    app.use(_Inject(deps))
    messages.register(app, deps)
    commands.register(app, deps)
    actions.register(app, deps)
    admin.register(app, deps)
