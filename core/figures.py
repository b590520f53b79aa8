"""Figures in a statement: every amount, price, percentage, duration, date or count it states
must stand in the quotes that back it.

A figure is compared by value, not by spelling: `1,200`, `1 200` and `1200` are one figure,
`€40`, `40 EUR` and `40.00 EUR` another (the currency sign is not part of the value), `five`
and `5` a third. A percentage must be a percentage in the quote too; a month named next to a
number (`1 March 2024`) must be named or numbered in the quote. Words for nothing to pay
(`free`, `no charge`) are the figure 0. What a statement writes as `one` or `first` is not
checked: as figures they are too easily just words ("one of our fronts").
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

Value = tuple[str, Decimal]  # (kind, value): kind is "number", "percent" or "month"

_UNITS = "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
_UNITS += "seventeen eighteen nineteen"
_WORDS = {word: n for n, word in enumerate(_UNITS.split(" "))}
_TENS_WORDS = "twenty thirty forty fifty sixty seventy eighty ninety"
_TENS = {w: 10 * n for n, w in enumerate(_TENS_WORDS.split(" "), start=2)}
_ORDINAL_WORDS = "first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth"
_ORDINALS = {w: n for n, w in enumerate(_ORDINAL_WORDS.split(" "), start=1)}
_SCALES = {"hundred": 100, "thousand": 1000, "million": 10**6, "billion": 10**9}
_MONTHS = {
    name: n
    for n, names in enumerate(
        [
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ],
        start=1,
    )
    for name in names
}
_MONTH = "|".join(sorted(_MONTHS, key=len, reverse=True))
_WORD = "|".join(sorted([*_WORDS, *_TENS, *_ORDINALS], key=len, reverse=True))
_SCALE = "|".join(_SCALES)

# Digits are not part of a word (`m2`, `A4`, `CO2` are names, not figures). A group separator is
# a comma, an apostrophe or a (thin, no-break) space followed by exactly three digits; a comma
# otherwise is a decimal comma. `1.200` reads as 1.2, as in English.
_NUMBER = re.compile(
    rf"""
    (?<![^\W\d_])(?<![\d.,])
    (?P<digits>\d{{1,3}}(?:(?:,|'|\u2019|[ \u00a0\u202f\u2009])\d{{3}})+(?!\d)(?:\.\d+)?
      | \d+(?:[.,]\d+)?)
    (?:\s*(?P<scale>{_SCALE})\b)?
    (?:\s*(?P<percent>%|per\s?cent\b|percent\b|pct\b))?
    """,
    re.VERBOSE | re.IGNORECASE,
)
_NUMBER_WORD = re.compile(
    rf"\b(?P<word>{_WORD})(?:[- ](?P<unit>{'|'.join(list(_WORDS)[1:10])}))?\b"
    rf"(?:\s+(?P<scale>{_SCALE})\b)?(?:\s*(?P<percent>%|per\s?cent\b|percent\b))?",
    re.IGNORECASE,
)
_MONTH_NAME = re.compile(rf"\b(?P<month>{_MONTH})\b\.?", re.IGNORECASE)
_MONTH_BY_NUMBER = re.compile(
    rf"\d(?:st|nd|rd|th)?\.?\s+(?:of\s+)?(?P<after>{_MONTH})\b|\b(?P<before>{_MONTH})\.?\s+\d", re.IGNORECASE
)
_NOTHING_TO_PAY = re.compile(
    r"(?<![-\w])(?<!feel )(?:free(?:\s+of\s+charge)?|gratis|at\s+no\s+(?:extra\s+|additional\s+)?cost|"
    r"no\s+(?:extra\s+|additional\s+)?(?:charge|cost|fee)s?|costs?\s+nothing)(?![-\w])",
    re.IGNORECASE,
)
_UNCHECKED_WORDS = {"zero", "one", "first", "second"}  # in statements, too often not a figure


@dataclass(frozen=True)
class Figure:
    """One figure as a statement writes it, and the values any of which the quotes may hold."""

    text: str
    readings: tuple[frozenset[Value], ...]  # one reading must be wholly in the quotes


def _decimal(digits: str) -> Decimal | None:
    if re.fullmatch(r"\d+,\d+", digits) and not re.fullmatch(r"\d{1,3},\d{3}", digits):
        digits = digits.replace(",", ".")  # a decimal comma: 1,5 kg
    try:
        return Decimal(re.sub(r"[,'\u2019 \u00a0\u202f\u2009]", "", digits))
    except InvalidOperation:
        return None


def _number_readings(match: re.Match[str]) -> tuple[frozenset[Value], ...]:
    digits = match["digits"]
    kind = "percent" if match["percent"] else "number"
    scale = _SCALES[match["scale"].lower()] if match["scale"] else 1
    whole = _decimal(digits)
    readings: list[frozenset[Value]] = []
    if whole is not None:
        readings.append(frozenset({(kind, whole * scale)}))
    if re.search(r"\d[ \u00a0\u202f\u2009]\d", digits):
        # `6 120` may be one figure or two (six items at 120): either reading will do.
        parts = [Decimal(p) for p in re.split(r"[ \u00a0\u202f\u2009]", digits)]
        readings.append(frozenset({("number", p) for p in parts[:-1]} | {(kind, parts[-1] * scale)}))
    return tuple(readings)


def _word_value(match: re.Match[str]) -> Decimal:
    word = match["word"].lower()
    value = _WORDS.get(word, _TENS.get(word, _ORDINALS.get(word, 0)))
    if match["unit"]:
        value += _WORDS[match["unit"].lower()]
    if match["scale"]:
        value *= _SCALES[match["scale"].lower()]
    return Decimal(value)


def _prepare(text: str) -> str:
    # NFKC folds `m²` to `m2`, full-width digits to ASCII; dashes between figures split them.
    return unicodedata.normalize("NFKC", text)


def figures(statement: str) -> list[Figure]:
    """The figures a statement states, each with the readings that would back it."""
    text = _prepare(statement)
    found: list[Figure] = []
    for m in _NUMBER.finditer(text):
        found.append(Figure(m.group(0).strip(), _number_readings(m)))
    for m in _NUMBER_WORD.finditer(text):
        if m["word"].lower() in _UNCHECKED_WORDS and not (m["unit"] or m["scale"] or m["percent"]):
            continue
        kind = "percent" if m["percent"] else "number"
        found.append(Figure(m.group(0), (frozenset({(kind, _word_value(m))}),)))
    for m in _MONTH_BY_NUMBER.finditer(text):
        name = (m["after"] or m["before"]).lower()
        found.append(Figure(name, (frozenset({("month", Decimal(_MONTHS[name]))}),)))
    for m in _NOTHING_TO_PAY.finditer(text):
        found.append(Figure(m.group(0), (frozenset({("number", Decimal(0))}),)))
    return found


def values(quotes: Iterable[str]) -> set[Value]:
    """Every value the quotes hold, read as generously as a statement's figures are read strictly."""
    held: set[Value] = set()
    for quote in quotes:
        text = _prepare(quote)
        for m in _NUMBER.finditer(text):
            for reading in _number_readings(m):
                held |= reading
        for m in _NUMBER_WORD.finditer(text):
            held.add(("percent" if m["percent"] else "number", _word_value(m)))
        for m in _MONTH_NAME.finditer(text):
            held.add(("month", Decimal(_MONTHS[m["month"].lower()])))
        if _NOTHING_TO_PAY.search(text):
            held.add(("number", Decimal(0)))
    # A percentage is also a number (a statement's plain `5` may cite `5%`); a number up to 12
    # may be a month (`2024-03-01` backs "1 March 2024").
    for kind, value in list(held):
        if kind == "percent":
            held.add(("number", value))
        if kind == "number" and value == value.to_integral_value() and 1 <= value <= 12:
            held.add(("month", value))
    return held


def unquoted(statement: str, quotes: Iterable[str]) -> list[str]:
    """The statement's figures that none of its quotes holds, as the statement writes them."""
    stated = figures(statement)
    if not stated:
        return []
    held = values(quotes)
    return [f.text for f in stated if not any(reading <= held for reading in f.readings)]


@dataclass(frozen=True)
class Number:
    """One number as it stands in a text (read by `numbers`): its span, its value, whether it is a percentage."""

    start: int
    end: int
    value: Decimal
    percent: bool


def numbers(text: str) -> list[Number]:
    """The numbers written in digits in `text` (already NFKC-folded by `prepare`), read one way: as whole figures."""
    found: list[Number] = []
    for m in _NUMBER.finditer(text):
        whole = _decimal(m["digits"])
        if whole is None:
            continue
        scale = _SCALES[m["scale"].lower()] if m["scale"] else 1
        found.append(Number(m.start(), m.end(), whole * scale, bool(m["percent"])))
    return found


def prepare(text: str) -> str:
    """The form figures are read in: NFKC (`m²` → `m2`, full-width digits → ASCII)."""
    return _prepare(text)
