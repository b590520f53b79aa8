"""Questions in a language the model can't read get an honest answer, never "not covered"."""

import pytest

from core import SCOPES
from core.language import detect
from core.settings import from_env


@pytest.mark.parametrize(
    ("question", "language"),
    [
        ("How much is a solid oak worktop?", "en"),
        ("Wie viel kostet eine Küchenfront aus massiver Eiche pro Quadratmeter?", "de"),
        ("Combien de temps dure la garantie sur une cuisine ?", "fr"),
        ("¿Cuánto cuesta la entrega a 30 km?", "es"),
        ("Сколько стоит доставка?", "ru"),
        ("كم تكلفة التوصيل؟", "ar"),
        ("price for birch ply fronts", None),  # too few function words to say: answered as asked
    ],
)
def test_the_language_is_named_only_on_clear_evidence(question, language):
    assert detect(question) == language


@pytest.mark.parametrize("question", ["Wie lange ist die Garantie auf Scharniere?", "Сколько стоит доставка?"])
def test_a_question_in_another_language_is_answered_honestly_not_refused_as_uncovered(pipeline, question):
    answer = pipeline.answer(question, SCOPES["public"])
    assert (answer.kind, answer.reason) == ("refused", "language")
    assert answer.languages == ("en",) and answer.language in ("de", "ru")
    assert answer.retrieved == (), "no search is made in a language the model can't read"


def test_question_languages_are_a_setting():
    assert from_env({}).question_languages == ("en",)
    assert from_env({"VERBATIM_QUESTION_LANGUAGES": "en, de"}).question_languages == ("en", "de")
    assert from_env({"VERBATIM_QUESTION_LANGUAGES": "any"}).question_languages == ()
