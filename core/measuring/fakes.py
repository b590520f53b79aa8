"""Stand-ins that implement the real protocols, shared by `verbatim check` and the tests."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

import numpy as np

from core.common.answers import Draft, Turn
from core.common.values import Hit
from core.vectors.embeddings import normalise

_WORD = re.compile(r"[a-z0-9]+")


class WordEmbedder:
    """Bag of hashed words: texts sharing words score high; deterministic, instant, no model file."""

    def __init__(self, dim: int = 64, name: str = "fake") -> None:
        self.dim = dim
        self.name = name
        self.calls = 0
        self.texts = 0  # how many texts were embedded in all

    @property
    def id(self) -> str:
        return f"fake:{self.name}:{self.dim}"

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls += 1
        self.texts += len(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in _WORD.findall(text.lower()):
                out[row, int(hashlib.md5(word.encode()).hexdigest(), 16) % self.dim] += 1.0
        return normalise(out)


class ScriptedAnswerer:
    """Returns a fixed draft (or raises a fixed error) and counts its calls, like a model would be counted."""

    name = "scripted"

    def __init__(self, draft: Draft | Exception) -> None:
        self.draft = draft
        self.calls = 0

    def surer(self, threshold: float) -> None:
        return None

    def rewrite(self, question: str, history: Sequence[Turn]) -> tuple[str, int]:
        return question, 0

    def answer(self, question: str, hits: Sequence[Hit], language: str | None = None) -> Draft:
        self.calls += 1
        if isinstance(self.draft, Exception):
            raise self.draft
        return self.draft
