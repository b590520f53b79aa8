"""scripts/train_judge.py: mined pairs (scripts/mine_pairs.py) are trained on only when kept, and never when they
come from a validation business."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _train_judge():
    spec = importlib.util.spec_from_file_location("train_judge", ROOT / "scripts" / "train_judge.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # its top level needs the standard library only
    return module


def test_mined_pairs_of_a_validation_business_or_not_kept_are_not_trained_on(tmp_path):
    train_judge = _train_judge()
    names = [f"business-{i}" for i in range(40)]
    held = next(n for n in names if train_judge._business_validation(n))
    trained = next(n for n in names if not train_judge._business_validation(n))
    rows = [
        {"business": trained, "question": "q1", "candidate": "c1", "label": 1, "keep": True},
        {"business": trained, "question": "q2", "candidate": "c2", "label": 0, "keep": False},
        {"business": held, "question": "q3", "candidate": "c3", "label": 0, "keep": True},
    ]
    path = tmp_path / "mined.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    assert train_judge._mined(path) == [("q1", "c1", 1)]
