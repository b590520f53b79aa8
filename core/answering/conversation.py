"""A conversation's follow-ups as one question: whether a question stands alone (`standalone`), what "it" is,
which item "and the beech one?" swaps in, where "what about…" moves.

The extractive answerer asks a follow-up as the question these make of it, so the judge weighs what is asked
now, not the question before it (`resolve_follow_up`); the LLM answerer falls back on `standalone` when its
rewrite fails.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from core.answering.policy import DEFAULT
from core.answering.proposals import ASKING
from core.common.answers import Turn
from core.common.text import key_terms, stem

_REFERS_BACK = re.compile(
    r"^(and|also|what about|how about|same|but|or)\b|\b(that|it|this|those|these|them|there|one|ones)\b"
    # German, French and Spanish follow-ups start the same way: "und die junior suite?", "et pour 3 nuits ?",
    # "y cuanto tarda?"; or point back: "dafür", "davon", "ça", "celle-là", "eso".
    r"|^(und|aber|oder|et|mais|ou|y|e|pero|o)\b|\b(dafür|davon|dazu|ça|celui|celle|eso|esa|ese)\b"
)
_TOPIC_WORD = re.compile(r"[a-z]{3,}")
# German, French and Spanish words that name no topic, for counting a follow-up's own topic words.
_FOREIGN_FUNCTION = frozenset(
    [
        "und",
        "oder",
        "aber",
        "die",
        "der",
        "das",
        "den",
        "dem",
        "des",
        "ein",
        "eine",
        "einen",
        "für",
        "mit",
        "bei",
        "auch",
        "noch",
        "et",
        "ou",
        "mais",
        "les",
        "pour",
        "avec",
        "des",
        "une",
        "est",
        "los",
        "las",
        "para",
        "con",
        "del",
        "una",
        "pero",
        "como",
    ]
)


def standalone(question: str, history: Sequence[Turn]) -> str:
    """A follow-up ("and how much is delivery for that?") joined with the question before it.

    Only a question that can't stand alone is joined: one that refers back ("and…", "what
    about…", "that", "it", "one") and names at most two topic words of its own (figures and
    units don't count: "and how heavy is a 3 m one?"). A new question in the same thread, even
    one with an "it", must not drag the old topic along.
    """
    if not history or not _REFERS_BACK.search(question.lower()):
        return question
    own = {term for term in key_terms(question) if _TOPIC_WORD.fullmatch(term) and term not in _FOREIGN_FUNCTION}
    if len(own) > DEFAULT.own_topic_words:
        return question
    previous = history[-1].question
    if _MOVES.match(question) and not previous.rstrip().endswith(("?", ".", "!")):
        # "hotel limit for london" typed without its "?": the follow-up still moves to a new topic (`_ABOUT`).
        previous = previous.rstrip() + "?"
    return f"{previous} {question}"


# "what about…", "and how about…": a follow-up that moves the question before to another topic.
_MOVE = r"(?:and\s+|but\s+|so\s+)?(?:what|how)\s+about"
_MOVES = re.compile(rf"\s*{_MOVE}\b", re.IGNORECASE)


# "…? and what about the finish?": after a question that ended (a follow-up joined to it), the last clause
# moves it to a new topic. "How much is X, and how about delivery?" is one compound question, not this.
_ABOUT = re.compile(
    rf"(?P<prefix>.*?[\w)][?.!])\s+{_MOVE}\s+(?P<topic>[^?]+?)\s*\??\s*",
    re.IGNORECASE | re.DOTALL,
)
_PRONOUN = re.compile(r"\b(it|that|this|them|those|these|one|ones)\b", re.IGNORECASE)
_LEAD = re.compile(r"^\s*(?:and|also|but|or|so)\b[\s,]*", re.IGNORECASE)
_WORD = re.compile(r"[\w'’-]+")


def _topic_runs(question: str) -> list[tuple[int, int]]:
    """Where the runs of topic words stand in a question, as (start, end): the words between its articles,
    prepositions, question words and words of asking, in English, German, French and Spanish ("cuanto cuesta
    una limpieza" → "limpieza"; "hotel limit for london" → "hotel limit", "london")."""
    runs: list[tuple[int, int]] = []
    start = end = -1
    for match in _WORD.finditer(question):
        word = match.group()
        if key_terms(word) - ASKING and not word.isdigit() and word.lower() not in PHRASE_ENDS:
            start = match.start() if start < 0 else start
            end = match.end()
        elif start >= 0:
            runs.append((start, end))
            start = -1
    if start >= 0:
        runs.append((start, end))
    return runs


def _topic_phrase(question: str) -> str:
    """What a question is about, as its words: the longest run of topic words, the last of equal ones
    ("How much is a solid oak worktop?" → "solid oak worktop"; "the warranty on hinges" → "hinges")."""
    runs = [question[a:b] for a, b in _topic_runs(question)]
    return max(reversed(runs), key=lambda run: len(run.split()), default="")


# What a follow-up that only names another item starts with ("and the beech one?", "und die Junior Suite?",
# "et pour le hêtre ?", "y la de haya?"), and the articles before the item.
_SWAP_LEADS = frozenset(
    [
        "and",
        "or",
        "also",
        "what",
        "how",
        "about",
        "for",
        "on",
        "in",
        "with",
        "und",
        "oder",
        "auch",
        "mit",
        "für",
        "bei",
        "et",
        "ou",
        "pour",
        "avec",
        "y",
        "o",
        "e",
        "para",
        "con",
        "en",
        "what's",
        "whats",
    ]
)
_ARTICLES = frozenset(
    [
        "the",
        "a",
        "an",
        "der",
        "die",
        "das",
        "den",
        "dem",
        "des",
        "ein",
        "eine",
        "einen",
        "le",
        "la",
        "les",
        "l",
        "un",
        "une",
        "el",
        "los",
        "las",
        "lo",
        "una",
    ]
)
_ONE = frozenset({"one", "ones"})


def swap_item(question: str, previous: str) -> str | None:
    """The previous question about the item a follow-up swaps in: "what about the beech one?" after "How much is
    a walnut worktop?" is "How much is a beech worktop?"; None when the follow-up does more than name an item.

    The item replaces the previous question's topic phrase when it names the same kind of thing ("the beech
    worktop", or "one"/"ones" standing for it: only its modifiers are swapped), or when both are one word
    ("…warranty on hinges?" → "and on finishes?").
    """
    words = _WORD.findall(question.lower())
    while words and words[0] in _SWAP_LEADS:
        words.pop(0)
    while words and words[0] in _ARTICLES:
        words.pop(0)
    names_only = bool(words) and len(words) <= DEFAULT.swap_words and all(key_terms(w) - ASKING for w in words)
    # "the 3 m one" names an item too: every word but the "one" that stands for the previous question's item.
    one_for_it = bool(words) and words[-1] in _ONE and all(key_terms(w) for w in words[:-1])
    if not (names_only or one_for_it):
        return None
    if words[-1] not in _ONE and (shared := _shared_head(words, previous)):
        start, end = shared
        return previous[:start] + " ".join(words) + previous[end:]
    phrase = _topic_phrase(previous)
    if not phrase:
        return None
    old = phrase.split()
    if words[-1] in _ONE:
        modifiers = words[:-1]
        if not modifiers:
            return None
        new = [*modifiers, old[-1]]
    elif stem(words[-1]) == stem(old[-1].lower()) or (len(words) == 1 and len(old) == 1):
        new = words
    else:
        return None
    at = previous.lower().find(phrase.lower())
    if at < 0:
        return None
    return previous[:at] + " ".join(new) + previous[at + len(phrase) :]


# Words that end a noun phrase in the questions companies get, in English, German, French and Spanish: articles,
# prepositions, question words and the verbs of asking a price.
PHRASE_ENDS = _ARTICLES | frozenset(
    [
        "is",
        "are",
        "was",
        "were",
        "what",
        "how",
        "much",
        "many",
        "does",
        "do",
        "can",
        "for",
        "with",
        "of",
        "per",
        "to",
        "at",
        "by",
        "on",
        "in",
        "and",
        "or",
        "für",
        "mit",
        "bei",
        "von",
        "zu",
        "zum",
        "zur",
        "pro",
        "im",
        "am",
        "an",
        "auf",
        "und",
        "oder",
        "wie",
        "wo",
        "wann",
        "kostet",
        "kosten",
        "viel",
        "wieviel",
        "ist",
        "sind",
        "gibt",
        "es",
        "pour",
        "avec",
        "en",
        "au",
        "aux",
        "par",
        "et",
        "ou",
        "combien",
        "coûte",
        "coute",
        "est",
        "quel",
        "quelle",
        "du",
        "de",
        "des",
        "para",
        "con",
        "por",
        "cuanto",
        "cuánto",
        "cuesta",
        "vale",
        "hay",
        "que",
        "del",
    ]
)


def _shared_head(words: list[str], previous: str) -> tuple[int, int] | None:
    """Where in `previous` the phrase stands that the swapped-in item replaces, found by a word they share
    ("junior suite" for "deluxe suite", "bici de carretera" for "bici electrica", "grade 5" for "grade 3"): the
    run of words around that word up to the nearest article, preposition or question word, cut to as many words
    on each side of the shared one as the item has ("notice period grade 3" keeps "notice period"); None when no
    word is shared."""
    tokens = [(m.start(), m.end(), m.group().lower()) for m in _WORD.finditer(previous)]
    for word in reversed([w for w in words if w not in PHRASE_ENDS]):
        hits = [i for i, t in enumerate(tokens) if stem(t[2]) == stem(word)]
        if not hits:
            continue
        at, own = hits[-1], words.index(word)
        first = last = at
        while first > max(0, at - own) and tokens[first - 1][2] not in PHRASE_ENDS:
            first -= 1
        while last + 1 < min(len(tokens), at + len(words) - own) and tokens[last + 1][2] not in PHRASE_ENDS:
            last += 1
        return tokens[first][0], tokens[last][1]
    return None


def resolve_follow_up(question: str, previous: str, joined: str) -> str:
    """A follow-up as one question: "and how heavy is a 3 m one?" after the oak worktop is "How heavy is a
    3 m solid oak worktop?", so the judge weighs what is asked now, not the question before it.

    "…what about X?" stays joined (the answerer moves it to X); without a pronoun to resolve, it stays joined.
    """
    if swapped := swap_item(question, previous):
        return swapped
    if _ABOUT.fullmatch(joined) or not (pronoun := _PRONOUN.search(question)):
        return joined
    phrase = _topic_phrase(previous)
    if not phrase:
        return joined
    replacement = phrase if pronoun[1].lower() in ("one", "ones") else f"the {phrase}"
    resolved = _LEAD.sub("", question[: pronoun.start()] + replacement + question[pronoun.end() :])
    return resolved[:1].upper() + resolved[1:]


def moved_readings(prefix: str, topic: str) -> list[str]:
    """The questions a "…? what about X?" follow-up asks: the question before it with X joined, and, when that
    question names a topic sharing no word with X, the question before about X instead ("how much is the highland
    classic per night in july" + "the cairngorm lodge" -> "how much is the cairngorm lodge per night in july"), so
    the judge can read one item, not both."""
    joined = f"{prefix.strip().rstrip('?.!')} {topic.strip()}"
    words = _WORD.findall(topic)
    while words and words[0].lower() in _ARTICLES:
        words.pop(0)
    phrase = _topic_phrase(prefix)
    if not words or not phrase or key_terms(phrase) & key_terms(" ".join(words)):
        return [joined]
    at = prefix.lower().rfind(phrase.lower())
    moved = (prefix[:at] + " ".join(words) + prefix[at + len(phrase) :]).strip().rstrip("?.!")
    return list(dict.fromkeys([joined, moved]))
