"""A question as surfaces hand it to core (core/common/questions.py): cleaned once, within its length."""

import pytest

from core.common.errors import VerbatimError
from core.common.questions import MAX_QUESTION_CHARS, Question, clean_question


def test_a_question_is_cleaned_once_and_handed_on_as_cleaned():
    cleaned = clean_question("  how much\x1b[D is\x07 an\n oak worktop? ")
    assert isinstance(cleaned, Question) and cleaned == "how much is an oak worktop?"
    assert clean_question(cleaned) is cleaned, "a surface's cleaned question is not cleaned again by the pipeline"


@pytest.mark.parametrize(
    ("text", "said"),
    [(" \x1b[A\t", "is empty"), ("x" * (MAX_QUESTION_CHARS + 1), f"limit is {MAX_QUESTION_CHARS:,}")],
)
def test_an_empty_or_over_long_question_is_refused_with_its_reason(text, said):
    with pytest.raises(VerbatimError, match=said):
        clean_question(text)
