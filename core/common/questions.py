"""A question as every surface hands it to core: cleaned of what no one typed, within its length, and the scopes
(which documents a surface may read)."""

from __future__ import annotations

import re

from core.common.errors import VerbatimError

# A scope names what a surface may read; customers see public documents only.
SCOPES: dict[str, frozenset[str]] = {
    "public": frozenset({"public"}),
    "internal": frozenset({"public", "internal"}),
}
MAX_QUESTION_CHARS = 2000


def scope_of(name: str) -> frozenset[str]:
    try:
        return SCOPES[name]
    except KeyError:
        raise VerbatimError(f"The audience must be one of {', '.join(SCOPES)}, not {name!r}.") from None


# Terminal escape sequences (an arrow key typed where no line editing runs: "\x1b[D") and other control
# characters: never part of a question, and never stored in the run log or shown in the report.
_ESCAPES = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|[@-Z\\-_])|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


class Question(str):
    """A question as `clean_question` left it: a surface that cleaned one to check it hands it on, and it is not
    cleaned again."""


def clean_question(text: str) -> Question:
    """Control characters dropped and whitespace folded; raises VerbatimError for an empty or over-long
    question."""
    if isinstance(text, Question):
        return text
    question = " ".join(_ESCAPES.sub("", text).split())
    if not question:
        raise VerbatimError("The question is empty.")
    if len(question) > MAX_QUESTION_CHARS:
        raise VerbatimError(f"The question is {len(question):,} characters long; the limit is {MAX_QUESTION_CHARS:,}.")
    return Question(question)
