import pytest

from core.answering.quotes import locate, normalise, verify
from core.common.answers import Claim
from core.common.values import Fragment, Hit

TEXT = "Oak fronts cost 185 EUR per m². Painted fronts cost 120 EUR – in any colour.\n\nSay “yes” to oak."


def hits(*texts):
    return [Hit(i, Fragment("d.md", "Doc", "public", ("S",), i, len(texts), t), 0.9) for i, t in enumerate(texts, 1)]


def test_exact_quote_is_found_and_returned_as_the_document_has_it():
    assert locate("Oak fronts cost 185 EUR per m².", TEXT) == "Oak fronts cost 185 EUR per m²."


@pytest.mark.parametrize(
    "variant",
    [
        "Painted fronts cost 120 EUR — in any colour.",  # em dash for en dash
        "Painted fronts cost 120 EUR - in any colour.",  # hyphen-minus
        "Painted   fronts cost\n120 EUR – in any colour.",  # folded whitespace
    ],
)
def test_typographic_variants_pass_and_show_the_original(variant):
    assert locate(variant, TEXT) == "Painted fronts cost 120 EUR – in any colour."


def test_a_quote_from_mid_sentence_may_start_with_a_capital_and_shows_the_source_case():
    assert locate("Fronts cost 120 EUR – in any colour.", TEXT) == "fronts cost 120 EUR – in any colour."
    assert locate("fronts cost 185 EUR per m².", "Oak Fronts cost 185 EUR per m².") == "Fronts cost 185 EUR per m²."


def test_curly_and_straight_quotation_marks_are_the_same():
    assert locate('Say "yes" to oak.', TEXT) == "Say “yes” to oak."
    assert locate("Say «yes» to oak.", TEXT) == "Say “yes” to oak."


def test_a_quote_across_a_paragraph_break_keeps_the_original_span():
    assert locate("in any colour. Say", TEXT) == "in any colour.\n\nSay"


@pytest.mark.parametrize(
    "bad",
    [
        "Oak fronts cost 158 EUR per m².",  # doctored figure
        "Oak fronts cost 185 EUR in any colour.",  # stitched from two places
        "oak fronts cost 185 eur per m².",  # case changed beyond the first letter: not verbatim
        "185 EUR",  # under 8 characters
    ],
)
def test_quotes_that_are_not_verbatim_fail(bad):
    assert locate(bad, TEXT) is None


def test_length_limits_are_8_to_1200_characters():
    assert locate("x" * 7, "x" * 2000) is None
    assert locate("x" * 8, "x" * 2000) == "x" * 8
    assert locate("x" * 1200, "x" * 2000) == "x" * 1200
    assert locate("x" * 1201, "x" * 2000) is None


def test_normalise_folds_dashes_quotes_and_space():
    assert normalise(" a\u2011b\u00a0\u201cc\u201d \u2018d\u2019 ") == "a-b \"c\" 'd'"


def test_verify_keeps_good_statements_and_counts_the_rest():
    found = hits(TEXT, "Delivery costs 40 EUR within 15 km.")
    claims = (
        Claim("Oak is 185.", 1, "Oak fronts cost 185 EUR per m²."),
        Claim("Oak is 158.", 1, "Oak fronts cost 158 EUR per m²."),  # doctored
        Claim("Delivery 40.", 1, "Delivery costs 40 EUR within 15 km."),  # wrong fragment cited
        Claim("Out of set.", 3, "Delivery costs 40 EUR within 15 km."),  # not retrieved
        Claim("Delivery 40.", 2, "Delivery costs 40 EUR within 15 km."),
    )
    statements, discarded = verify(claims, found)
    assert [s.text for s in statements] == ["Oak is 185.", "Delivery 40."]
    assert discarded == 3
    quote = statements[1].quotes[0]
    assert (quote.document, quote.position, quote.of, quote.caption) == ("d.md", 2, 2, "Doc › S · fragment 2 of 2")


def test_a_list_bullet_in_front_of_a_quote_is_not_part_of_it():
    assert locate("- Solid oak front: 240 EUR.", "- Solid oak front: 240 EUR.\n- Other") == "Solid oak front: 240 EUR."


def test_a_statement_left_as_the_prompt_examples_placeholder_shows_its_quote_instead():
    claims = (Claim("<statement>", 1, "Oak fronts cost 185 EUR per m²."), Claim("", 1, "Say “yes” to oak."))
    statements, discarded = verify(claims, hits(TEXT))
    assert [s.text for s in statements] == ["Oak fronts cost 185 EUR per m².", "Say “yes” to oak."]
    assert discarded == 0
