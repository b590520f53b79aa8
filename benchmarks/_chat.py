"""What the chat benchmarks (slack_load.py, telegram_batch.py) share: the demo questions they send, and the
pipeline they answer with.

Imported by those scripts once they have put the repository on sys.path.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from core.answering.pipeline import Pipeline
from core.common.settings import Settings

# Questions on the demo's documents; each benchmark adds one of its own.
DEMO_QUESTIONS = [
    "how much is a walnut worktop?",
    "warranty on hinges?",
    "when is the balance due?",
    "how heavy is a 3 m oak worktop?",
    "do you make windows?",
]


@contextmanager
def warm_pipeline(knowledge: Path) -> Iterator[Pipeline]:
    """The extractive pipeline on `knowledge`, indexed into a temporary folder and past its first answer (the
    model's load), so the figures measure answering alone."""
    with tempfile.TemporaryDirectory() as tmp:
        pipeline = Pipeline(Settings(knowledge_dir=knowledge, data_dir=Path(tmp)))
        pipeline.knowledge.sync()
        pipeline.answer("warm up the model", frozenset({"public"}))
        yield pipeline
