"""The message catalogues: every key in every language, the same placeholders, and the reply in the asker's
language on every surface (quotes always verbatim)."""

import string

import pytest

from bot import presenter
from bot.presenter import catalogue
from bot.slack import render as slack_render
from bot.telegram import render as telegram_render
from bot.telegram.handlers import help_text
from core import LANGUAGE_NAMES, SCOPES, Answer, Quote, Statement

OTHERS = [code for code in catalogue.languages() if code != "en"]
ENGLISH = catalogue.read("en")


def _placeholders(value: object) -> set[str]:
    texts = value if isinstance(value, list) else [value]
    return {name for text in texts for _, name, _, _ in string.Formatter().parse(str(text)) if name}


def test_the_product_speaks_at_least_english_german_french_and_spanish():
    assert {"en", "de", "fr", "es"} <= set(catalogue.languages())
    assert catalogue.languages()[0] == "en"


@pytest.mark.parametrize("code", OTHERS)
def test_every_key_exists_in_every_language_with_the_same_placeholders(code):
    entries = catalogue.read(code)
    assert sorted(set(ENGLISH) - set(entries)) == [], f"{code}.toml lacks these keys"
    assert sorted(set(entries) - set(ENGLISH)) == [], f"{code}.toml has keys en.toml doesn't"
    for key, english in ENGLISH.items():
        assert type(entries[key]) is type(english), key
        assert _placeholders(entries[key]) == _placeholders(english), f"{code}: {key}"
        if isinstance(english, list):
            assert len(entries[key]) == len(english), key
        assert entries[key] != "" and entries[key] != [], key


@pytest.mark.parametrize("code", catalogue.languages())
def test_every_language_the_detector_names_has_a_name_in_every_catalogue(code):
    said = catalogue.speaking(code)
    assert all(said.name(lang) != lang for lang in LANGUAGE_NAMES)
    assert len(said.entry("caption.months")) == 12


def test_a_language_without_a_catalogue_or_with_a_region_is_read_sensibly():
    assert catalogue.speaking("de-AT").language == "de"
    assert catalogue.speaking("pt_BR").language == "en"
    assert catalogue.speaking(None).language == "en"
    assert catalogue.speaking("").language == "en"


QUOTE = Quote("Die Lieferung kostet 40 EUR bis 15 km.", 3, "lieferung.md", "Lieferbedingungen", ("Lieferung",), 1, 2)


def _answer(reply_language, kind="answered", reason=None, discarded=0, **extra):
    statements = (Statement(QUOTE.text, (QUOTE,)),) if kind == "answered" else ()
    return Answer(
        "a1",
        "Was kostet die Lieferung?",
        kind,
        reason,
        statements,
        discarded,
        (),
        {},
        "x",
        reply_language=reply_language,
        **extra,
    )


def test_an_answer_is_worded_in_the_askers_language_and_its_quote_stays_verbatim():
    shown = presenter.present(_answer("de", discarded=1))
    assert shown.heading == "Aus den Dokumenten" and shown.language == "de"
    assert [p.text for p in shown.parts if p.kind == "quote"] == [QUOTE.text]
    assert "Lieferbedingungen › Lieferung · Fragment 1 von 2" in [p.text for p in shown.parts]
    assert "1 Zitat konnte nicht überprüft werden und wurde weggelassen" in [p.text for p in shown.parts]
    for text in (slack_render.messages(shown)[0].text, telegram_render.messages(shown)[0]):
        assert QUOTE.text in text


@pytest.mark.parametrize(
    ("code", "heading"),
    [("de", "Nicht in der Wissensbasis"), ("fr", "Pas dans la base de connaissances"), ("es", "No está")],
)
def test_the_refusal_has_its_own_words_in_each_language(code, heading):
    refused = presenter.present(_answer(code, "refused", "not_found", closest=("Lieferbedingungen › Lieferung",)))
    assert refused.style == "refusal" and refused.heading.startswith(heading)
    assert refused.parts[0].text == catalogue.speaking(code)("refusal.text")
    assert "Lieferbedingungen › Lieferung" in refused.parts[-1].text
    assert presenter.REFUSAL_HEADING not in telegram_render.messages(refused)[0]


def test_a_question_in_an_unread_language_is_told_in_a_language_that_is_read():
    asked = Answer(
        "a2", "Quanto costa?", "refused", "language", (), 0, (), {}, "x", language="it", languages=("de", "en")
    )
    shown = presenter.present(asked)
    assert shown.plain == (
        "Ich kann nur Fragen auf Deutsch oder Englisch lesen, und diese scheint auf Italienisch zu sein. "
        "Bitte stellen Sie sie auf Deutsch oder Englisch."
    )


def test_help_texts_speak_the_documents_language_or_the_telegram_users():
    german = presenter.Voice("Müller GmbH", "", ("Hausordnung",), "de")
    assert german.start.startswith("Hallo! Ich beantworte Fragen zu Müller GmbH") and "Hausordnung" in german.start
    french = german.in_language("fr-FR")
    assert french.start.startswith("Bonjour !") and "/ask votre question" in help_text(french)
    assert german.in_language("pt").language == "de", "no Portuguese catalogue: the documents' language stays"
    assert german.in_language(None) is german


def test_the_pipeline_replies_in_the_questions_language_else_the_documents(tmp_path):
    from tests.core.common.test_language import _german_pipeline

    pipeline = _german_pipeline(tmp_path, {})
    assert pipeline.answer("Wie viel kostet die Lieferung?", SCOPES["public"]).reply_language == "de"
    assert pipeline.answer("Lieferung?", SCOPES["public"]).reply_language == "de", "too short: the documents'"
    assert pipeline.answer("How much is delivery?", SCOPES["public"]).reply_language == "en"
    logged = pipeline.logged_answer(pipeline.answer("Wie viel kostet die Lieferung?", SCOPES["public"]).id)
    assert logged is not None and logged.reply_language == "de", "a logged answer is shown again in its language"
