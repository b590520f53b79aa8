"""The extractive answerer with the knobs only benchmarks turn: measured, not shipped.

- `fragment_judge` / `fragment_threshold`: a fragment-level judge (scripts/train_judge.py --form fragment) as a
  second veto on whole fragments; it cost correct answers on two of the three gold sets for each refusal it
  gained (core/data/judge/MODEL_CARD.md, "The fragment-level form").
- `judge_mix`: the veto reads (1 - mix) × the judge's probability + mix × similarity's score, best of the judged
  candidates; 0 is the judge alone, as shipped ("The veto on judge and similarity mixed").
- `judge_parts`: off, only the whole of a compound question is judged, not each part on its own.

benchmarks/judge_sweep.py turns them; the product's answerer has none of them.
"""

from __future__ import annotations

from collections.abc import Sequence

from core.answering.extractive import ExtractiveAnswerer, Scored
from core.answering.judge import Judge, candidate_text
from core.common.answers import Draft
from core.common.values import Hit


class SweepAnswerer(ExtractiveAnswerer):
    fragment_judge: Judge | None = None
    fragment_threshold: float = 0.5
    judge_mix: float = 0.0
    judge_parts: bool = True

    def _vetoes(self, judged: list[Scored], ranking: list[Scored]) -> bool:
        if not self.judge_mix:
            return super()._vetoes(judged, ranking)
        similarity = {(n, b): v for v, n, b in ranking}
        mixed = [(1 - self.judge_mix) * p + self.judge_mix * similarity[(n, b)] for p, n, b in judged]
        return max(mixed, default=0.0) < self.policy.judge_threshold

    def _accepted_parts(
        self, parts: list[str], rankings: list[list[Scored]], hits: Sequence[Hit], language: str | None
    ) -> list[Scored]:
        return super()._accepted_parts(parts, rankings, hits, language) if self.judge_parts else []

    def _fragments_refuse(self, question: str, judged: list[Scored], draft: Draft, hits: Sequence[Hit]) -> bool:
        """Does any fragment the best candidates stand in answer the question, read whole?"""
        if self.fragment_judge is None:
            return False
        numbers = list(dict.fromkeys(n for _, n, _ in judged)) or [draft.claims[0].fragment]
        texts = [
            candidate_text(hits[n - 1].fragment.title, hits[n - 1].fragment.section, hits[n - 1].fragment.text)
            for n in numbers
        ]
        return float(self.fragment_judge.score(question, texts).max()) < self.fragment_threshold
