"""Acknowledgements before answers: an answer waits for a lull in Slack's requests before it starts.

Slack wants each request acknowledged within 3 seconds, and sends a burst of them at once when a
channel gets busy or when it redelivers what it thinks timed out. Acknowledging one is about a
millisecond of Python and one read of the store; answering one is tens of milliseconds of CPU (the
extractive answerer) and several writes to the same store. In one process the two share the
interpreter's lock and the store's, so answers started in the middle of a burst slow every
acknowledgement behind them: 250 requests at once were acknowledged with a p99 over 1.1 s, and
over 3 s on a busy machine (docs/benchmarks.md).

So the answer executor holds each answer until no request is being acknowledged and none has been
for `QUIET` seconds, but never longer than `LONGEST` seconds after it was handed over: a stream of
requests that never pauses delays answers, it does not starve them. `QUIET` is several times one
acknowledgement's cost under load, so the gaps inside a burst don't open the gate; it is also what
a lone question waits before its answer starts.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

QUIET = 0.02
LONGEST = 2.0  # well inside the 150 s event lease and the answer's own deadline


class Lull:
    """Counts the requests being acknowledged; `wait` returns once answering won't slow them."""

    def __init__(self, quiet: float = QUIET, longest: float = LONGEST, clock: Callable[[], float] = time.monotonic):
        self.quiet = quiet
        self.longest = longest
        self.clock = clock
        self._changed = threading.Condition()
        self._acknowledging = 0
        self._last = float("-inf")
        self.held = 0  # answers waiting at the moment

    @contextmanager
    def acknowledging(self) -> Iterator[None]:
        """Around the work that decides one request's acknowledgement."""
        with self._changed:
            self._acknowledging += 1
        try:
            yield
        finally:
            with self._changed:
                self._acknowledging -= 1
                self._last = self.clock()
                self._changed.notify_all()

    def holds(self, asked: float, now: float) -> float:
        """How much longer an answer handed over at `asked` waits at `now`; 0 when it may start."""
        left = asked + self.longest - now
        if left <= 0:
            return 0.0
        if self._acknowledging:
            return left  # woken when that acknowledgement is done
        return max(0.0, min(left, self._last + self.quiet - now))

    def wait(self, asked: float) -> None:
        """Return when an answer handed over at `asked` may start."""
        with self._changed:
            self.held += 1
            try:
                while (pause := self.holds(asked, self.clock())) > 0:
                    self._changed.wait(pause)
            finally:
                self.held -= 1
