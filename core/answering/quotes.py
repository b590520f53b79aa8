"""Quote verification: the last barrier. A quote must stand, verbatim, in the fragment it cites.

Both sides are normalised the same way (whitespace runs, dash forms, quotation marks), so a
typographic variant passes, and so does a quote's first letter in the other case ("Measuring
visit costs…" for "…a measuring visit costs…": models capitalise a quote taken from mid-sentence);
anything else (a changed figure, two places stitched together,
a fragment that was not retrieved) does not. In a paged fragment (a PDF's text layer, which
splits and joins words at random) whitespace is ignored altogether; the letters must still
match one by one, and what is shown is always the source's own span.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from core.answering.figures import unquoted
from core.answering.policy import LIMITS
from core.common.answers import Claim, Quote, Statement
from core.common.values import Hit

_DASHES = "\u2010\u2011\u2012\u2013\u2014\u2015\u2212"
_DOUBLE_QUOTES = "\u201c\u201d\u201e\u00ab\u00bb\u2033\u201f"
_SINGLE_QUOTES = "\u2018\u2019\u201a\u2032\u201b\u2039\u203a"
_TRANSLATE = str.maketrans(
    {**{c: "-" for c in _DASHES}, **{c: '"' for c in _DOUBLE_QUOTES}, **{c: "'" for c in _SINGLE_QUOTES}}
)
_SPACE = re.compile(r"\s+")
_BULLET = re.compile(r"^\s*(?:[-*+•]|\d+[.)])\s+")
_PLACEHOLDER = re.compile(r"<[^<>]*>|\.\.\.|…")


def normalise(text: str) -> str:
    """The comparison form: one space for any whitespace run, ASCII dashes and quotation marks."""
    return _SPACE.sub(" ", text.translate(_TRANSLATE)).strip()


def _normalise_with_map(text: str) -> tuple[str, list[int]]:
    """The comparison form and, for each of its characters, its index in `text`."""
    out: list[str] = []
    where: list[int] = []
    translated = text.translate(_TRANSLATE)
    for i, ch in enumerate(translated):
        if ch.isspace():
            if out and out[-1] != " ":
                out.append(" ")
                where.append(i)
            continue
        out.append(ch)
        where.append(i)
    while out and out[-1] == " ":
        out.pop()
        where.pop()
    return "".join(out), where


def locate(quote: str, source: str, ignore_spaces: bool = False) -> str | None:
    """The span of `source` that `quote` matches after normalisation, exactly as `source` has it.

    With `ignore_spaces` (paged documents), whitespace on either side does not count.
    """
    needle = normalise(_BULLET.sub("", quote))
    if not LIMITS.min_quote <= len(needle) <= LIMITS.max_quote:
        return None
    haystack, where = _normalise_with_map(source)
    if ignore_spaces:
        needle = needle.replace(" ", "")
        kept = [i for i, ch in enumerate(haystack) if ch != " "]
        haystack, where = "".join(haystack[i] for i in kept), [where[i] for i in kept]
    start = haystack.find(needle)
    if start < 0 and needle[0].swapcase() != needle[0]:
        # Only the first letter may differ in case; what is shown is the source's own span, in its own case.
        start = haystack.find(needle[0].swapcase() + needle[1:])
    if start < 0:
        return None
    return source[where[start] : where[start + len(needle) - 1] + 1]


def verify(claims: tuple[Claim, ...], hits: list[Hit], calculated: Sequence[str] = ()) -> tuple[list[Statement], int]:
    """Statements whose quote verifies in the fragment it cites; and how many quotes failed.

    A statement is only as good as its quote, so a failed quote takes its statement with it; so
    does a figure the statement states that its quote does not hold (counted as discarded too),
    unless it is the result of a checked calculation (`calculated`: "930.00 EUR", and the
    question's own figures that calculation used).
    """
    statements: list[Statement] = []
    discarded = 0
    seen: set[tuple[int, str]] = set()
    for claim in claims:
        if not 1 <= claim.fragment <= len(hits):
            discarded += 1  # cites a fragment outside the retrieved set
            continue
        hit = hits[claim.fragment - 1]
        span = locate(claim.quote, hit.fragment.text, ignore_spaces=hit.fragment.page is not None)
        if span is None:
            discarded += 1
            continue
        text = " ".join(claim.text.split())
        if not text or _PLACEHOLDER.fullmatch(text):
            text = span  # "<statement>" copied from the prompt's example says nothing: the quote speaks for itself
        if unquoted(text, (span, *calculated)):
            discarded += 1  # "Everything is free." beside a genuine quote: the statement says more than it
            continue
        if (hit.fragment_id, span) in seen:
            continue  # the same quote twice adds nothing
        seen.add((hit.fragment_id, span))
        f = hit.fragment
        quote = Quote(span, hit.fragment_id, f.document, f.title, f.section, f.position, f.of, f.page)
        statements.append(Statement(text, (quote,)))
    return statements, discarded
