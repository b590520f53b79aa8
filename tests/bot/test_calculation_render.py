"""A calculation is its own block on every surface: the line, each figure's source, the assumptions."""

from bot import presenter
from bot.console import render
from bot.slack import render as slack_render
from bot.telegram import render as telegram_render
from core import Answer, Assumption, Calculation, CalculationInput, Quote, Statement

WORKTOP = Quote(
    "Solid oak worktop, 38 mm: 310 EUR per running metre.", 7, "price-list.md", "Price list", ("Worktops",), 3, 7
)
CALCULATION = Calculation(
    "worktop",
    "length * price",
    "3 m × 310 EUR per m",
    (CalculationInput("length", "3 m", None), CalculationInput("price", "310 EUR per m", WORKTOP)),
    "930.00",
    "EUR",
    (Assumption("one piece of worktop <3 m>", "the question says 3 m"),),
)
LINE = "🧮 3 m × 310 EUR per m = 930.00 EUR"


def answer(calculations=(CALCULATION,), dropped=0):
    statement = Statement(WORKTOP.text, (WORKTOP,))
    return Answer(
        "a1",
        "How much are 3 m of oak worktop?",
        "answered",
        None,
        (statement,),
        0,
        (),
        {},
        "extractive",
        calculations=calculations,
        calculations_dropped=dropped,
    )


def test_the_presenter_shows_the_calculation_under_the_quotes_with_sources_and_assumptions():
    shown = presenter.present(answer(dropped=1))
    kinds = [p.kind for p in shown.parts]
    assert kinds == ["quote", "caption", "calculation", "source", "source", "assumption", "note"]
    assert shown.parts[2].text == LINE
    assert shown.parts[3].text == "3 m: from your question"
    assert shown.parts[4].text == f"310 EUR per m: {WORKTOP.caption}"
    assert (
        shown.parts[5].text.startswith("Assumed: one piece") and "because the question says 3 m" in shown.parts[5].text
    )
    assert shown.parts[6].text == "1 calculation could not be checked and was left out"
    assert LINE in shown.plain


def test_thousands_are_grouped_in_the_result():
    big = Calculation("t", "a + b", "930 EUR + 85 EUR", (), "1015.00", "EUR")
    assert presenter.calculation_line(big) == "🧮 930 EUR + 85 EUR = 1,015.00 EUR"


def test_console_renders_the_calculation_block():
    text = render(answer(), width=200)
    assert f"   {LINE}" in text
    assert f"📄 310 EUR per m: {WORKTOP.caption}" in text and "↳ Assumed: one piece" in text


def test_slack_renders_the_calculation_bold_and_its_sources_as_context():
    message = slack_render.messages(presenter.present(answer()))[0]
    sections = [b["text"]["text"] for b in message.blocks if b["type"] == "section"]
    contexts = [b["elements"][0]["text"] for b in message.blocks if b["type"] == "context"]
    assert f"*{LINE}*" in sections
    assert f"📄 310 EUR per m: {WORKTOP.caption}" in contexts
    assert any(c.startswith("↳ Assumed: one piece of worktop &lt;3 m&gt;") for c in contexts)  # escaped


def test_telegram_renders_the_calculation_bold_and_escapes_it():
    text = telegram_render.messages(presenter.present(answer()))[0]
    assert f"<b>{LINE}</b>" in text
    assert f"<i>📄 310 EUR per m: {WORKTOP.caption}</i>" in text
    assert "one piece of worktop &lt;3 m&gt;" in text and "<3 m>" not in text
