"""The embedded default answerer: quotes the retrieved sentences that best answer the question.

No model is called. Each sentence of the retrieved fragments is scored by its embedding's
similarity to the question (the sentence is embedded with its document and section, as
fragments are) plus the share of the question's key terms and figures it holds. When no
sentence reaches the found-threshold the answer is `found = false`: loosely related text is
not quoted as an answer.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal

from core.answers import Assumption, Claim, Draft, FigureInput, Proposal, StatedInput, Turn, standalone
from core.calculations import Reading, read_figures
from core.embeddings import Embedder
from core.figures import prepare
from core.judge import Judge, candidate_text
from core.retrieval import Hit, quotable_sentences
from core.settings import DEFAULT_FOUND_THRESHOLD, DEFAULT_JUDGE_THRESHOLD
from core.text import key_terms

MAX_STATEMENTS = 4
PER_FRAGMENT = 2
# A sentence within this much of the best one is also worth quoting (compound questions).
NEAR_BEST = 0.08
# A part of a compound question may quote a little below the found-threshold: the whole passed it.
PART_MARGIN = 0.08
LEXICAL_WEIGHT = 0.35
# How many of the best candidates by similarity the judge reads: 4 refused more near misses than 8 or 16 on
# two of the three gold sets, for one answer fewer on the demo (see core/data/judge/MODEL_CARD.md).
JUDGED = 4
# The judge vetoes and corrects what similarity proposes; it does not pick the quotes itself: picking, it quoted
# another item's price more often than similarity does (demo correct 79.1 % against 90.7 %, MODEL_CARD.md).
# The judge replaces similarity's first quote when it rates that one under REPLACE_BELOW and another candidate
# at REPLACE_WITH or more: +1.2 and +3.7 points of correct on the policies and ClapNQ, -2.3 of first quote
# correct on the demo (core/data/judge/MODEL_CARD.md).
REPLACE_BELOW = 0.5
REPLACE_WITH = 0.85
# Another accepted sentence is quoted too when the judge rates it at least this share of the best.
ALSO_ACCEPTED = 0.9

Scored = tuple[float, int, str]  # (score, 1-based hit number, sentence)

_BULLET = re.compile(r"^\s*(?:[-*+•]|\d+[.)])\s+")
# Where a compound question splits into parts that each deserve their own quote.
_CLAUSE = re.compile(
    r"[?;]|,\s*(?:and\s+)?(?=(?:what|how|when|where|which|who|is|are|do|does|can|will)\b)"
    r"|\band\s+(?=(?:what|how|when|where|which|who|is|are|do|does|can|will)\b)",
    re.IGNORECASE,
)


class ExtractiveAnswerer:
    """Picks quotable sentences; goes through the same verifier as any answerer."""

    name = "extractive"

    def __init__(
        self,
        embedder: Embedder,
        found_threshold: float = DEFAULT_FOUND_THRESHOLD,
        judge: Judge | None = None,
        judge_threshold: float = DEFAULT_JUDGE_THRESHOLD,
    ) -> None:
        # Give it the knowledge base's CachedEmbedder: the question was just embedded for retrieval,
        # and the same fragments' sentences come back for many questions.
        self.embedder = embedder
        self.found_threshold = found_threshold
        self.judge = judge
        self.judge_threshold = judge_threshold

    def rewrite(self, question: str, history: Sequence[Turn]) -> tuple[str, int]:
        joined = standalone(question, history)
        if self.judge is None or joined == question:
            return joined, 0
        return resolve_follow_up(question, history[-1].question, joined), 0

    def _score(self, questions: list[str], hits: Sequence[Hit]) -> list[list[tuple[float, int, str]]]:
        candidates: list[tuple[int, str, str]] = []
        for number, hit in enumerate(hits, start=1):
            candidates.extend((number, bare, embedded) for bare, embedded in quotable_sentences(hit.fragment))
        if not candidates:
            return [[] for _ in questions]
        sentence_vectors = self.embedder.embed([c[2] for c in candidates])
        sentence_terms = [key_terms(c[1]) for c in candidates]
        results = []
        for question, q_vector in zip(questions, self.embedder.embed(questions), strict=True):
            similarity = sentence_vectors @ q_vector
            q_terms = key_terms(question)
            scored = []
            for (number, bare, _), terms, sim in zip(candidates, sentence_terms, similarity, strict=True):
                # Overlap is counted on the sentence itself: its headings are shared by its neighbours.
                overlap = len(q_terms & terms) / len(q_terms) if q_terms else 0.0
                scored.append((float(sim) + LEXICAL_WEIGHT * overlap, number, bare))
            scored.sort(key=lambda item: -item[0])
            results.append(scored)
        return results

    def _judged(
        self, question: str, ranking: list[Scored], hits: Sequence[Hit], naming: frozenset[str] | set[str] = frozenset()
    ) -> list[Scored]:
        """The best `JUDGED` candidates by similarity, re-scored by the judge and ranked by it; with `naming`,
        only the candidates whose sentence or headings name those terms."""
        assert self.judge is not None
        quantities = _quantities(question)

        def eligible(candidate: Scored) -> bool:
            # A sentence whose figures in the asked unit say another case ("up to 15 km" for 40 km) doesn't answer.
            if fits_figures(quantities, candidate[2]) is False:
                return False
            f = hits[candidate[1] - 1].fragment
            return not naming or _named(" ".join([f.title, *f.section, candidate[2]]), set(naming)) == naming

        top = [c for c in ranking if eligible(c)][:JUDGED]
        texts = [
            candidate_text(hits[number - 1].fragment.title, hits[number - 1].fragment.section, bare)
            for _, number, bare in top
        ]
        probabilities = self.judge.score(question, texts)
        judged = [(float(p), number, bare) for p, (_, number, bare) in zip(probabilities, top, strict=True)]
        judged.sort(key=lambda item: -item[0])
        return judged

    def answer(self, question: str, hits: Sequence[Hit]) -> Draft:
        if self.judge is not None and (about := _ABOUT.fullmatch(question)) and key_terms(about["prefix"]):
            # "…hinges? and what about the finish?": the question moves to the finish; the quote must name it.
            asked = f"{about['prefix'].strip().rstrip('?.!')} {about['topic'].strip()}"
            return self._answer_moved(asked, hits, key_terms(about["topic"]))
        parts = [p.strip() for p in _CLAUSE.split(question) if key_terms(p)]
        if len(parts) <= 1 and unknown_item(question, hits):
            return Draft(found=False)
        rankings = self._score([question, *parts] if len(parts) > 1 else [question], hits)
        if self.judge is None:
            return self._answer_by_similarity(question, rankings, hits)
        return self._answer_vetted(question, parts, rankings, hits)

    def _answer_vetted(
        self, question: str, parts: list[str], rankings: list[list[Scored]], hits: Sequence[Hit]
    ) -> Draft:
        """Similarity proposes, as without the judge; the judge refuses it when none of the best candidates
        answers, and puts its own best first when it finds similarity's first quote wanting."""
        # A sentence whose figures in the asked unit say another case ("up to 15 km" for 40 km) doesn't answer.
        asked_texts = [question, *parts] if len(parts) > 1 else [question]
        rankings = [
            [c for c in ranking if fits_figures(_quantities(text), c[2]) is not False]
            for text, ranking in zip(asked_texts, rankings, strict=True)
        ]
        draft = self._answer_by_similarity(question, rankings, hits)
        judged = self._judged(question, rankings[0], hits)
        best = judged[0][0] if judged else 0.0
        if draft.found and best < self.judge_threshold and not draft.calculations:
            # Similar enough, but none of the best candidates answers it: "how long is the warranty?" against
            # the repair rate after the warranty ends. A calculation was checked by code against its quotes.
            return Draft(found=False)
        if draft.found and not draft.calculations and best >= REPLACE_WITH:
            rated = {(n, b): p for p, n, b in judged}
            first = draft.claims[0]
            if rated.get((first.fragment, first.quote), 1.0) < REPLACE_BELOW:
                _, number, sentence = judged[0]
                rest = tuple(c for c in draft.claims if c.quote != sentence)
                draft = Draft(True, (Claim(sentence, number, sentence), *rest)[:MAX_STATEMENTS], draft.model_calls)
        return draft

    def _answer_by_similarity(self, question: str, rankings: list[list[Scored]], hits: Sequence[Hit]) -> Draft:
        scored = rankings[0]
        if not scored or scored[0][0] < self.found_threshold:
            return Draft(found=False)
        chosen: list[Claim] = []
        per_fragment: dict[int, int] = {}

        def take(value: float, number: int, sentence: str) -> None:
            fits = len(chosen) < MAX_STATEMENTS and per_fragment.get(number, 0) < PER_FRAGMENT
            if fits and all(c.quote != sentence for c in chosen):
                per_fragment[number] = per_fragment.get(number, 0) + 1
                chosen.append(Claim(sentence, number, sentence))

        take(*scored[0])
        # Each part of a compound question ("what does it cost, and how heavy is it?") gets its best quote.
        for ranking in rankings[1:]:
            fresh = [r for r in ranking if all(c.quote != r[2] for c in chosen)]
            if fresh and fresh[0][0] >= self.found_threshold - PART_MARGIN:
                take(*fresh[0])
        best = scored[0][0]
        for value, number, sentence in scored[1:]:
            if value < max(self.found_threshold, best - NEAR_BEST):
                break
            take(value, number, sentence)
        return self._found(question, chosen, hits)

    def _found(self, question: str, chosen: list[Claim], hits: Sequence[Hit]) -> Draft:
        """The chosen quotes with the calculation a priced question asks for, if one is sure."""
        extra, proposals = propose(question, hits, chosen, lambda questions: self._score(questions, hits))
        claims = [*chosen, *extra]
        if proposals:
            # A computed answer shows the quotes its figures come from, not the neighbours that scored near them.
            inputs = [source for p in proposals for _, source in p.inputs if isinstance(source, FigureInput)]
            used = [c for c in claims if any(i.fragment == c.fragment and i.figure in c.quote for i in inputs)]
            claims = used or claims
        return Draft(found=True, claims=tuple(claims), calculations=tuple(proposals))

    def _answer_moved(self, question: str, hits: Sequence[Hit], naming: set[str]) -> Draft:
        """A follow-up moved to a new topic ("…hinges? and what about the finish?"): only a sentence whose text
        or headings name the topic may answer, the judge decides among them, and what it accepts is quoted,
        best first."""
        judged = self._judged(question, self._score([question], hits)[0], hits, naming)
        if not judged:
            return Draft(found=False)
        accepted = [j for j in judged if j[0] >= max(self.judge_threshold, judged[0][0] * ALSO_ACCEPTED)]
        if not accepted:
            return Draft(found=False)
        chosen: list[Claim] = []
        for _, number, sentence in accepted:
            if len(chosen) < MAX_STATEMENTS and sum(c.fragment == number for c in chosen) < PER_FRAGMENT:
                chosen.append(Claim(sentence, number, sentence))
        return self._found(question, chosen, hits)


# --- follow-ups: what "it" is, and where "what about…" moves the question -----------------------------

# "…? and what about the finish?": after a question that ended (a follow-up joined to it), the last clause
# moves it to a new topic. "How much is X, and how about delivery?" is one compound question, not this.
_ABOUT = re.compile(
    r"(?P<prefix>.*?[\w)][?.!])\s+(?:and\s+|but\s+|so\s+)?(?:what|how)\s+about\s+(?P<topic>[^?]+?)\s*\??\s*",
    re.IGNORECASE | re.DOTALL,
)
_PRONOUN = re.compile(r"\b(it|that|this|them|those|these|one|ones)\b", re.IGNORECASE)
_LEAD = re.compile(r"^\s*(?:and|also|but|or|so)\b[\s,]*", re.IGNORECASE)
_WORD = re.compile(r"[\w'’-]+")


def _topic_phrase(question: str) -> str:
    """What a question is about, as its words: the longest run of topic words, the last of equal ones
    ("How much is a solid oak worktop?" → "solid oak worktop"; "the warranty on hinges" → "hinges")."""
    runs: list[list[str]] = [[]]
    for word in _WORD.findall(question):
        if key_terms(word) - _ASKING and not word.isdigit():
            runs[-1].append(word)
        elif runs[-1]:
            runs.append([])
    best = max(reversed(runs), key=len)
    return " ".join(best)


def resolve_follow_up(question: str, previous: str, joined: str) -> str:
    """A follow-up as one question: "and how heavy is a 3 m one?" after the oak worktop is "How heavy is a
    3 m solid oak worktop?", so the judge weighs what is asked now, not the question before it.

    "…what about X?" stays joined (the answerer moves it to X); without a pronoun to resolve, it stays joined.
    """
    if _ABOUT.fullmatch(joined) or not (pronoun := _PRONOUN.search(question)):
        return joined
    phrase = _topic_phrase(previous)
    if not phrase:
        return joined
    replacement = phrase if pronoun[1].lower() in ("one", "ones") else f"the {phrase}"
    resolved = _LEAD.sub("", question[: pronoun.start()] + replacement + question[pronoun.end() :])
    return resolved[:1].upper() + resolved[1:]


# --- calculations: the common shapes, proposed for the code to check ---------------------------------

_ASKS_AMOUNT = re.compile(r"\b(how much|costs?|price|prices|pay|charge|total|come to|altogether)\b", re.IGNORECASE)
_TOTAL = re.compile(r"\b(total|altogether|in all|together|combined|all in|overall)\b", re.IGNORECASE)
_ADDS = re.compile(r"\b(with|plus|including)\b|\+", re.IGNORECASE)
_ITEMS = re.compile(r"\b(?:and|with|plus|including)\b|\+|,", re.IGNORECASE)  # where the items of an order split
_DISCOUNT = re.compile(r"\b(discount|off|less|reduction|reduced)\b", re.IGNORECASE)
# Words before a figure that make it a limit, not an amount: "up to 15 km", "over 6,000 EUR", "15 to 50 km".
_UPPER = re.compile(
    r"(?:up to|under|below|less than|shorter than|no more than|within|at most|max(?:imum)?)\s*$", re.IGNORECASE
)
_LOWER = re.compile(
    r"(?:over|beyond|above|more than|longer than|greater than|exceeding|from|at least|min(?:imum)?(?: of)?)\s*$",
    re.IGNORECASE,
)
_FROM = re.compile(r"(\d[\d,.]*)\s*(?:to|-|–)\s*$")
_SHARE = re.compile(r"\bof\s+$|^\s*(?:of|off)\b", re.IGNORECASE)  # "advance of 40%", "40% of the total", "5% off"
# Words of a priced question that name no item: the rest must all be found where a price is taken from.
_ASKING = frozenset(
    re.findall(
        r"\w+",
        "cost costs price prices priced total pay charge charged come altogether together combined overall discount off"
        " less away live far buy order make add including plus incl would amount sum extra fee fees rate",
    )
)
CANDIDATES = 4  # how far down a part's ranking a priced sentence may be found
CANDIDATE_MARGIN = 0.15


def _limit(text: str, reading: Reading) -> tuple[Decimal, Decimal | None] | None:
    """The interval a figure bounds ("15 to 50 km" → 15..50, "up to 15 km" → 0..15), or None for a plain mention."""
    before = text[max(0, reading.start - 30) : reading.start]
    if m := _FROM.search(before):
        low = read_figures(m.group(1))
        return (low[0].value if low else Decimal(0)), reading.value
    if _UPPER.search(before):
        return Decimal(0), reading.value
    if _LOWER.search(before):
        return reading.value, None
    return None


def _quantities(text: str) -> list[Reading]:
    """The measured quantities a question states ("40 km", "a 120 cm door")."""
    return [r for r in read_figures(text) if r.unit.is_quantity]


def fits_figures(quantities: Sequence[Reading], sentence: str) -> bool | None:
    """Whether a sentence's figures in the units a question asks about hold its quantities: 40 km is in
    "Zone B, 15 to 50 km", not in "Zone A, up to 15 km: 40 EUR"; the 180 cm table is not the 220 cm one.

    None when the sentence names no figure in those units (nothing to go by); False when it names some and
    none is the asked value or a range holding it.
    """
    if not quantities:
        return None
    text = prepare(sentence)
    readings = read_figures(sentence)
    fits, misses = False, False
    for q in quantities:
        mentions = [r for r in readings if r.unit.is_quantity and r.unit.measure == q.unit.measure]
        if not mentions:
            continue
        # The value itself, in its unit or bare ("180 × 90 cm"), but never as an amount of money.
        same = [r for r in readings if r.value == q.value and (r.unit.plain or r.unit.measure == q.unit.measure)]
        limits = [_limit(text, r) for r in mentions]
        inside = any(lim and lim[0] <= q.value and (lim[1] is None or q.value <= lim[1]) for lim in limits)
        if same or inside:
            fits = True
        elif ":" in sentence:
            # A row of a table or a price list ("Zone A, up to 15 km: 40 EUR") is indexed by its figures; in
            # running text another figure in the unit may be about something else ("at least 6 weeks in
            # advance" for 2 weeks of leave), so it decides nothing.
            misses = True
    # Several values asked ("for 10 km? and for 40 km?"): a row that holds one of them still answers.
    return True if fits else (False if misses else None)


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
    if len(prices) != 1 or prices[0].qualified or _limit(text, prices[0]) is not None:
        return None  # two prices, a rate with a second condition, or a threshold ("over 6,000 EUR")
    price = prices[0]
    quantity, ranged = None, []
    for q in quantities:
        mentions = [r for r in readings if r.unit.is_quantity and r.unit.measure == q.unit.measure]
        if price.unit.per == q.unit.measure and not mentions and quantity is None:
            quantity = q
        elif mentions:
            limits = [_limit(text, r) for r in mentions]
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
    terms = key_terms(text) - _ASKING - {t for r in asked if not r.unit.plain for t in key_terms(r.text)}
    return {t for t in terms if len(t) > 1}  # not the x of "180 x 90"


def _common(a: str, b: str) -> int:
    """How many leading letters two words share."""
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


def _named(text: str, terms: set[str]) -> set[str]:
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
    return _named(" ".join([f.title, *f.section, f.text]), terms) == terms


def unknown_item(question: str, hits: Sequence[Hit]) -> bool:
    """A price asked for a quantity of something no retrieved fragment names ("4 m of laminate worktop").

    Quoting the price of the oak worktop beside it would read as an answer; there is nothing to price it from.
    """
    if not _ASKS_AMOUNT.search(question):
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
            limits += [r.value for r in read_figures(text) if r.unit.money and _LOWER.search(text[: r.start])]
    return min(limits) if limits else None


def propose(
    question: str,
    hits: Sequence[Hit],
    chosen: Sequence[Claim],
    rank: Callable[[list[str]], list[list[tuple[float, int, str]]]],
) -> tuple[list[Claim], list[Proposal]]:
    """The extra claims and the calculation for the shapes a customer asks most, or nothing when unsure.

    Shapes: a quantity in the question × a per-unit price in the best quote; the sum of two or three
    prices asked for together ("worktop with delivery"); a percentage of a quoted amount, or a quoted
    percentage of an amount the question states.
    """
    if not chosen or not _ASKS_AMOUNT.search(question):
        return [], []
    asked = read_figures(question)
    percents = [r for r in asked if r.unit.percent]
    amounts = [r for r in asked if r.unit.money]
    if len(amounts) == 1 and not percents:
        # A quoted percentage of an amount the question states: "an 8,000 EUR order, how much is the advance?"
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
            shared = (("amount", StatedInput(amounts[0].text)), ("share", FigureInput(claim.fragment, shares[0].text)))
            return [], [Proposal("share", "amount * share", shared)]
        return [], []
    if amounts or len(percents) > 1:
        return [], []
    parts = [p.strip() for p in _ITEMS.split(question) if _topic(p, asked)]
    summing = 2 <= len(parts) <= 3 and bool(_TOTAL.search(question) or _ADDS.search(question))
    if not summing:
        parts = [question]
    rankings = rank(parts)
    terms: list[_Term] = []
    for part, ranking in zip(parts, rankings, strict=True):
        quantities = [r for r in read_figures(part) if r.unit.is_quantity]
        topic = _topic(part, asked)
        fitting: list[tuple[int, _Term]] = []
        for value, number, sentence in ranking[:CANDIDATES]:
            if value < ranking[0][0] - CANDIDATE_MARGIN:
                break
            # Every word naming the item must be where its price is: no price of oak for "laminate".
            if _covers(hits[number - 1], topic) and (term := _priced(number, sentence, quantities)):
                fitting.append((len(_named(sentence, topic)), term))
        # The sentence naming the item best ("Oak bench: 690 EUR" over "oak dining table" for "oak bench");
        # two naming it equally well with different prices ("3 m of worktop": oak? beech?) are not sure.
        fitting.sort(key=lambda pair: -pair[0])
        if not fitting:
            return [], []  # one item without a sure price: quote, don't compute
        named, term = fitting[0]
        if any(n == named and (t.price.value, t.price.unit) != (term.price.value, term.price.unit) for n, t in fitting):
            return [], []
        terms.append(term)
    if len(terms) == 1 and terms[0].quantity is None and not percents:
        return [], []  # a single flat price: there is nothing to compute
    if len({(t.number, t.sentence) for t in terms}) < len(terms):
        return [], []  # two items priced by one sentence: they can't both be it
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
        return [], []  # a fee the documents waive above some order value: not sure it applies
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
    extra = [Claim(t.sentence, t.number, t.sentence) for t in terms if all(c.quote != t.sentence for c in chosen)]
    return extra, [Proposal(name, expression, tuple(inputs), tuple(assumptions))]
