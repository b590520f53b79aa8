"""The embedded default answerer: quotes the retrieved sentences that best answer the question.

No model is called. Each sentence of the retrieved fragments is scored by its embedding's
similarity to the question (the sentence is embedded with its document and section, as
fragments are) plus the share of the question's key terms and figures it holds. When no
sentence reaches the found-threshold the answer is `found = false`: loosely related text is
not quoted as an answer.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from core.answers import Claim, Draft, Turn, standalone
from core.embeddings import Embedder
from core.retrieval import Hit
from core.settings import DEFAULT_FOUND_THRESHOLD
from core.text import key_terms, split_sentences

MAX_STATEMENTS = 4
PER_FRAGMENT = 2
# A sentence within this much of the best one is also worth quoting (compound questions).
NEAR_BEST = 0.08
# A part of a compound question may quote a little below the found-threshold: the whole passed it.
PART_MARGIN = 0.08
LEXICAL_WEIGHT = 0.35

_BULLET = re.compile(r"^\s*(?:[-*+•]|\d+[.)])\s+")
# Where a compound question splits into parts that each deserve their own quote.
_CLAUSE = re.compile(
    r"[?;]|,\s*(?:and\s+)?(?=(?:what|how|when|where|which|who|is|are|do|does|can|will)\b)"
    r"|\band\s+(?=(?:what|how|when|where|which|who|is|are|do|does|can|will)\b)",
    re.IGNORECASE,
)


class ExtractiveAnswerer:
    """Picks quotable sentences; goes through the same verifier as any answerer."""

    name = "extractive"

    def __init__(self, embedder: Embedder, found_threshold: float = DEFAULT_FOUND_THRESHOLD) -> None:
        # Give it the knowledge base's CachedEmbedder: the question was just embedded for retrieval,
        # and the same fragments' sentences come back for many questions.
        self.embedder = embedder
        self.found_threshold = found_threshold

    def rewrite(self, question: str, history: Sequence[Turn]) -> tuple[str, int]:
        return standalone(question, history), 0

    def _score(self, questions: list[str], hits: Sequence[Hit]) -> list[list[tuple[float, int, str]]]:
        candidates: list[tuple[int, str, str]] = []
        for number, hit in enumerate(hits, start=1):
            f = hit.fragment
            context = ". ".join([f.title, *([f.section_path] if f.section else [])])
            for sentence in split_sentences(f.text):
                bare = _BULLET.sub("", sentence).strip()
                # Too short to say anything on its own ("Staff only."), or a list's lead-in ("…finished:").
                if len(bare.split()) >= 3 and not bare.endswith(":"):
                    candidates.append((number, bare, f"{context}. {bare}"))
        if not candidates:
            return [[] for _ in questions]
        sentence_vectors = self.embedder.embed([c[2] for c in candidates])
        sentence_terms = [key_terms(c[1]) for c in candidates]
        results = []
        for question, q_vector in zip(questions, self.embedder.embed(questions), strict=True):
            similarity = sentence_vectors @ q_vector
            q_terms = key_terms(question)
            scored = []
            for (number, bare, _), terms, sim in zip(candidates, sentence_terms, similarity, strict=True):
                # Overlap is counted on the sentence itself: its headings are shared by its neighbours.
                overlap = len(q_terms & terms) / len(q_terms) if q_terms else 0.0
                scored.append((float(sim) + LEXICAL_WEIGHT * overlap, number, bare))
            scored.sort(key=lambda item: -item[0])
            results.append(scored)
        return results

    def answer(self, question: str, hits: Sequence[Hit]) -> Draft:
        parts = [p.strip() for p in _CLAUSE.split(question) if key_terms(p)]
        rankings = self._score([question, *parts] if len(parts) > 1 else [question], hits)
        scored = rankings[0]
        if not scored or scored[0][0] < self.found_threshold:
            return Draft(found=False)
        chosen: list[Claim] = []
        per_fragment: dict[int, int] = {}

        def take(value: float, number: int, sentence: str) -> None:
            fits = len(chosen) < MAX_STATEMENTS and per_fragment.get(number, 0) < PER_FRAGMENT
            if fits and all(c.quote != sentence for c in chosen):
                per_fragment[number] = per_fragment.get(number, 0) + 1
                chosen.append(Claim(sentence, number, sentence))

        take(*scored[0])
        # Each part of a compound question ("what does it cost, and how heavy is it?") gets its best quote.
        for ranking in rankings[1:]:
            fresh = [r for r in ranking if all(c.quote != r[2] for c in chosen)]
            if fresh and fresh[0][0] >= self.found_threshold - PART_MARGIN:
                take(*fresh[0])
        best = scored[0][0]
        for value, number, sentence in scored[1:]:
            if value < max(self.found_threshold, best - NEAR_BEST):
                break
            take(value, number, sentence)
        return Draft(found=True, claims=tuple(chosen))
