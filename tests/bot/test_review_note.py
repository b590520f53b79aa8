"""A quote from a document past its review date says so beside its caption, on every surface."""

import json

from bot import presenter
from bot.console import render
from bot.slack import render as slack_render
from bot.telegram import render as telegram_render
from core import Answer, Quote, Statement

FRESH = Quote("Delivery within 15 km costs 40 EUR.", 3, "delivery.md", "Delivery", ("Zones",), 1, 2, as_of="2026-10-01")
STALE = Quote(
    "Oak fronts cost 185 EUR per m².",
    4,
    "prices.md",
    "Price list",
    ("Fronts",),
    2,
    6,
    page=4,
    as_of="2025-10-01",
    stale=True,
)
NOTE = "as of 1 Oct 2025 — may be out of date"


def answer(*quotes: Quote) -> Answer:
    statements = tuple(Statement(q.text, (q,)) for q in quotes)
    return Answer("a1", "how much?", "answered", None, statements, 0, (), {}, "extractive")


def test_the_note_follows_the_caption_of_a_stale_quote_only():
    shown = presenter.present(answer(FRESH, STALE))
    captions = [p.text for p in shown.parts if p.kind == "caption"]
    assert captions == [
        "Delivery › Zones · fragment 1 of 2",
        f"Price list › Fronts · p. 4 · fragment 2 of 6 · {NOTE}",
    ]
    assert (
        shown.plain.splitlines()[1]
        == f"“Oak fronts cost 185 EUR per m².” (Price list › Fronts · p. 4 · fragment 2 of 6 · {NOTE})"
    )


def test_every_surface_shows_the_note_beside_the_caption():
    stale = answer(STALE)
    console = render(stale)
    assert f"📄 Price list › Fronts · p. 4 · fragment 2 of 6 · {NOTE}" in console
    blocks, fallback = slack_render.answer_blocks(presenter.present(stale))
    contexts = [b["elements"][0]["text"] for b in blocks if b["type"] == "context"]
    assert contexts == [f"📄 Price list › Fronts · p. 4 · fragment 2 of 6 · {NOTE}"] and NOTE in fallback
    (telegram,) = telegram_render.messages(presenter.present(stale))
    assert f"<i>📄 Price list › Fronts · p. 4 · fragment 2 of 6 · {NOTE}</i>" in telegram
    assert "may be out of date" not in render(answer(FRESH))


def test_the_json_carries_the_date_and_the_flag_and_keeps_the_caption_as_it_was():
    quote = json.loads(json.dumps(answer(STALE).to_json()))["statements"][0]["quotes"][0]
    assert (quote["as_of"], quote["stale"]) == ("2025-10-01", True)
    assert quote["caption"] == "Price list › Fronts · p. 4 · fragment 2 of 6"
    assert Quote.from_json(quote) == STALE
    old = {k: v for k, v in quote.items() if k not in ("as_of", "stale")}  # a run-log row from before the register
    assert Quote.from_json(old) == Quote(STALE.text, 4, "prices.md", "Price list", ("Fronts",), 2, 6, page=4)


def test_a_date_that_cannot_be_read_still_gives_the_warning():
    assert presenter.review_note("autumn") == "may be out of date"
    assert presenter.review_note("2026-03-09") == "as of 9 Mar 2026 — may be out of date"
