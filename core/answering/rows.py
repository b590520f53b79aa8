"""Table rows of another entity: "which laptop does a salesperson get?" against a table of roles that has none.

A table's reader writes each row `Header: value; …`, and the first cell says what the row is about (its key:
"Role: Developer"). Every row of the table reads alike to the judge and to similarity, so the row of another
role is quoted as if it were the asked one's. The question is asked about a row the table lacks when it names
no row's key and one of its words is of the keys' kind (as close to them as a role is to roles) yet named
nowhere in what was retrieved.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from core.answering.proposals import named
from core.common.answers import Claim
from core.common.text import key_terms
from core.common.values import Hit, fragment_blocks
from core.vectors.embeddings import Embedder, normalise

# How close a word must be to one of a table's keys to be taken for a key of that kind, by the embedder's id: single
# words of the same kind (salesperson and developer, Italy and Spain, cherry and walnut) score 0.40 to 0.75 with the
# embedded MiniLM, a question's other words (offer, get, memory, night) 0.12 to 0.27. Measured for it alone: e5's
# cosines sit higher for every pair of words, and at 0.35 it refused Spanish and German rows that were asked for
# (benchmarks/quality.py, valid-es 53.5 % -> 50.0 % correct), so no other embedder makes this call.
KEY_KIND = {"local:all-MiniLM-L6-v2": 0.35}
_WORD = re.compile(r"[^\W\d_]+")


def row_key(row: str) -> tuple[str, str] | None:
    """The first cell of a row written `Header: value; …` as (header, value); None for any other text."""
    first = row.split("; ", 1)[0]
    header, sep, value = first.partition(": ")
    return (header.strip(), value.strip()) if sep and value.strip() else None


def _keys(hits: Sequence[Hit], claims: Sequence[Claim]) -> list[str]:
    """The keys of every row in the tables the claims quote (the rows under the same first header)."""
    keys: list[str] = []
    for number in dict.fromkeys(c.fragment for c in claims):
        headers = {k[0] for c in claims if c.fragment == number and (k := row_key(c.quote))}
        for block in fragment_blocks(hits[number - 1].fragment.text):
            if block.kind == "row" and (k := row_key(block.text)) and k[0] in headers:
                keys.append(k[1])
    return list(dict.fromkeys(keys))


def another_row(question: str, claims: Sequence[Claim], hits: Sequence[Hit], embedder: Embedder) -> bool:
    """Whether every claim is a table row and the question asks about a row none of those tables has."""
    kind = next((v for prefix, v in KEY_KIND.items() if embedder.id.startswith(prefix)), None)
    if kind is None or not claims or not all(_is_row(c, hits) for c in claims):
        return False
    keys = _keys(hits, claims)
    asked = key_terms(question)
    if not keys or any(named(question, key_terms(key)) for key in keys):
        return False
    retrieved = " ".join(" ".join([h.fragment.title, *h.fragment.section, h.fragment.text]) for h in hits)
    unnamed = asked - named(retrieved, asked)
    # The question's own words, not their stems, are embedded.
    words = list(dict.fromkeys(w for w in _WORD.findall(question) if len(w) >= 3 and key_terms(w) & unnamed))
    if not words:
        return False
    vectors = normalise(np.asarray(embedder.embed([*words, *keys]), dtype=np.float32))
    closeness = vectors[: len(words)] @ vectors[len(words) :].T
    return bool(closeness.max() >= kind)


def _is_row(claim: Claim, hits: Sequence[Hit]) -> bool:
    text = hits[claim.fragment - 1].fragment.text
    return any(b.kind == "row" and b.text == claim.quote for b in fragment_blocks(text))
