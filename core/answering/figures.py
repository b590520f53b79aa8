"""Figures in a statement: every amount, price, percentage, duration, date or count it states
must stand in the quotes that back it.

A figure is compared by value, not by spelling: `1,200`, `1 200` and `1200` are one figure,
`€40`, `40 EUR` and `40.00 EUR` another (the currency sign is not part of the value), `five`
and `5` a third. A percentage must be a percentage in the quote too; a month named next to a
number (`1 March 2024`) must be named or numbered in the quote. Words for nothing to pay
(`free`, `no charge`) are the figure 0. What a statement writes as `one` or `first` is not
checked: as figures they are too easily just words ("one of our fronts").

Figures are also read here with the unit their own words give them (`read_figures`: "310 EUR per running
metre" is EUR per m), for calculations and for matching a question's quantities to the table row whose
range holds them (`fits_figures`: 40 km is in "15 to 50 km").
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


# --- figures with their units ------------------------------------------------------------------


@dataclass(frozen=True)
class Unit:
    """A figure's unit: money (`EUR`), a measure (`m`), a rate per measure (`EUR per m`), a percentage, or none."""

    money: str = ""
    measure: str = ""
    per: str = ""
    percent: bool = False

    @property
    def plain(self) -> bool:
        return self == Unit()

    @property
    def is_quantity(self) -> bool:
        """A measure with nothing per it: `3 m`, `30 km`."""
        return bool(self.measure) and not self.money and not self.per

    def __str__(self) -> str:
        if self.percent:
            return "%"
        head = self.money or _SHOWN.get(self.measure, self.measure)
        return f"{head} per {_SHOWN_PER.get(self.per, self.per)}" if self.per else head


_CURRENCIES = {"eur": "EUR", "euro": "EUR", "euros": "EUR", "€": "EUR", "usd": "USD", "$": "USD", "gbp": "GBP"}
_CURRENCIES |= {"£": "GBP", "chf": "CHF", "sek": "SEK", "nok": "NOK", "dkk": "DKK", "pln": "PLN", "jpy": "JPY"}
_MEASURE_WORDS = {
    "m2": ["m2", "sqm", "sq m", "square metre", "square metres", "square meter", "square meters"],
    "m3": ["m3", "cubic metre", "cubic metres", "cubic meter", "cubic meters"],
    "km": ["km", "kilometre", "kilometres", "kilometer", "kilometers"],
    "cm": ["cm", "centimetre", "centimetres"],
    "mm": ["mm", "millimetre", "millimetres"],
    "m": ["m", "metre", "metres", "meter", "meters", "running metre", "running metres", "running meter"],
    "m ": ["running meters", "linear metre", "linear metres"],
    "kg": ["kg", "kilo", "kilos", "kilogram", "kilograms"],
    "h": ["h", "hr", "hrs", "hour", "hours"],
    "day": ["day", "days", "working day", "working days"],
    "week": ["week", "weeks"],
    "month": ["month", "months"],
    "year": ["year", "years"],
    "floor": ["floor", "floors", "storey", "storeys"],
}
_MEASURES = {alias: unit.strip() for unit, aliases in _MEASURE_WORDS.items() for alias in aliases}
_SHOWN = {"m2": "m²", "m3": "m³", "day": "days", "week": "weeks", "month": "months", "year": "years", "floor": "floors"}
_SHOWN_PER = {"m2": "m²", "m3": "m³"}

_CUR = "|".join(re.escape(c) for c in sorted(_CURRENCIES, key=len, reverse=True))
_MEAS = "|".join(re.escape(m).replace(r"\ ", r"\s+") for m in sorted(_MEASURES, key=len, reverse=True))
_AFTER = re.compile(
    rf"\s*(?:(?P<cur>{_CUR})(?![A-Za-z])|(?P<measure>(?<=[\d\s]){_MEAS})(?![A-Za-z0-9]))?"
    rf"(?:\s*(?:(?:per|a|an)\s+|/\s*)(?P<per>{_MEAS})(?![A-Za-z0-9]))?",
    re.IGNORECASE,
)
_AGAIN = re.compile(r"\s+per\b", re.IGNORECASE)  # "45 EUR per hour per fitter": a rate with a second condition
_BEFORE = re.compile(rf"(?:^|[^A-Za-z])(?P<cur>{_CUR})\s?$", re.IGNORECASE)


@dataclass(frozen=True)
class Reading:
    """One figure as read from a text: its value (a percentage as a fraction), its unit, its own words."""

    value: Decimal
    unit: Unit
    text: str  # "310 EUR per running metre", as the text writes it
    written: Decimal  # the number as written (40 for 40 %), for showing
    start: int
    end: int
    qualified: bool = False  # a second "per"/"each" follows ("45 EUR per hour per fitter"): not a simple rate


def read_figures(text: str) -> list[Reading]:
    """The figures of `text` with the unit its own words give each one."""
    text = prepare(text)
    readings: list[Reading] = []
    for number in numbers(text):
        if number.percent:
            unit = Unit(percent=True)
            value = number.value / 100
            end = number.end
            qualified = False
        else:
            after = _AFTER.match(text, number.end)
            before = _BEFORE.search(text[max(0, number.start - 6) : number.start])
            currency = (after and after["cur"]) or (before and before["cur"]) or ""
            money = _CURRENCIES.get(currency.lower(), "") if currency else ""
            per = _MEASURES.get(_fold(after["per"])) if after and after["per"] else ""
            measure = _MEASURES.get(_fold(after["measure"])) if after and after["measure"] else ""
            unit = Unit(money=money, measure=measure or "", per=per or "")
            value = number.value
            end = after.end() if after and (after["cur"] or after["per"] or after["measure"]) else number.end
            qualified = bool(after and after["per"] and _AGAIN.match(text, after.end()))
        start = number.start
        if before_match := _BEFORE.search(text[max(0, start - 6) : start]):
            start -= len(text[max(0, start - 6) : start]) - before_match.start("cur")
        readings.append(Reading(value, unit, text[start:end].strip(), number.value, start, end, qualified))
    return readings


def _fold(words: str) -> str:
    return " ".join(words.lower().split())


# Words before a figure that make it a limit, not an amount: "up to 15 km", "over 6,000 EUR", "15 to 50 km".
UPPER_WORDS = re.compile(
    r"(?:up to|under|below|less than|shorter than|no more than|within|at most|max(?:imum)?)\s*$", re.IGNORECASE
)
LOWER_WORDS = re.compile(
    r"(?:over|beyond|above|more than|longer than|greater than|exceeding|from|at least|min(?:imum)?(?: of)?)\s*$",
    re.IGNORECASE,
)
_RANGE_FROM = re.compile(r"(\d[\d,.]*)\s*(?:to|-|–)\s*$")


def bounds(text: str, reading: Reading) -> tuple[Decimal, Decimal | None] | None:
    """The interval a figure bounds ("15 to 50 km" → 15..50, "up to 15 km" → 0..15), or None for a plain mention."""
    before = text[max(0, reading.start - 30) : reading.start]
    if m := _RANGE_FROM.search(before):
        low = read_figures(m.group(1))
        return (low[0].value if low else Decimal(0)), reading.value
    if UPPER_WORDS.search(before):
        return Decimal(0), reading.value
    if LOWER_WORDS.search(before):
        return reading.value, None
    return None
