"""One presenter: the decision of what an answer shows, and the sentences every surface shares."""

from bot import presenter
from bot.console import render
from bot.env import voice_from
from bot.slack import render as slack_render
from bot.telegram import render as telegram_render
from core import Answer, Quote, Statement

QUOTE = Quote("Delivery within 15 km costs 40 EUR.", 3, "delivery.md", "Delivery", ("Zones",), 1, 2)


def answer(kind="answered", reason=None, statements=(), discarded=0, closest=()):
    return Answer(
        "a1", "how much is delivery?", kind, reason, statements, discarded, (), {}, "extractive", closest=closest
    )


def test_an_answer_shows_statement_quote_caption_and_the_discarded_note():
    shown = presenter.present(answer(statements=(Statement("Delivery is 40 EUR.", (QUOTE,)),), discarded=2))
    assert shown.style == "answer" and shown.feedback
    assert [p.kind for p in shown.parts] == ["statement", "quote", "caption", "note"]
    assert shown.parts[2].text == "Delivery › Zones · fragment 1 of 2"
    assert shown.parts[3].text == "2 quotes could not be verified and were left out"


def test_a_statement_that_only_restates_its_quote_is_shown_once():
    shown = presenter.present(answer(statements=(Statement(QUOTE.text, (QUOTE,)),)))
    assert [p.kind for p in shown.parts] == ["quote", "caption"]


def test_a_refusal_names_the_closest_sections_and_an_error_offers_no_feedback():
    refused = presenter.present(answer("refused", "not_found", closest=("Delivery › Zones",)))
    assert (refused.style, refused.heading) == ("refusal", presenter.REFUSAL_HEADING)
    assert refused.parts[-1].text == "Closest sections I found: Delivery › Zones"
    error = presenter.present(answer("refused", "error"))
    assert error.style == "error" and not error.feedback and error.plain == presenter.APOLOGY


def test_every_surface_says_the_same_refusal_and_apology():
    refused = answer("refused", "no_match")
    failed = answer("refused", "error")
    for text in (
        render(refused),
        slack_render.messages(presenter.present(refused))[0].text,
        telegram_render.messages(presenter.present(refused))[0],
    ):
        assert presenter.REFUSAL_HEADING in text and presenter.REFUSAL_TEXT.replace("'", "") in text.replace("'", "")
    for text in (
        render(failed),
        slack_render.messages(presenter.present(failed))[0].text,
        telegram_render.messages(presenter.present(failed))[0],
    ):
        assert presenter.APOLOGY.split(".")[0] in text


def test_help_texts_name_the_documents_and_no_demo_product():
    voice = presenter.Voice("Acme", "", ("Travel policy", "Expenses"))
    assert "Travel policy, Expenses" in voice.start and "Acme" in voice.start
    assert "for example" not in voice.mention_hint()
    configured = presenter.Voice("Acme", "how many leave days do I get?", ())
    assert configured.command_usage("/ask").endswith("/ask how many leave days do I get?")
    assert voice_from({}) == ("our company", "")


def test_an_empty_question_is_not_told_to_be_shorter():
    from core import VerbatimError

    assert "shorter" not in presenter.invalid_question(VerbatimError("The question is empty."))
    assert "shorter" in presenter.invalid_question(VerbatimError("The question is 20,001 characters long; …"))


def test_a_question_in_another_language_is_told_which_languages_are_read():
    asked = Answer(
        "a2", "Wie viel?", "refused", "language", (), 0, (), {}, "extractive", language="de", languages=("en",)
    )
    shown = presenter.present(asked)
    assert shown.style == "language" and not shown.feedback
    assert (
        shown.plain == "I can only read questions in English, and this one looks like German. Please ask it in English."
    )
    assert presenter.REFUSAL_HEADING not in render(asked), "never the 'not covered' refusal"


def test_a_list_quoted_without_its_lead_in_shows_its_first_items_marker():
    from bot.presenter import as_shown

    quote = "Joinery: 5 years from delivery.\n- Hardware: 2 years from delivery.\n- Finishes: 1 year."
    assert as_shown(quote) == "- " + quote
    assert as_shown("Cut the board.\n2. Sand it.\n3. Oil it.") == "1. Cut the board.\n2. Sand it.\n3. Oil it."
    # A lead-in and its items, a sentence, or prose after the list are shown as quoted.
    with_lead = "The warranty does not cover:\n\n- Water damage.\n- Heat."
    assert as_shown(with_lead) == with_lead
    assert as_shown("Zone B, 15 to 50 km: 85 EUR.") == "Zone B, 15 to 50 km: 85 EUR."
    assert as_shown("First line.\n- an item\nand prose") == "First line.\n- an item\nand prose"
