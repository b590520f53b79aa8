"""What staff-only documents tell that no public one does: prices, opening hours, terms.

A surface that answers customers (Telegram, Slack's public channels) reads public documents only, and a
document is staff-only unless it says `audience: public`; a spreadsheet, PDF or Word file says so in a sidecar.
A price list kept as `price-list.xlsx` without one is invisible to customers, and nothing else tells. The check
is meant to be explained in one sentence, so each kind is read plainly from a fragment's text:
- prices: an amount with a currency (`35 EUR`, `€40`), as the figures barrier reads them;
- opening hours: a weekday's name or a time of day (`Monday`, `Samstag`, `9:00`, `6 pm`, `18 Uhr`);
- terms: warranty, return, refund or cancellation words.
A kind counts as missing only when no indexed public fragment has it: staff-only prices beside a public price
list are the staff's own business.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from core.answering.figures import read_figures
from core.common.settings import Settings
from core.common.values import Fragment
from core.store import existing_store

KINDS = ("prices", "hours", "terms")

_HOURS = re.compile(
    r"\b(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday"
    r"|montag|dienstag|mittwoch|donnerstag|freitag|samstag|sonnabend|sonntag"
    r"|lundi|mardi|mercredi|jeudi|vendredi|samedi|dimanche"
    r"|lunes|martes|miércoles|miercoles|jueves|viernes|sábado|sabado|domingo)s?\b"
    r"|\b(?:[01]?\d|2[0-3]):[0-5]\d\b|\b(?:1[0-2]|0?[1-9])\s?(?:am|pm|a\.m\.|p\.m\.)|\b(?:[01]?\d|2[0-3])\s?uhr\b",
    re.IGNORECASE,
)
_TERMS = re.compile(
    r"\b(?:warrant|guarantee|return|refund|cancel"
    r"|garantie|gewährleistung|rückgabe|widerruf|erstatt|umtausch|storn"
    r"|rembours|rétractation|retourn"
    r"|garantía|devoluci|reembols|desistimiento)\w*",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Shortfall:
    """A kind of answer (`prices`, `hours` or `terms`) that staff-only documents hold and no public one does."""

    kind: str
    documents: tuple[str, ...]  # the staff-only documents that hold it, by path, in index order


def kinds_of(text: str) -> set[str]:
    """Which of prices, opening hours and terms a text states."""
    found = set()
    if any(reading.unit.money for reading in read_figures(text)):
        found.add("prices")
    if _HOURS.search(text):
        found.add("hours")
    if _TERMS.search(text):
        found.add("terms")
    return found


def shortfalls(fragments: Iterable[Fragment]) -> list[Shortfall]:
    """The kinds that only staff-only fragments state, each with the documents that state it."""
    public: set[str] = set()
    staff: dict[str, dict[str, None]] = {kind: {} for kind in KINDS}
    for fragment in fragments:
        kinds = kinds_of(fragment.text)
        if fragment.audience == "public":
            public |= kinds
        else:
            for kind in kinds:
                staff[kind][fragment.document] = None
    return [Shortfall(kind, tuple(staff[kind])) for kind in KINDS if staff[kind] and kind not in public]


def public_shortfalls(settings: Settings) -> list[Shortfall]:
    """`shortfalls` over the index of `settings.data_dir` as it stands (none before anything is indexed)."""
    store = existing_store(settings.data_dir, settings.database_url, settings.database_wait)
    if store is None:
        return []
    try:
        return shortfalls(fragment for _, fragment in store.index.load().each())
    finally:
        store.close()
