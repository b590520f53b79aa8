"""Text helpers shared by ingestion, retrieval and the answerers: sentences and captions."""

from __future__ import annotations

import re
from collections.abc import Callable

SECTION_SEPARATOR = " › "
# A sentence ends at . ! or ? followed by space and something that can start a sentence.
_SENTENCE_END = re.compile(r"(?<=[.!?…])[\"'”’)\]]?\s+(?=[\"'“‘(\[]?[A-Z0-9À-Þ])")
# A table row as the readers write it (`Header: value; Header: value`) is one unit, never cut.
TABLE_ROW = re.compile(r"[^:;]{1,80}: [^;]*(?:; [^:;]{1,80}: [^;]*)+")


def mb(size: float) -> str:
    """A size in bytes as people read it in a sentence: "1,953.1 MB"."""
    return f"{size / 1e6:,.1f} MB"


def split_sentences(text: str) -> list[str]:
    """Sentences of a paragraph; each list line also stands alone, and a table row stays whole."""
    sentences: list[str] = []
    for line in text.split("\n"):
        if TABLE_ROW.fullmatch(line.strip()):
            sentences.append(line.strip())
            continue
        sentences.extend(s.strip() for s in _cut(line) if s.strip())
    return sentences


# A full stop that ends no sentence: an abbreviation ("z. B.", "ca.", "e.g.", "Mo.", "Dr."), a number's
# label before its number ("Nr. 4", "p. 12"), or an ordinal in a date ("am 3. März", "bis 31. Dezember").
_ABBREVIATION = re.compile(
    r"\b(?:[zdui]|z\. ?B|d\. ?h|u\. ?a|z\. ?T|e\.g|i\.e|ca|bzw|ggf|inkl|zzgl|evtl|vgl|approx|incl"
    r"|Mo|Di|Mi|Do|Fr|Sa|So|Mr|Mrs|Ms|Dr|St|Str|Tel|Abs)\.$"
)
_NUMBER_LABEL = re.compile(r"\b(?:Nr|No|S|s|p|pp)\.$")
_ORDINAL = re.compile(r"\b\d{1,2}\.$")
_MONTH = re.compile(
    r"(?:Januar|Jänner|Februar|März|April|Mai|Juni|Juli|August|September|Oktober|November|Dezember"
    r"|janvier|février|mars|avril|mai|juin|juillet|août|septembre|octobre|novembre|décembre)\b"
)


def _cut(line: str) -> list[str]:
    """`line` cut where a sentence ends: after . ! ? …, unless the full stop ends an abbreviation or an ordinal.

    Each check reads only the few characters before the full stop, so a long line costs linear time."""
    pieces, start = [], 0
    for end in _SENTENCE_END.finditer(line):
        stop = end.start()
        while stop > start and line[stop - 1] in "\"'”’)]":
            stop -= 1
        tail, after = max(start, stop - 12), end.end()
        if _ABBREVIATION.search(line, tail, stop):
            continue
        if _NUMBER_LABEL.search(line, tail, stop) and line[after : after + 1].isdigit():
            continue
        if _ORDINAL.search(line, tail, stop) and _MONTH.match(line, after):
            continue
        pieces.append(line[start : end.start()])
        start = end.end()
    pieces.append(line[start:])
    return pieces


def caption(title: str, section: tuple[str, ...], position: int, of: int, page: int | None = None) -> str:
    """`Document › Section · fragment k of n` (with `· p. N` for paged formats), shown under every quote."""
    where = f" · p. {page}" if page is not None else ""
    return f"{SECTION_SEPARATOR.join((title, *section))}{where} · fragment {position} of {of}"


# Lower-case letters of the Latin and Cyrillic alphabets, accented ones included ("kündigung" is one word,
# not "k" and "ndigung"), and digits; "²" and "×" are not letters.
_TERM = re.compile(r"[a-z0-9\u00df-\u00f6\u00f8-\u024f\u0430-\u045f\u0491]+(?:[.,][0-9]+)*")
_STOPWORDS = """
    a about above after again all also am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for from
    further had has have having he her here hers him his how i if in into is it
    its itself just me more most my no nor not of off on once only or other our
    ours out over own same she should so some such than that the their theirs them then there
    these they this those through to too under until up very was we were what when where which
    while who whom why will with would you your yours us much many get got give tell please
    thanks hi hello one ones way kind need want like know
"""
STOPWORDS = frozenset(_STOPWORDS.split())


def stem(word: str) -> str:
    """A light plural stemmer: enough to match "wardrobes" with "wardrobe", "vanities" with "vanity"."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def key_terms(text: str) -> set[str]:
    """Content words and figures, lightly stemmed.

    Only English function words are left out. Leaving out a German or French question's too was measured
    and dropped: with the multilingual embedder, the overlap then rose for near misses as much as for
    answers (refused de 92.6 % → 85.2 %, fr 87.5 % → 68.8 %; correct de +2.4 points, fr ±0)."""
    return {stem(word) for word in _TERM.findall(text.lower()) if word not in STOPWORDS}


# Chosen on the calibration split (evals/calibration/): 4, 5 and 6 letters gave correct de 50.0 / 48.6 / 45.7 %,
# fr 58.3 % / 58.3 % / 56.2 %, refused de 84.6 / 88.5 / 88.5 %, fr 70.0 / 75.0 / 75.0 % (whole words: 38.6 %
# and 52.1 % correct, 88.5 % and 75.0 % refused). Five keeps every refusal.
TRUNCATED = 5


def overlap_terms(language: str | None) -> Callable[[str], set[str]]:
    """How a question's terms are matched with a sentence's: English words lightly stemmed; in another language,
    words cut to their first TRUNCATED letters, the stemmer that needs no grammar ("Kündigung", "kündigen")."""
    if language in (None, "en"):
        return key_terms
    return lambda text: {term[:TRUNCATED] for term in key_terms(text)}
