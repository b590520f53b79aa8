"""Rows of another entity: "which laptop does a salesperson get?" against a table of roles that has none, "how much
is a spiral staircase?" against a price list of straight and quarter-turn ones.

A table's reader writes each row `Header: value; …`, and the first cell says what the row is about (its key:
"Role: Developer"). A list item priced or described by name is a row too: "Straight oak staircase, up to 14 steps:
from 6,400 EUR." is keyed by the name before its first comma or colon. Every row reads alike to the judge and to
similarity, so the row of another entity is quoted as if it were the asked one's. The question is asked about a
row the table or list lacks when it names no row's key whole and one of its words is of the keys' kind (as close
to them as a role is to roles) yet named nowhere in what was retrieved.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from core.answering.policy import DEFAULT
from core.answering.proposals import named
from core.common.answers import Claim
from core.common.blocks import Block, strip_marker
from core.common.text import key_terms
from core.common.values import Hit, fragment_blocks
from core.vectors.embeddings import Embedder, normalise

_WORD = re.compile(r"[^\W\d_]+")


def row_key(row: str) -> tuple[str, str] | None:
    """The first cell of a row written `Header: value; …` as (header, value); None for any other text."""
    first = row.split("; ", 1)[0]
    header, sep, value = first.partition(": ")
    return (header.strip(), value.strip()) if sep and value.strip() else None


def item_key(item: str) -> str | None:
    """The name a list item is about when it gives a value by name ("Oak bench, 160 cm: 690 EUR." -> "Oak bench")."""
    name, sep, value = item.partition(": ")
    name = strip_marker(name).split(",", 1)[0].strip()
    return name if sep and value.strip() and name and len(_WORD.findall(name)) <= DEFAULT.max_key_words else None


def _key(block: Block) -> tuple[str, str, bool] | None:
    """A keyed block's group (a table's first header, a list's lead-in), its key, and whether the key is a list
    item's name (of a few words, most of them needed); None for any other block."""
    if block.kind not in ("row", "item"):
        return None
    text = strip_marker(block.text)
    if (block.kind == "row" or "; " in text) and (key := row_key(text)):  # a row, or an item written as one
        return (*key, False)
    if block.kind == "item" and (name := item_key(text)):
        return (f"list: {block.lead}", name, True)
    return None


def _keys(hits: Sequence[Hit], claims: Sequence[Claim]) -> list[tuple[str, str, bool]]:
    """The group, key and whether the key is a list item's name of every row in the tables and lists the claims
    quote (the rows of the same group)."""
    keys: list[tuple[str, str, bool]] = []
    for number in dict.fromkeys(c.fragment for c in claims):
        found = fragment_blocks(hits[number - 1].fragment.text)
        quoted = {c.quote for c in claims if c.fragment == number}
        groups = {k[0] for b in found if b.text in quoted and (k := _key(b))}
        keys.extend(k for b in found if (k := _key(b)) and k[0] in groups)
    return list(dict.fromkeys(keys))


def _names(question: str, key: str, item: bool) -> bool:
    """Whether the question names the row: any word of a table's key ("kennel cough jab" for "kennel cough
    (intranasal)"), at least half of an item's name, whose words its neighbours share ("spiral staircase" names
    one of "Straight oak staircase"'s three)."""
    terms = key_terms(key)
    said = named(question, terms)
    return 2 * len(said) >= len(terms) if item else bool(said)


# A row keyed by a word and a code: "Zone: Zone C", "Band: A", "Grade: 3", "Stufe: 4", "Zona: Zona B".
_CODE = r"(?:[^\W\d_]|\d{1,3}[^\W\d_]?)"
# Letters that are words of their own in the languages served (English "a", "I"; Spanish "y", "o"; French "à").
_WORD_LETTERS = frozenset("aiyouà")
_CODED = re.compile(rf"([^\W\d_]{{2,}})\s+({_CODE})", re.IGNORECASE)


def _coded(header: str, key: str) -> tuple[str, str | None] | None:
    """The (word, code) a row's key names: "Zone C" -> ("zone", "c"); "A" under "Band" -> ("band", "a"); a key
    that starts so and goes on ("Grade 3 to 4", "Grade 6 and directors") -> ("grade", None): a code may lie
    within it."""
    if match := _CODED.fullmatch(key.strip()):
        return match[1].lower(), match[2].lower()
    if match := _CODED.match(key.strip()):
        return match[1].lower(), None
    if re.fullmatch(_CODE, key.strip()) and re.fullmatch(r"[^\W\d_]{2,}", header.strip()):
        return header.strip().lower(), key.strip().lower()
    return None


def another_code(question: str, coded: Sequence[tuple[str, str | None]], retrieved: str) -> bool:
    """Whether the question asks for a code the rows' word has no row for: "zone e hours?" against rows keyed
    Zone A to Zone D. The judge and similarity read "zone e" as "zone" (and key_terms drops the letter); code reads
    the code. A code the retrieved text names anywhere (a row of the table in another fragment) is not another, and
    a word with a row of a range ("Grade 3 to 4") is not read for codes at all."""
    codes: dict[str, set[str | None]] = {}
    for word, code in coded:
        codes.setdefault(word, set()).add(code)
    for word, known in codes.items():
        if None in known:
            continue
        for asked in re.finditer(rf"\b{re.escape(word)}\s+({_CODE})\b", question, re.IGNORECASE):
            code = asked[1].lower()
            if code in _WORD_LETTERS:
                continue  # "what size a bike do I need": the word "a", not a code
            if code not in known and not re.search(rf"\b{re.escape(word)}\s+{re.escape(code)}\b", retrieved, re.I):
                return True
    return False


def another_row(
    question: str, claims: Sequence[Claim], hits: Sequence[Hit], embedder: Embedder, kind: float | None
) -> bool:
    """Whether every claim is a table row and the question asks about a row none of those tables has: a code the
    keys lack ("zone e"), or a word as close to the keys as `kind` (the policy's `row_key_kind`; None: not asked)
    that nothing retrieved names."""
    if not claims or not all(_is_row(c, hits) for c in claims):
        return False
    keys = _keys(hits, claims)
    coded = [c for group, key, item in keys if not item and (c := _coded(group, key))]
    retrieved = " ".join(" ".join([h.fragment.title, *h.fragment.section, h.fragment.text]) for h in hits)
    if coded and another_code(question, coded, retrieved):
        return True
    if kind is None:
        return False
    asked = key_terms(question)
    if not keys or any(_names(question, key, item) for _, key, item in keys):
        return False
    unnamed = asked - named(retrieved, asked)
    # The question's own words, not their stems, are embedded.
    words = list(dict.fromkeys(w for w in _WORD.findall(question) if len(w) >= 3 and key_terms(w) & unnamed))
    if not words:
        return False
    vectors = normalise(
        np.asarray(embedder.embed([*words, *dict.fromkeys(key for _, key, _ in keys)]), dtype=np.float32)
    )
    closeness = vectors[: len(words)] @ vectors[len(words) :].T
    return bool(closeness.max() >= kind)


def _is_row(claim: Claim, hits: Sequence[Hit]) -> bool:
    text = hits[claim.fragment - 1].fragment.text
    return any(b.text == claim.quote and _key(b) for b in fragment_blocks(text))
