"""The calculations the extractive answerer proposes for the shapes of priced question a customer asks most.

A quantity in the question × a per-unit price in the best quote; the sum of two or three prices asked for
together ("worktop with delivery"); a percentage of a quoted amount, or a quoted percentage of an amount the
question states. Each is only proposed: core/answering/calculations.py computes and checks it. Here too are the words
of a question that name an item, so that no price of oak is quoted for "laminate".
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal

from core.answering.figures import LOWER_WORDS, Reading, bounds, prepare, read_figures
from core.answering.policy import DEFAULT
from core.common.answers import Assumption, Claim, FigureInput, Proposal, StatedInput
from core.common.text import key_terms
from core.common.values import Hit

ASKS_AMOUNT = re.compile(r"\b(how much|costs?|price|prices|pay|charge|total|come to|altogether)\b", re.IGNORECASE)
_TOTAL = re.compile(r"\b(total|altogether|in all|together|combined|all in|overall)\b", re.IGNORECASE)
_ADDS = re.compile(r"\b(with|plus|including)\b|\+", re.IGNORECASE)
_ITEMS = re.compile(r"\b(?:and|with|plus|including)\b|\+|,", re.IGNORECASE)  # where the items of an order split
_DISCOUNT = re.compile(r"\b(discount|off|less|reduction|reduced)\b", re.IGNORECASE)
_SHARE = re.compile(r"\bof\s+$|^\s*(?:of|off)\b", re.IGNORECASE)  # "advance of 40%", "40% of the total", "5% off"
# Words of a priced question that name no item: the rest must all be found where a price is taken from.
ASKING = frozenset(
    re.findall(
        r"\w+",
        "cost costs price prices priced total pay charge charged come altogether together combined overall discount off"
        " less away live far buy order make add including plus incl would amount sum extra fee fees rate",
    )
)


@dataclass(frozen=True)
class _Term:
    number: int
    sentence: str
    price: Reading
    quantity: Reading | None  # multiplies a price per its unit
    ranged: tuple[Reading, ...]  # quantities that fall in a range the sentence prices


def _priced(number: int, sentence: str, quantities: list[Reading]) -> _Term | None:
    """The sentence's one price and how the part's quantities go with it; None when that is not sure."""
    text = prepare(sentence)
    readings = read_figures(sentence)
    prices = [r for r in readings if r.unit.money]
    if len(prices) != 1 or prices[0].qualified or bounds(text, prices[0]) is not None:
        return None  # two prices, a rate with a second condition, or a threshold ("over 6,000 EUR")
    price = prices[0]
    quantity, ranged = None, []
    for q in quantities:
        mentions = [r for r in readings if r.unit.is_quantity and r.unit.measure == q.unit.measure]
        if price.unit.per == q.unit.measure and not mentions and quantity is None:
            quantity = q
        elif mentions:
            limits = [bounds(text, r) for r in mentions]
            fits = [lim for lim in limits if lim and lim[0] <= q.value and (lim[1] is None or q.value <= lim[1])]
            if None in limits or not fits:
                return None  # the sentence names another figure in that unit: it may be about another case
            ranged.append(q)
        else:
            return None  # a quantity this price says nothing about
    if price.unit.per and quantity is None:
        return None  # a price per m with no length to multiply
    return _Term(number, sentence, price, quantity, tuple(ranged))


def _topic(text: str, asked: Sequence[Reading]) -> set[str]:
    """The words naming what is priced: the key terms, less the words of asking and the figures with a unit
    (a bare number stays: "the 180 x 90 table" is not the 220 × 100 one)."""
    terms = key_terms(text) - ASKING - {t for r in asked if not r.unit.plain for t in key_terms(r.text)}
    return {t for t in terms if len(t) > 1}  # not the x of "180 x 90"


def _common(a: str, b: str) -> int:
    """How many leading letters two words share."""
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


def named(text: str, terms: set[str]) -> set[str]:
    """The terms `text` names, allowing a changed ending (carry/carried)."""
    words = key_terms(text)
    return {
        term
        for term in terms
        if term in words or any((c := _common(term, w)) >= 4 and c >= min(len(term), len(w)) - 2 for w in words)
    }


def _covers(fragment: Hit, terms: set[str]) -> bool:
    """Whether the fragment (its text and headings) names every term."""
    f = fragment.fragment
    return named(" ".join([f.title, *f.section, f.text]), terms) == terms


def unknown_item(question: str, hits: Sequence[Hit]) -> bool:
    """A price asked for a quantity of something no retrieved fragment names ("4 m of laminate worktop").

    Quoting the price of the oak worktop beside it would read as an answer; there is nothing to price it from.
    """
    if not ASKS_AMOUNT.search(question):
        return False
    asked = read_figures(question)
    if not any(r.unit.is_quantity for r in asked):
        return False
    return any(not any(_covers(hit, {term}) for hit in hits) for term in _topic(question, asked))


def _free_above(hits: Sequence[Hit], numbers: set[int]) -> Decimal | None:
    """The lowest order value above which the fragments priced from say something becomes free."""
    limits = []
    for number in numbers:
        text = prepare(hits[number - 1].fragment.text)
        if re.search(r"\bfree\b", text, re.IGNORECASE):
            limits += [r.value for r in read_figures(text) if r.unit.money and LOWER_WORDS.search(text[: r.start])]
    return min(limits) if limits else None


def propose(
    question: str,
    hits: Sequence[Hit],
    chosen: Sequence[Claim],
    rank: Callable[[list[str]], list[list[tuple[float, int, str]]]],
) -> tuple[list[Claim], list[Proposal]]:
    """The extra claims and the calculation for the shapes a customer asks most, or nothing when unsure.

    `rank` scores the retrieved sentences for each part of the question, best first.
    """
    if not chosen or not ASKS_AMOUNT.search(question):
        return [], []
    asked = read_figures(question)
    percents = [r for r in asked if r.unit.percent]
    amounts = [r for r in asked if r.unit.money]
    if len(amounts) == 1 and not percents:
        share = _share_of_stated(question, asked, amounts[0], chosen)
        return [], [share] if share else []
    if amounts or len(percents) > 1:
        return [], []
    terms = _price_terms(question, asked, hits, rank)
    if not terms:
        return [], []
    if len(terms) == 1 and terms[0].quantity is None and not percents:
        return [], []  # a single flat price: there is nothing to compute
    if len({(t.number, t.sentence) for t in terms}) < len(terms):
        return [], []  # two items priced by one sentence: they can't both be it
    proposal = _priced_proposal(question, terms, percents, hits)
    if proposal is None:
        return [], []
    extra = [Claim(t.sentence, t.number, t.sentence) for t in terms if all(c.quote != t.sentence for c in chosen)]
    return extra, [proposal]


def _share_of_stated(question: str, asked: list[Reading], amount: Reading, chosen: Sequence[Claim]) -> Proposal | None:
    """A quoted percentage of an amount the question states: "an 8,000 EUR order, how much is the advance?"."""
    topic = _topic(question, asked)
    for claim in chosen:
        text = prepare(claim.quote)
        shares = [
            r
            for r in read_figures(claim.quote)
            if r.unit.percent
            and (_SHARE.search(text[max(0, r.start - 12) : r.start]) or _SHARE.search(text[r.end :]))
            # the question's word right before it: "the advance is 40%", not "the balance of 60%"
            and topic & key_terms(text[max(0, r.start - 25) : r.start])
        ]
        if any(r.unit.money for r in read_figures(claim.quote)) or len(shares) != 1:
            continue
        shared = (("amount", StatedInput(amount.text)), ("share", FigureInput(claim.fragment, shares[0].text)))
        return Proposal("share", "amount * share", shared)
    return None


def _price_terms(
    question: str,
    asked: list[Reading],
    hits: Sequence[Hit],
    rank: Callable[[list[str]], list[list[tuple[float, int, str]]]],
) -> list[_Term]:
    """One sure price per item asked for ("worktop with delivery": two), or [] when any item has none."""
    parts = [p.strip() for p in _ITEMS.split(question) if _topic(p, asked)]
    summing = 2 <= len(parts) <= 3 and bool(_TOTAL.search(question) or _ADDS.search(question))
    if not summing:
        parts = [question]
    terms: list[_Term] = []
    for part, ranking in zip(parts, rank(parts), strict=True):
        quantities = [r for r in read_figures(part) if r.unit.is_quantity]
        topic = _topic(part, asked)
        fitting: list[tuple[int, _Term]] = []
        for value, number, sentence in ranking[: DEFAULT.priced_candidates]:
            if value < ranking[0][0] - DEFAULT.candidate_margin:
                break
            # Every word naming the item must be where its price is: no price of oak for "laminate".
            if _covers(hits[number - 1], topic) and (term := _priced(number, sentence, quantities)):
                fitting.append((len(named(sentence, topic)), term))
        # The sentence naming the item best ("Oak bench: 690 EUR" over "oak dining table" for "oak bench");
        # two naming it equally well with different prices ("3 m of worktop": oak? beech?) are not sure.
        fitting.sort(key=lambda pair: -pair[0])
        if not fitting:
            return []  # one item without a sure price: quote, don't compute
        best, term = fitting[0]
        if any(n == best and (t.price.value, t.price.unit) != (term.price.value, term.price.unit) for n, t in fitting):
            return []
        terms.append(term)
    return terms


def _priced_proposal(
    question: str, terms: list[_Term], percents: list[Reading], hits: Sequence[Hit]
) -> Proposal | None:
    """The sum of the terms (each a price, or a quantity × a price per unit), with a stated percentage applied."""
    inputs: list[tuple[str, FigureInput | StatedInput]] = []
    pieces: list[str] = []
    assumptions: list[Assumption] = []
    total = Decimal(0)
    for i, term in enumerate(terms, start=1):
        inputs.append((f"price_{i}", FigureInput(term.number, term.price.text)))
        if term.quantity is not None:
            inputs.append((f"quantity_{i}", StatedInput(term.quantity.text)))
            pieces.append(f"quantity_{i} * price_{i}")
            total += term.quantity.value * term.price.value
        else:
            pieces.append(f"price_{i}")
            total += term.price.value
        for q in term.ranged:
            assumptions.append(
                Assumption(f"{q.text} is in the range of “{term.sentence}”", f"the question states {q.text}")
            )
    free = _free_above(hits, {t.number for t in terms if t.quantity is None})
    if free is not None and total >= free:
        return None  # a fee the documents waive above some order value: not sure it applies
    expression = " + ".join(pieces)
    name = "total" if len(terms) > 1 else "price"
    if percents:
        inputs.append(("rate", StatedInput(percents[0].text)))
        discount = bool(_DISCOUNT.search(question))
        base = f"({expression})" if len(pieces) > 1 else expression
        expression = f"{base} * (1 - rate)" if discount else f"{base} * rate"
        name = "after discount" if discount else "share"
    if len(terms) > 1:
        assumptions.append(
            Assumption("no other charge, minimum or waiver applies", "the total adds only the prices quoted")
        )
    return Proposal(name, expression, tuple(inputs), tuple(assumptions))
