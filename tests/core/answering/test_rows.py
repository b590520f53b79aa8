"""Table rows (core/answering/rows.py): a row is judged and quoted with its header, and the row of another entity
is not quoted for an entity the table lacks."""

import pytest

from core.answering.pipeline import Pipeline
from core.answering.rows import item_key, row_key
from core.common.questions import SCOPES
from core.common.settings import Settings
from core.retrieval.knowledge import KnowledgeBase
from tests.core.conftest import quotes_of

EQUIPMENT = """---
title: IT equipment policy
audience: public
---
# IT equipment policy

## Laptops by role

Each new starter receives one laptop, chosen by role:

| Role | Laptop | Memory |
|------|--------|--------|
| Designer | MacBook Pro 16 | 36 GB |
| Developer | ThinkPad P1 | 64 GB |
| Accountant | ThinkPad T14 | 16 GB |

Laptops are replaced every four years.

## Travel hotel limits

| Country | Hotel limit per night |
|---------|------------------------|
| Germany | 150 EUR |
| France | 170 EUR |
| Spain | 130 EUR |

Receipts are required for every night.
"""

PRICES = """---
title: Price list
audience: public
---
# Price list

## Tables and staircases

- Solid oak dining table, 180 × 90 cm, 40 mm top: 1,950 EUR.
- Oak bench, 160 cm: 690 EUR.
- Straight oak staircase, up to 14 steps, with one handrail: from 6,400 EUR.
- Quarter-turn oak staircase, up to 16 steps: from 8,900 EUR.

## Delivery

Delivery within 15 km is free. Beyond that it costs 2 EUR per km.
"""


def _pipeline(tmp_path, embedder, name, text):
    folder = tmp_path / "kb"
    folder.mkdir()
    (folder / name).write_text(text, encoding="utf-8")
    settings = Settings(knowledge_dir=folder, data_dir=tmp_path / "var")
    kb = KnowledgeBase(settings, embedder)
    kb.sync()
    return Pipeline(settings, kb)


def _serving(fixture: str, name: str, text: str):
    """A fixture named `fixture`: a pipeline on the one document `name` holding `text`."""

    @pytest.fixture(name=fixture)
    def serving(tmp_path, local_embedder):
        pipeline = _pipeline(tmp_path, local_embedder, name, text)
        yield pipeline
        pipeline.close()

    return serving


tables = _serving("tables", "it-equipment.md", EQUIPMENT)


def test_a_table_row_is_judged_and_quoted_with_its_header(tables, monkeypatch):
    judge = tables.answerer.judge
    read: list[str] = []
    score = judge.score
    monkeypatch.setattr(judge, "score", lambda question, texts: read.extend(texts) or score(question, texts))
    answer = tables.answer("Which laptop does a developer get?", SCOPES["public"])
    quotes = quotes_of(answer)
    assert answer.answered and [q.text for q in quotes] == ["Role: Developer; Laptop: ThinkPad P1; Memory: 64 GB"]
    assert quotes[0].caption == "IT equipment policy › Laptops by role · fragment 1 of 2"
    # The judge read the row with every header, under its document and section.
    assert any("Laptops by role" in t and "Role: Developer; Laptop: ThinkPad P1; Memory: 64 GB" in t for t in read)
    assert row_key(quotes[0].text) == ("Role", "Developer")


@pytest.mark.parametrize(
    ("knowledge", "question"),
    [
        ("tables", "Which laptop does a salesperson get?"),
        ("tables", "What is the hotel limit in Italy?"),
        # "zone e" reads as "zone" to the judge and to similarity: the rows of zones A to C are not its answer.
        ("zones", "zone e hours?"),
        ("zones", "council tax band f charge"),
    ],
)
def test_a_near_miss_row_of_another_entity_is_refused(request, knowledge, question):
    answer = request.getfixturevalue(knowledge).answer(question, SCOPES["public"])
    assert answer.kind == "refused", [q.text for q in quotes_of(answer)]


@pytest.mark.parametrize(
    ("knowledge", "question", "row"),
    [
        ("tables", "What is the hotel limit in France?", "Country: France; Hotel limit per night: 170 EUR"),
        (
            "tables",
            "How much memory does the designer's laptop have?",
            "Role: Designer; Laptop: MacBook Pro 16; Memory: 36 GB",
        ),
        ("tables", "Who gets the ThinkPad P1?", "Role: Developer; Laptop: ThinkPad P1; Memory: 64 GB"),
        (
            "zones",
            "zone b hours?",
            "Zone: Zone B; Area: Station streets; Hours of control: Monday to Friday, 7am to 7pm",
        ),
        ("zones", "council tax band c charge", "Band: C; Annual charge: £1,747"),
    ],
)
def test_a_row_the_question_names_is_still_quoted(request, knowledge, question, row):
    answer = request.getfixturevalue(knowledge).answer(question, SCOPES["public"])
    assert answer.answered and quotes_of(answer)[0].text == row


prices = _serving("prices", "price-list.md", PRICES)


def test_a_list_item_is_keyed_by_its_name():
    assert item_key("- Oak bench, 160 cm: 690 EUR.") == "Oak bench"
    assert item_key("Quarter-turn oak staircase, up to 16 steps: from 8,900 EUR.") == "Quarter-turn oak staircase"
    # No value given by name, or a sentence before the colon: not a row.
    assert item_key("- Water damage from leaks") is None
    assert item_key("- If the wood was stored outside for more than a week: no refund.") is None


def test_a_price_list_item_of_another_entity_is_refused(prices):
    answer = prices.answer("How much is a spiral staircase?", SCOPES["public"])
    assert answer.kind == "refused", [q.text for q in quotes_of(answer)]


@pytest.mark.parametrize(
    ("question", "item"),
    [
        ("How much is the straight staircase?", "Straight oak staircase, up to 14 steps, with one handrail"),
        ("How much is an oak bench?", "Oak bench, 160 cm: 690 EUR."),
        ("What does a quarter-turn staircase cost?", "Quarter-turn oak staircase, up to 16 steps: from 8,900 EUR."),
    ],
)
def test_a_list_item_the_question_names_is_still_quoted(prices, question, item):
    answer = prices.answer(question, SCOPES["public"])
    assert answer.answered and item in quotes_of(answer)[0].text


ZONES = """---
title: Parking permits
audience: public
---
# Parking permits

## Controlled zones

| Zone | Area | Hours of control |
|------|------|------------------|
| Zone A | Town centre | Monday to Saturday, 8am to 6pm |
| Zone B | Station streets | Monday to Friday, 7am to 7pm |
| Zone C | Hospital streets | Every day, 8am to 8pm |

## Council tax

| Band | Annual charge |
|------|---------------|
| A | £1,310 |
| B | £1,528 |
| C | £1,747 |
"""


zones = _serving("zones", "parking.md", ZONES)


def test_a_letter_that_is_a_word_is_no_code():
    from core.answering.rows import another_code

    assert another_code("which zone e permit?", [("zone", "a")], "") is True
    assert not another_code("what size a bike do i need", [("size", "s"), ("size", "m")], "")
    assert not another_code("zone e hours?", [("zone", "a")], "Zone E is new from May.")  # named elsewhere


def test_a_code_within_a_range_row_is_not_another():
    from core.answering.rows import _coded, another_code

    keys = [_coded("Grade", k) for k in ("Grade 1 to 2", "Grade 3 to 4", "Grade 5")]
    assert keys == [("grade", None), ("grade", None), ("grade", "5")]
    assert not another_code("notice period grade 4", [k for k in keys if k], "")  # within "Grade 3 to 4"
