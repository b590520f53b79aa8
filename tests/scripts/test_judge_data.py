"""scripts/judge_data: the validator holds every label to a real block, and the set's derived pairs."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts" / "judge_data"))

import validate  # noqa: E402

PRICES = """---
title: Price list
audience: public
---
# Price list

## Worktops

| Wood | Price per metre | Depth |
|---|---|---|
| Beech | 260 EUR | 60 cm |
| Walnut | 520 EUR | 60 cm |

## Warranty

Every worktop has a warranty of 5 years from delivery. It covers the glue joints as well.

The warranty does not cover:

- Water damage from leaking sinks.
- Burns from hot pans.
"""

STAFF = """---
title: Staff notes
audience: internal
---
# Staff notes

Staff may grant a discount of 10 percent on display pieces.
"""


def other(name: str) -> str:
    return f"---\ntitle: {name}\naudience: public\n---\n# {name}\n\nThe {name} page is about {name} and nothing else.\n"


def _business(folder: Path, labels: list[dict]) -> Path:
    docs = folder / "documents"
    docs.mkdir(parents=True)
    (docs / "prices.md").write_text(PRICES, encoding="utf-8")
    (docs / "staff.md").write_text(STAFF, encoding="utf-8")
    for name in ("delivery", "care", "contact"):
        (docs / f"{name}.md").write_text(other(name), encoding="utf-8")
    meta = {"slug": folder.name, "name": "Test Joinery", "kind": "trade", "language": "en", "formats": {}}
    (folder / "business.json").write_text(json.dumps(meta), encoding="utf-8")
    with (folder / "labels.jsonl").open("w", encoding="utf-8") as out:
        for label in labels:
            out.write(json.dumps(label) + "\n")
    return folder


def _labels(answer: dict) -> list[dict]:
    """50 questions, 18 of them near misses, 3 follow-ups: the counts a business needs."""
    labels = [{"id": "q0", "question": "what does the warranty not cover", "label": "answerable", "answer": [answer]}]
    for i in range(1, 31):
        labels.append(
            {
                "id": f"q{i}",
                "question": f"beech worktop price {i}",
                "label": "answerable",
                "answer": [{"document": "prices.md", "contains": ["Beech", "260 EUR"]}],
                **({"follows": f"q{i - 1}"} if i <= 3 else {}),
            }
        )
    for i in range(31, 49):
        near = {"document": "prices.md", "contains": ["Walnut", "520 EUR"]}
        labels.append(
            {
                "id": f"q{i}",
                "question": f"cherry worktop {i}",
                "label": "near_miss",
                "kind": "other_entity",
                "near": [near],
            }
        )
    labels.append({"id": "q49", "question": "weather in paris?", "label": "out_of_domain"})
    return labels


def test_a_business_whose_labels_point_at_real_blocks_passes(tmp_path: Path) -> None:
    whole_list = {"document": "prices.md", "contains": ["The warranty does not cover:", "Burns from hot pans."]}
    business = validate.load(_business(tmp_path / "test-joinery", _labels(whole_list)))
    validate.check_business(business)
    assert business.problems == []


@pytest.mark.parametrize(
    ("answer", "problem"),
    [
        ({"document": "prices.md", "contains": ["Cherry", "260 EUR"]}, "is not verbatim"),
        ({"document": "prices.md", "contains": ["Beech", "520 EUR"]}, "no one block"),
        ({"document": "missing.md", "contains": ["Beech"]}, "no document"),
        ({"document": "staff.md", "contains": ["discount of 10 percent"]}, "asked by a customer"),
    ],
)
def test_a_label_that_points_at_no_block_fails(tmp_path: Path, answer: dict, problem: str) -> None:
    business = validate.load(_business(tmp_path / "test-joinery", _labels(answer)))
    validate.check_business(business)
    assert len(business.problems) == 1 and problem in business.problems[0]
    assert validate.main([str(business.folder)]) == 1


def test_too_few_near_misses_fail(tmp_path: Path) -> None:
    labels = [
        label for label in _labels({"document": "prices.md", "contains": ["Beech"]}) if label["label"] != "near_miss"
    ]
    business = validate.load(_business(tmp_path / "test-joinery", labels))
    validate.check_business(business)
    assert any("fewer than 50" in p for p in business.problems)
    assert any("under 35%" in p for p in business.problems)


def test_the_shipped_businesses_pass() -> None:
    """The validator on the data as shipped, the set's totals included (what .ci/run checks)."""
    assert validate.main([]) == 0
