"""The one ask flow: a question is cleaned, limited, asked, presented once, and a failure is a sentence."""

import logging

import pytest

from bot import presenter
from bot.asking import Asker, Notice, Reply, split
from core import SCOPES, RunLogError, StoreUnavailable, VerbatimError


def test_a_bad_question_is_refused_before_the_rate_limit_and_costs_no_slot(pipeline):
    asker = Asker(pipeline, "telegram", per_minute=1)
    refused = asker.admit("x" * 5000, "7")
    assert isinstance(refused, Notice) and refused.reason == "invalid"
    assert refused.text == presenter.invalid_question(VerbatimError(refused.detail))
    assert asker.admit("  how much is a   walnut worktop? ", "7") == "how much is a walnut worktop?"
    slow = asker.admit("and a beech one?", "7")
    assert isinstance(slow, Notice) and slow.reason == "slow" and slow.line.startswith("You're asking faster")
    assert asker.admit("and a beech one?", "8") == "and a beech one?", "the limit is per asker"


def test_an_answer_is_presented_once_with_the_id_its_buttons_carry(pipeline, monkeypatch):
    present, presented = presenter.present, []

    def counted(answer):
        presented.append(answer)
        return present(answer)

    monkeypatch.setattr(presenter, "present", counted)
    reply = Asker(pipeline, "slack").reply("how much is a walnut worktop?", SCOPES["internal"])
    assert isinstance(reply, Reply) and presented == [reply.answer]
    assert reply.shown.feedback and reply.shown.answer_id == reply.answer.id


@pytest.mark.parametrize(
    ("error", "reason", "level"),
    [
        (StoreUnavailable("The database at db.internal:5432 can't be reached."), "unavailable", logging.WARNING),
        (RunLogError("The run log /srv/var/runlog.sqlite3 can't be written (disk full)."), "failed", logging.ERROR),
        (RuntimeError("index exploded"), "failed", logging.ERROR),
    ],
)
def test_a_failure_is_logged_for_the_operator_and_a_sentence_for_the_user(pipeline, caplog, error, reason, level):
    def failing(*args, **kwargs):
        raise error

    pipeline.ask = failing
    notice = Asker(pipeline, "slack").reply("how much is a walnut worktop?", SCOPES["internal"])
    assert isinstance(notice, Notice) and notice.reason == reason
    assert notice.line == f"⚠️ {presenter.UNAVAILABLE if reason == 'unavailable' else presenter.APOLOGY}"
    assert str(error) in caplog.text and [r.levelno for r in caplog.records] == [level]


def test_answer_leaves_a_failure_to_the_caller(pipeline):
    def failing(*args, **kwargs):
        raise RuntimeError("index exploded")

    pipeline.ask = failing
    with pytest.raises(RuntimeError):
        Asker(pipeline, "console").answer("how much is a walnut worktop?", SCOPES["internal"])


def test_split_cuts_at_line_ends_then_spaces_within_the_limit():
    text = "first line\nsecond line that is longer\nthird"
    assert split(text, 30) == ["first line", "second line that is longer", "third"]
    assert split("one two three four", 9) == ["one two", "three", "four"]
    assert split("x" * 25, 10) == ["x" * 10, "x" * 10, "x" * 5]
    assert split("short", 10) == ["short"] and split("", 10) == [""]
    assert split("word    ", 5) == ["word"], "nothing empty is left to send"


def test_split_measures_a_piece_as_it_is_sent():
    def escaped(text: str) -> int:
        return len(text.replace("&", "&amp;")) + len("<b></b>")

    parts = split("a & b & c & d & e & f", 20, escaped)
    assert all(escaped(p) <= 20 for p in parts) and " ".join(parts) == "a & b & c & d & e & f"
