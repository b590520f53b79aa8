"""Whether a question's quantities fit a candidate: "40 km" is in "Zone B, 15 to 50 km", not in "Zone A, up to 15
km: 40 EUR"; "14 radiators" is not in "up to 10 radiators". The figures and their units are read by figures.py;
this module decides, from them, which rows and sentences can answer a question that states a quantity.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from core.answering.figures import Reading, Unit, bounds, prepare, read_figures
from core.answering.policy import DEFAULT

# A count's noun ("14 radiators", "up to 3 gas appliances"): a word of letters right after a bare number.
_NOUN = re.compile(r"\s*([^\W\d_]{3,})")
# Words after a number that are no noun it counts ("10 to 14", "3 or 4", "2 and more").
_NOT_COUNTED = frozenset(
    {"and", "or", "to", "the", "per", "for", "from", "und", "oder", "bis", "pro", "les", "des", "et", "ou", "au"}
    | {"por", "hasta"}
)


def counted(text: str, readings: Sequence[Reading] | None = None) -> list[Reading]:
    """The bare numbers of `text` that count something it names right after them, each as a quantity whose measure
    is that noun: "powerflush for 14 radiators" against "Job: Powerflush, up to 10 radiators; Price: £480". Read
    beside the units code knows, for ranges only; never in a calculation. `readings`: `read_figures(text)`, when
    the caller has them already."""
    prepared = prepare(text)
    found = []
    for reading in read_figures(text) if readings is None else readings:
        if not reading.unit.plain or not (noun := _NOUN.match(prepared, reading.end)):
            continue
        word = noun[1].lower()
        if word not in _NOT_COUNTED:
            found.append(replace(reading, unit=Unit(measure="#" + word[: DEFAULT.count_stem])))
    return found


def _with_counts(text: str) -> list[Reading]:
    """Every figure of `text` as code reads it, and again as a count where a noun follows a bare one."""
    readings = read_figures(text)
    return readings + counted(text, readings)


def stated_quantities(text: str) -> list[Reading]:
    """The measured quantities a question states ("40 km", "a 120 cm door"), counts of a named thing included
    ("for 14 radiators")."""
    return [r for r in _with_counts(text) if r.unit.is_quantity]


def fits_figures(quantities: Sequence[Reading], sentence: str) -> bool | None:
    """Whether a sentence's figures in the units a question asks about hold its quantities: 40 km is in
    "Zone B, 15 to 50 km", not in "Zone A, up to 15 km: 40 EUR"; the 180 cm table is not the 220 cm one.

    None when the sentence names no figure in those units (nothing to go by); False when it names some and
    none is the asked value or a range holding it.
    """
    if not quantities:
        return None
    text = prepare(sentence)
    readings = _with_counts(sentence)
    fits, misses = False, False
    for q in quantities:
        mentions = [r for r in readings if r.unit.is_quantity and r.unit.measure == q.unit.measure]
        if q.unit.measure.startswith("#"):
            # A count decides by a range only ("up to 10 radiators"): "30 jours" is no other case of "15 jours"
            # to code that reads limits in English words alone.
            mentions = [r for r in mentions if r.value == q.value or bounds(text, r)]
        if not mentions:
            continue
        # The value itself, in its unit or bare ("180 × 90 cm"), but never as an amount of money.
        same = [r for r in readings if r.value == q.value and (r.unit.plain or r.unit.measure == q.unit.measure)]
        if same or _in_a_range(q, text, mentions):
            fits = True
        elif ":" in sentence:
            # A row of a table or a price list ("Zone A, up to 15 km: 40 EUR") is indexed by its figures; in
            # running text another figure in the unit may be about something else ("at least 6 weeks in
            # advance" for 2 weeks of leave), so it decides nothing.
            misses = True
    # Several values asked ("for 10 km? and for 40 km?"): a row that holds one of them still answers.
    return True if fits else (False if misses else None)


def row_holds(quantities: Sequence[Reading], sentence: str) -> bool:
    """Whether a row of a price list or table ("Zone B, 15 to 50 km: 85 EUR") is the one whose range, in the
    asked unit, holds a quantity the question states (30 km): code has then checked what the row is about."""
    if not quantities or ":" not in sentence:
        return False
    text = prepare(sentence)
    readings = _with_counts(sentence)
    return any(
        _in_a_range(q, text, [r for r in readings if r.unit.is_quantity and r.unit.measure == q.unit.measure])
        for q in quantities
    )


def _in_a_range(quantity: Reading, text: str, mentions: Sequence[Reading]) -> bool:
    """Whether one of the mentions, figures in the quantity's measure, bounds a range that holds its value."""
    limits = [bounds(text, r) for r in mentions]
    return any(lim and lim[0] <= quantity.value and (lim[1] is None or quantity.value <= lim[1]) for lim in limits)
