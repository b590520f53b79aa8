"""A graceful stop for both Slack modes: what this process has taken on, and how it lets go of it.

On SIGTERM (a deploy, a dyno restart, `docker stop`) the process takes no new events, finishes the
answers under way within a grace period ($VERBATIM_SHUTDOWN_GRACE, 8 s by default: under
`docker stop`'s 10 s before it kills), and tells the askers of any it could not finish, removing
their ⏳, before it exits 0. Slack sends a refused event again, to another replica or to this one
once it is back.

Two counts make "under way" exact. `busy` counts what Bolt is doing: every dispatch (from the
first middleware until its lazy listeners have been handed to the answer executor) and every task on
the app's two executors (acks, and lazy answers: bot/slack/__init__.py), so an event acknowledged a
moment before the signal is waited for even if its answer has not started. `begin`/`end` register
each question being answered, with how to apologise for it, and `claim` settles the race between an
answer that arrives late and the apology: exactly one of them is posted.
"""

from __future__ import annotations

import functools
import itertools
import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from bot.slack.lull import Lull

log = logging.getLogger(__name__)

# An answer that has begun posting when the grace period ends is let finish: it is one or two Web API
# calls (the SDK's own timeout is 30 s; a healthy Slack answers in well under a second).
POSTING_WAIT = 5.0


@dataclass
class _Question:
    say: Callable[[str], None]
    undo: Callable[[], None] | None
    posting: bool = False
    given_up: bool = False


class InFlight:
    """The events, dispatches and answers this process has under way."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._busy = 0
        self._questions: dict[int, _Question] = {}
        self._tickets = itertools.count()
        self.closed = False  # set on shutdown: new events are refused, so Slack sends them again

    # --- Bolt's work ---------------------------------------------------------------------------------

    def enter(self) -> None:
        with self._changed:
            self._busy += 1

    def leave(self) -> None:
        with self._changed:
            self._busy -= 1
            self._changed.notify_all()

    # --- the questions being answered ----------------------------------------------------------------

    def begin(self, say: Callable[[str], None], undo: Callable[[], None] | None = None) -> int:
        """Register a question; `say` tells its asker a sentence, `undo` clears what it left (the ⏳)."""
        with self._changed:
            ticket = next(self._tickets)
            self._questions[ticket] = _Question(say, undo)
            return ticket

    def claim(self, ticket: int) -> bool:
        """True when the answer may be posted; False when the shutdown apologised for it instead."""
        with self._changed:
            question = self._questions[ticket]
            question.posting = not question.given_up
            return question.posting

    def end(self, ticket: int) -> None:
        with self._changed:
            self._questions.pop(ticket, None)
            self._changed.notify_all()

    # --- shutdown ----------------------------------------------------------------------------------

    def close(self, grace: float, sentence: str) -> int:
        """Refuse new events, wait up to `grace` s for the work under way, then tell each asker whose answer
        has not begun posting `sentence` and undo its ⏳. Returns how many were given up."""
        deadline = time.monotonic() + grace
        with self._changed:
            self.closed = True
            while (self._busy or self._questions) and (left := deadline - time.monotonic()) > 0:
                self._changed.wait(left)
            given_up = [q for q in self._questions.values() if not q.posting]
            for question in given_up:
                question.given_up = True
            deadline = time.monotonic() + POSTING_WAIT
            while any(q.posting for q in self._questions.values()) and (left := deadline - time.monotonic()) > 0:
                self._changed.wait(left)
        for question in given_up:
            _quietly(question.say, sentence)
            if question.undo is not None:
                _quietly(question.undo)
        return len(given_up)


def _quietly(call: Callable[..., Any], *args: Any) -> None:
    """A shutdown goes on past a Slack call that fails (the failure is logged by the call itself or here)."""
    try:
        call(*args)
    except Exception:
        log.warning("a Slack call failed during shutdown", exc_info=True)


class CountingExecutor(ThreadPoolExecutor):
    """A Bolt executor counting each task into `in_flight` until it has finished; with a `lull`, each task
    (an answer) starts only once the requests being acknowledged let it (bot/slack/lull.py)."""

    def __init__(
        self, in_flight: InFlight, max_workers: int = 5, name: str = "slack-listener", lull: Lull | None = None
    ) -> None:  # 5: Bolt's own default
        super().__init__(max_workers=max_workers, thread_name_prefix=name)
        self.in_flight = in_flight
        self.lull = lull

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        if self.lull is not None:
            fn = functools.partial(_after_lull, self.lull, self.lull.clock(), fn)
        self.in_flight.enter()
        try:
            future = super().submit(fn, *args, **kwargs)
        except BaseException:
            self.in_flight.leave()
            raise
        future.add_done_callback(lambda _: self.in_flight.leave())
        return future


def _after_lull(lull: Lull, asked: float, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    lull.wait(asked)
    return fn(*args, **kwargs)
