"""Blocks (core/common/blocks.py): what a person would quote, each verbatim from its fragment."""

from core.common.blocks import blocks

WARRANTY = """Every front has a warranty of 5 years from delivery. It covers the hinges too.

The warranty does not cover:

- Water damage from leaking sinks.
- Burns from hot pans.

To make a claim:

1. Photograph the defect.
2. Send the photos with your order number.

Wood: Beech; Price per metre: 260 EUR
Wood: Walnut; Price per metre: 520 EUR"""


def _by_kind(kind):
    return [b for b in blocks(WARRANTY) if b.kind == kind]


def test_a_list_is_a_block_with_its_lead_in_and_every_item():
    (whole,) = _by_kind("list")
    assert whole.text == "The warranty does not cover:\n\n- Water damage from leaking sinks.\n- Burns from hot pans."
    assert whole.text in WARRANTY, "quoted verbatim, so the verifier finds it"


def test_an_item_is_read_after_its_lead_in_but_quoted_alone():
    item = next(b for b in _by_kind("item") if "Burns" in b.text)
    assert item.text == "Burns from hot pans."
    assert item.read == "The warranty does not cover: Burns from hot pans."


def test_a_step_is_read_with_the_sentence_that_introduces_the_procedure():
    (procedure,) = _by_kind("steps")
    assert procedure.text.startswith("To make a claim:") and procedure.text.endswith("order number.")
    step = _by_kind("step")[1]
    assert (step.text, step.read) == (
        "Send the photos with your order number.",
        "To make a claim: Send the photos with your order number.",
    )


def test_a_table_row_is_a_block_with_its_header_names():
    assert [b.text for b in _by_kind("row")] == [
        "Wood: Beech; Price per metre: 260 EUR",
        "Wood: Walnut; Price per metre: 520 EUR",
    ]


def test_a_sentence_that_leans_on_the_one_before_is_quoted_with_it():
    texts = [b.text for b in _by_kind("sentence")]
    assert "Every front has a warranty of 5 years from delivery. It covers the hinges too." in texts
    assert "It covers the hinges too." not in texts
    assert "The warranty does not cover:" not in texts, "a lead-in alone says nothing"


def test_a_list_too_long_to_read_is_quoted_item_by_item():
    long_list = "We stock:\n\n" + "\n".join(f"- Board number {i} in oak, beech, walnut and ash." for i in range(40))
    kinds = {b.kind for b in blocks(long_list)}
    assert "list" not in kinds and "item" in kinds
