import pytest

from core.common.errors import DocumentError
from core.common.text import split_sentences
from core.ingest.fragments import MAX_CHARS, fragment_document
from core.ingest.readers import parse_document


def doc(text: str, name: str = "doc.md"):
    return parse_document(name, text.encode())


def test_front_matter_gives_title_and_audience():
    d = doc("---\ntitle: Price list\naudience: public\nowner: Sales\n---\n# Prices\n\nText.\n")
    assert (d.title, d.audience, d.meta["owner"]) == ("Price list", "public", "Sales")


def test_document_without_audience_is_internal():
    assert doc("# Notes\n\nSome text here.").audience == "internal"


def test_title_falls_back_to_first_heading_then_file_name():
    assert doc("# Warranty terms\n\nText.").title == "Warranty terms"
    assert doc("Just text.", "product-care.md").title == "Product care"


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        (b"---\ntitle: x\n\nno closing line\n", "never closed"),
        (b"---\njust words\n---\ntext\n", "not 'key: value'"),
        (b"---\naudience: partners\n---\ntext\n", "audience must be"),
        (b"\xff\xfe\x00bad", "UTF-8"),
        (b"   \n\n", "no text"),
    ],
)
def test_malformed_documents_say_why(raw, reason):
    with pytest.raises(DocumentError, match=reason):
        parse_document("bad.md", raw)


def test_sections_carry_heading_paths_and_never_mix():
    d = doc(
        "# Price list\n\nIntro.\n\n## Fronts\n\nOak 185 EUR.\n\n"
        "### Glass\n\nInserts 95 EUR.\n\n## Tops\n\nOak 310 EUR.\n"
    )
    fragments = fragment_document(d)
    assert [f.section for f in fragments] == [(), ("Fronts",), ("Fronts", "Glass"), ("Tops",)]
    assert [f.text for f in fragments] == ["Intro.", "Oak 185 EUR.", "Inserts 95 EUR.", "Oak 310 EUR."]
    assert fragments[2].caption == "Price list › Fronts › Glass · fragment 3 of 4"
    assert fragments[0].caption == "Price list · fragment 1 of 4"


def test_embedded_text_carries_title_and_section_but_quote_text_is_bare():
    f = fragment_document(doc("---\ntitle: Warranty\n---\n## Terms\n\nFive years.\n"))[0]
    assert f.embedded_text == "Warranty. Terms. Five years."
    assert f.text == "Five years."


def test_paragraphs_pack_up_to_the_limit_without_crossing_sections():
    para = "Word " * 50  # 250 chars
    body = "## A\n\n" + "\n\n".join([para.strip()] * 7) + "\n\n## B\n\nShort."
    fragments = fragment_document(doc(body))
    assert all(len(f.text) <= MAX_CHARS for f in fragments)
    a = [f for f in fragments if f.section == ("A",)]
    assert len(a) == 3  # 3 + 3 + 1 paragraphs of 249 chars
    assert fragments[-1].text == "Short." and fragments[-1].section == ("B",)
    assert [f.position for f in fragments] == list(range(1, len(fragments) + 1))
    assert {f.of for f in fragments} == {len(fragments)}


def test_long_paragraph_is_cut_at_sentence_boundaries():
    sentences = [f"Sentence number {i} says something about oak boards and their width." for i in range(40)]
    fragments = fragment_document(doc("## Long\n\n" + " ".join(sentences)))
    assert len(fragments) > 1
    assert all(len(f.text) <= MAX_CHARS for f in fragments)
    for f in fragments:
        assert f.text.startswith("Sentence number") and f.text.endswith("width.")
    assert " ".join(f.text for f in fragments) == " ".join(sentences)


def test_a_sentence_longer_than_the_limit_is_cut_at_a_word():
    fragments = fragment_document(doc("## X\n\n" + "oak " * 400))
    assert all(0 < len(f.text) <= MAX_CHARS for f in fragments)


def test_headings_inside_code_fences_are_text():
    fragments = fragment_document(doc("## Real\n\n```\n# not a heading\n```\n"))
    assert len(fragments) == 1 and "# not a heading" in fragments[0].text


def test_plain_text_documents_have_no_sections():
    fragments = fragment_document(parse_document("notes.txt", b"# not a heading\n\nSecond paragraph."))
    assert fragments[0].section == ()
    assert fragments[0].text == "# not a heading\n\nSecond paragraph."


def test_sentences_split_on_punctuation_and_list_lines():
    assert split_sentences("One is here. Two is 1.5 kg! Three?\n- Item: 9 EUR.") == [
        "One is here.",
        "Two is 1.5 kg!",
        "Three?",
        "- Item: 9 EUR.",
    ]


def test_a_full_stop_after_an_abbreviation_or_a_dates_ordinal_ends_no_sentence():
    from core.common.text import split_sentences

    german = "Die Abrechnung kommt bis zum 31. Dezember. Danach gilt z. B. Folgendes: ca. 30 € im Jahr. Siehe Nr. 4."
    assert split_sentences(german) == [
        "Die Abrechnung kommt bis zum 31. Dezember.",
        "Danach gilt z. B. Folgendes: ca. 30 € im Jahr.",
        "Siehe Nr. 4.",
    ]
    assert split_sentences("Sprechzeiten: Mo. bis Fr. von 9 bis 12 Uhr. Sa. geschlossen.") == [
        "Sprechzeiten: Mo. bis Fr. von 9 bis 12 Uhr.",
        "Sa. geschlossen.",
    ]
    # English sentences that end in a letter, a unit, a time or "etc." still end there.
    assert split_sentences("Zone A. The fee is 3. After that, see p. 4 of the terms.") == [
        "Zone A.",
        "The fee is 3.",
        "After that, see p. 4 of the terms.",
    ]
    assert split_sentences("We sell chairs, etc. Open till 5 p.m. Tomorrow we close. The pool is 25 m. Lanes.") == [
        "We sell chairs, etc.",
        "Open till 5 p.m.",
        "Tomorrow we close.",
        "The pool is 25 m.",
        "Lanes.",
    ]
