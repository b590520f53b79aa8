"""Follow-ups that swap the item (core/answering/conversation.py `swap_item`), in the languages companies write."""

import pytest

from core.answering.conversation import moved_readings, standalone, swap_item
from core.common.answers import Turn


@pytest.mark.parametrize(
    ("previous", "follow_up", "asked"),
    [
        ("How much is a walnut worktop?", "what about the beech one?", "How much is a beech worktop?"),
        ("how much is a straight staircase?", "and the spiral one?", "how much is a spiral staircase?"),
        ("How long is the warranty on hinges?", "and on finishes?", "How long is the warranty on finishes?"),
        ("was kostet die deluxe suite pro nacht?", "und die junior suite?", "was kostet die junior suite pro nacht?"),
        (
            "cuanto cuesta la bici electrica por dia?",
            "y la bici de carretera?",
            "cuanto cuesta la bici de carretera por dia?",
        ),
        # Only as many words around the shared one as the item has are swapped: the rest of the phrase stays.
        ("monthly fee for tier 2 support", "and tier 3?", "monthly fee for tier 3 support"),
        # The words of asking in another language are no topic: "una corona" is what is swapped, not "cuanto cuesta".
        ("cuanto cuesta una corona", "y un empaste?", "cuanto cuesta una empaste"),
    ],
)
def test_a_follow_up_naming_another_item_asks_the_previous_question_about_it(previous, follow_up, asked):
    assert swap_item(follow_up, previous) == asked


@pytest.mark.parametrize(
    ("previous", "follow_up"),
    [
        ("How much is a solid oak worktop?", "and how heavy is a 3 m one?"),  # a question of its own
        ("How much is a solid oak worktop?", "and delivery?"),  # another topic, not another worktop
        ("How much is a walnut worktop?", "and how much does it cost to deliver it?"),
    ],
)
def test_a_follow_up_that_asks_more_than_an_item_is_not_swapped(previous, follow_up):
    assert swap_item(follow_up, previous) is None


def test_follow_ups_in_german_french_and_spanish_are_joined_to_the_question_before():
    for previous, follow_up in [
        ("was kostet die deluxe suite?", "und die junior suite?"),
        ("combien coûte la chambre double ?", "et pour 3 nuits ?"),
        ("cuanto cuesta el alquiler de la bici?", "y cuanto tarda?"),
    ]:
        assert standalone(follow_up, [Turn(previous, "")]) != follow_up


@pytest.mark.parametrize(
    ("prefix", "topic", "readings"),
    [
        # Also the item before replaced, so the judge can read one item, not both.
        (
            "how much is the highland classic per night in july?",
            "the cairngorm lodge",
            [
                "how much is the highland classic per night in july the cairngorm lodge",
                "how much is the cairngorm lodge per night in july",
            ],
        ),
        (
            "What is the warranty on hinges?",
            "the finish",
            ["What is the warranty on hinges the finish", "What is the warranty on finish"],
        ),
        # A topic sharing a word with the question before is only joined to it.
        ("How much is a solid oak worktop?", "the oak one", ["How much is a solid oak worktop the oak one"]),
    ],
)
def test_what_about_asks_the_question_before_joined_and_about_the_new_topic(prefix, topic, readings):
    assert moved_readings(prefix, topic) == readings


def test_what_about_after_a_question_typed_without_its_question_mark_still_moves():
    joined = standalone("what about the cairngorm lodge?", [Turn("how much is the highland classic per night", "")])
    assert joined == "how much is the highland classic per night? what about the cairngorm lodge?"
    assert standalone("and the deposit for it?", [Turn("e-bike price", "")]) == "e-bike price and the deposit for it?"
