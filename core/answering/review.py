"""Review dates: when a document's text should be checked again, and whether that date has passed.

A document says how often with `review_every` in its metadata (`180d`, `12 weeks`, `6 months`,
`1 year`; a bare number is days; `never` opts out); without one, `VERBATIM_REVIEW_DAYS`
applies (0, the default: no review date). The clock starts at the document's `as_of`
(an ISO date, `2026-10-01`), or, when it names none, at the file's date when it was indexed.
"""

from __future__ import annotations

import calendar
import contextlib
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import date, timedelta
from typing import Literal

from core.common.answers import Statement
from core.common.values import Hit

_PERIOD = re.compile(r"^(\d{1,5})\s*(d|days?|w|wks?|weeks?|mo|mos|months?|y|yrs?|years?)?$")
_NEVER = ("never", "none", "no", "off", "0")


@dataclass(frozen=True)
class Period:
    """A review period in days or calendar months (so `6 months` from 31 Aug is 28 or 29 Feb)."""

    count: int
    unit: Literal["day", "month"]

    def after(self, start: date) -> date:
        if self.unit == "day":
            return start + timedelta(days=self.count)
        year, month = divmod(start.month - 1 + self.count, 12)
        year += start.year
        return date(year, month + 1, min(start.day, calendar.monthrange(year, month + 1)[1]))


def parse_period(text: str) -> Period | None:
    """`180d`, `12 weeks`, `6 months`, `1 year` (a bare number is days); None for `never`; ValueError otherwise."""
    value = " ".join(text.lower().split())
    if value in _NEVER:
        return None
    found = _PERIOD.match(value)
    if not found or int(found[1]) == 0:
        raise ValueError(f"review_every {text!r} is not a period such as 180d, 12 weeks, 6 months or 1 year")
    count, unit = int(found[1]), (found[2] or "d")
    if unit.startswith("w"):
        return Period(count * 7, "day")
    if unit.startswith("mo"):
        return Period(count, "month")
    if unit.startswith("y"):
        return Period(count * 12, "month")
    return Period(count, "day")


def parse_date(text: str | None) -> date | None:
    """An ISO date (`2026-10-01`, or the date part of an ISO timestamp); None when there is none or it isn't one."""
    if not text:
        return None
    try:
        return date.fromisoformat(text.strip()[:10])
    except ValueError:
        return None


def dated(as_of: str | None, modified: str | None) -> str | None:
    """The date a document speaks for, as ISO: its `as_of`, else the file's date; None when neither is a date."""
    day = parse_date(as_of) or parse_date(modified)
    return day.isoformat() if day else None


def review_due(since: str | None, review_every: str | None, default_days: int) -> date | None:
    """When a document dated `since` should be reviewed; None when it has no date or no review period.

    A `review_every` that can't be read counts as absent here (the default applies); `verbatim
    status` reports it.
    """
    start = parse_date(since)
    if start is None:
        return None
    period: Period | None = Period(default_days, "day") if default_days > 0 else None
    if review_every and review_every.strip():
        with contextlib.suppress(ValueError):
            period = parse_period(review_every)
    return period.after(start) if period else None


def past_review(since: str | None, review_every: str | None, default_days: int, today: date | None = None) -> bool:
    """True when the review date has passed (the day itself still counts as on time)."""
    due = review_due(since, review_every, default_days)
    return due is not None and (today or date.today()) > due


def date_quotes(
    statements: Sequence[Statement], hits: Sequence[Hit], default_days: int, today: date | None = None
) -> tuple[Statement, ...]:
    """Each quote with the date its document speaks for, flagged `stale` when that document is past review."""
    fragments = {hit.fragment_id: hit.fragment for hit in hits}
    dated_statements = []
    for statement in statements:
        quotes = []
        for quote in statement.quotes:
            fragment = fragments.get(quote.fragment_id)
            if fragment is not None:
                since = dated(fragment.as_of, fragment.modified)
                stale = past_review(since, fragment.review_every, default_days, today)
                quote = replace(quote, as_of=since, stale=stale)
            quotes.append(quote)
        dated_statements.append(replace(statement, quotes=tuple(quotes)))
    return tuple(dated_statements)
