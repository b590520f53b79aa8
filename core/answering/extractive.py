"""The embedded default answerer: quotes the retrieved sentences that best answer the question.

No model is called. Each sentence of the retrieved fragments is scored by its embedding's
similarity to the question (the sentence is embedded with its document and section, as
fragments are) plus the share of the question's key terms and figures it holds. When no
sentence reaches the found-threshold the answer is `found = false`: loosely related text is
not quoted as an answer.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Sequence
from dataclasses import replace

from core.answering.conversation import _ABOUT, PHRASE_ENDS, moved_readings, resolve_follow_up, standalone
from core.answering.figures import Reading
from core.answering.instructions import addressed_to_assistant
from core.answering.judge import Judge, candidate_text
from core.answering.policy import DEFAULT, AnswerPolicy
from core.answering.proposals import named, propose, unknown_item
from core.answering.ranges import fits_figures, row_holds, stated_quantities
from core.answering.rows import another_row
from core.common.answers import Claim, Draft, FigureInput, Turn
from core.common.blocks import Block
from core.common.language import detect
from core.common.text import key_terms, overlap_terms
from core.common.values import Hit, fragment_blocks, quotable_sentences, read_of
from core.vectors.embeddings import Embedder, embed_queries

Scored = tuple[float, int, str]  # (score, 1-based hit number, sentence)

# Where a compound question splits into parts that each deserve their own quote.
_CLAUSE = re.compile(
    r"[?;]|,\s*(?:and\s+)?(?=(?:what|how|when|where|which|who|is|are|do|does|can|will)\b)"
    r"|\band\s+(?=(?:what|how|when|where|which|who|is|are|do|does|can|will)\b)",
    re.IGNORECASE,
)


class ExtractiveAnswerer:
    """Picks quotable sentences; goes through the same verifier as any answerer."""

    name = "extractive"

    def __init__(self, embedder: Embedder, judge: Judge | None = None, policy: AnswerPolicy = DEFAULT) -> None:
        # Give it the knowledge base's CachedEmbedder: the question was just embedded for retrieval,
        # and the same fragments' sentences come back for many questions.
        self.embedder = embedder
        self.judge = judge
        self.policy = policy
        self.vetoes_calculations = False  # True for the second look's surer copy (see `surer`)

    def surer(self, threshold: float) -> ExtractiveAnswerer | None:
        """This answerer with a judge that must reach `threshold`, for hits retrieval found weaker; None without
        a judge, since similarity alone can't be surer of a weaker hit."""
        if self.judge is None:
            return None
        stricter = copy.copy(self)
        stricter.policy = replace(self.policy, judge_threshold=max(threshold, self.policy.judge_threshold))
        # Code checks a calculation's arithmetic, not that its quotes are about the asked item: below the floor,
        # the judge must vouch for it too.
        stricter.vetoes_calculations = True
        return stricter

    def rewrite(self, question: str, history: Sequence[Turn]) -> tuple[str, int]:
        joined = standalone(question, history)
        if self.judge is None or joined == question:
            return joined, 0
        return resolve_follow_up(question, history[-1].question, joined), 0

    def _score(
        self, questions: list[str], hits: Sequence[Hit], language: str | None
    ) -> list[list[tuple[float, int, str]]]:
        candidates: list[tuple[int, str, str]] = []
        for number, hit in enumerate(hits, start=1):
            # A line addressed to an assistant answers no one: it is no candidate, so the next best one can be.
            candidates.extend(
                (number, bare, embedded)
                for bare, embedded in quotable_sentences(hit.fragment)
                if not addressed_to_assistant(read_of(hit.fragment, bare))
            )
        if not candidates:
            return [[] for _ in questions]
        sentence_vectors = self.embedder.embed([c[2] for c in candidates])
        terms_of = overlap_terms(language)
        sentence_terms = [terms_of(c[1]) for c in candidates]
        results = []
        for question, q_vector in zip(questions, embed_queries(self.embedder, questions), strict=True):
            similarity = sentence_vectors @ q_vector
            q_terms = terms_of(question)
            scored = []
            for (number, bare, _), terms, sim in zip(candidates, sentence_terms, similarity, strict=True):
                # Overlap is counted on the sentence itself: its headings are shared by its neighbours.
                overlap = len(q_terms & terms) / len(q_terms) if q_terms else 0.0
                scored.append((float(sim) + self.policy.lexical_weight * overlap, number, bare))
            scored.sort(key=lambda item: -item[0])
            results.append(scored)
        return results

    def _judged(
        self,
        question: str,
        ranking: list[Scored],
        hits: Sequence[Hit],
        language: str | None,
        naming: frozenset[str] | set[str] = frozenset(),
    ) -> list[Scored]:
        """The best `policy.judged` candidates by similarity, re-scored by the judge and ranked by it; with `naming`,
        only the candidates whose sentence or headings name those terms. The ranking's candidates already fit the
        question's figures (`_fitting`)."""
        assert self.judge is not None

        def eligible(candidate: Scored) -> bool:
            f = hits[candidate[1] - 1].fragment
            return not naming or named(" ".join([f.title, *f.section, candidate[2]]), set(naming)) == naming

        top = [c for c in ranking if eligible(c)][: self.policy.judged]
        texts = [judged_text(hits, number, bare) for _, number, bare in top]
        probabilities = self.judge.score(question, texts)
        judged = [(float(p), number, bare) for p, (_, number, bare) in zip(probabilities, top, strict=True)]
        # Near ties go to the candidate whose own heading or text names what is asked about: the judge checks the
        # kind of answer (a duration for "how long is the warranty?"), not what it is of, and rates "We reply
        # within 3 working days" under "How to make a claim" above the list under "Warranty periods".
        terms_of = overlap_terms(language)
        asked = terms_of(question)

        def named_share(candidate: Scored) -> float:
            section = hits[candidate[1] - 1].fragment.section
            own = terms_of(" ".join([*section[-1:], candidate[2]]))
            return len(asked & own) / len(asked) if asked else 0.0

        judged.sort(key=lambda item: -(item[0] + self.policy.heading_weight * named_share(item)))
        return judged

    def answer(self, question: str, hits: Sequence[Hit], language: str | None = None) -> Draft:
        language = language or detect(question)  # the pipeline passes what it detected; a direct caller needn't
        if self.judge is not None and (about := _ABOUT.fullmatch(question)) and key_terms(about["prefix"]):
            # "…hinges? and what about the finish?": the question moves to the finish; the quote must name it.
            readings = moved_readings(about["prefix"], about["topic"])
            return self._answer_moved(readings, hits, key_terms(about["topic"]), language)
        # A clause of words of asking alone ("combien ?", "¿cuánto?") is no part: it asks about nothing of its own.
        parts = [p.strip() for p in _CLAUSE.split(question) if key_terms(p) - PHRASE_ENDS]
        if len(parts) <= 1 and unknown_item(question, hits):
            return Draft(found=False)
        rankings = self._score([question, *parts] if len(parts) > 1 else [question], hits, language)
        if self.judge is None:
            return self._answer_by_similarity(question, rankings, hits, language)
        return self._answer_vetted(question, parts, rankings, hits, language)

    def _answer_vetted(
        self, question: str, parts: list[str], rankings: list[list[Scored]], hits: Sequence[Hit], language: str | None
    ) -> Draft:
        """Similarity proposes, as without the judge; the judge refuses it when none of the best candidates
        answers, quotes its own sure pick too, and puts first the quote it rates clearly above similarity's."""
        asked_texts = [question, *parts] if len(parts) > 1 else [question]
        asked = [stated_quantities(text) for text in asked_texts]
        rankings = [_fitting(quantities, ranking) for quantities, ranking in zip(asked, rankings, strict=True)]
        draft = self._answer_by_similarity(question, rankings, hits, language)
        judged = self._judged(question, rankings[0], hits, language)
        veto = self._vetoes(judged, rankings[0])
        # Each part on its own: "can I have glass in a front and what does it cost" is answered by two sentences,
        # neither of which answers the whole.
        accepted_parts = []
        if len(parts) > 1 and draft.found and not draft.calculations:
            accepted_parts = self._accepted_parts(parts, rankings[1:], hits, language)
            veto = veto and not accepted_parts
        draft, held = _rows_holding(draft, asked[0], hits, self.policy.max_statements)
        # The judge reads words, not ranges: it rates "Zone B, 15 to 50 km: 85 EUR." 0.2 for "how much is delivery
        # 30 km away?". A row whose range code found to hold the stated quantity is not vetoed, unless it comes
        # from below the floor (the second look), where code has checked the range but not the item.
        veto = veto and (self.vetoes_calculations or not held)
        if draft.found and veto and (not draft.calculations or self.vetoes_calculations):
            # Similar enough, but none of the best candidates answers it: "how long is the warranty?" against
            # the repair rate after the warranty ends. A calculation was checked by code against its quotes,
            # unless its quotes come from below the floor (the second look).
            return Draft(found=False)
        if (
            draft.found
            and not draft.calculations
            and another_row(question, draft.claims, hits, self.embedder, self.policy.row_key_kind)
        ):
            # "Which laptop does a salesperson get?" against a table of roles without one: every row reads alike.
            return Draft(found=False)
        if draft.found and not draft.calculations and self._fragments_refuse(question, judged, draft, hits):
            return Draft(found=False)
        if draft.found and not draft.calculations:
            draft = self._ordered_by_judge(draft, judged)
        if accepted_parts:
            # An accepted part's best sentence is quoted, after the quotes already chosen, within the limit.
            claims = list(draft.claims)
            for _, number, sentence in accepted_parts:
                if not any(_overlaps(c, number, sentence) for c in claims) and len(claims) < self.policy.max_statements:
                    claims.append(Claim(sentence, number, sentence))
            draft = Draft(True, tuple(claims), draft.model_calls)
        return draft

    def _vetoes(self, judged: list[Scored], ranking: list[Scored]) -> bool:
        """Whether the judge refuses what similarity proposes: none of the judged candidates reaches the threshold."""
        return max((p for p, _, _ in judged), default=0.0) < self.policy.judge_threshold

    def _fragments_refuse(self, question: str, judged: list[Scored], draft: Draft, hits: Sequence[Hit]) -> bool:
        """A veto on whole fragments after the sentences' (none here; benchmarks measure one)."""
        return False

    def _accepted_parts(
        self, parts: list[str], rankings: list[list[Scored]], hits: Sequence[Hit], language: str | None
    ) -> list[Scored]:
        """Each part's best candidate that the judge accepts for that part alone."""
        accepted = []
        for part, ranking in zip(parts, rankings, strict=True):
            judged = self._judged(part, ranking, hits, language)
            passing = [j for j in judged if j[0] >= self.policy.judge_threshold]
            if passing:
                accepted.append(passing[0])
        return accepted

    def _ordered_by_judge(self, draft: Draft, judged: list[Scored]) -> Draft:
        """Similarity's quotes with the judge's say: its sure pick is quoted too (second), and the quote it rates
        clearly above similarity's first goes first."""
        claims = list(draft.claims)
        if judged and judged[0][0] >= self.policy.sure and not any(_overlaps(c, *judged[0][1:]) for c in claims):
            _, number, sentence = judged[0]
            claims.insert(1, Claim(sentence, number, sentence))
        rated = {(n, b): p for p, n, b in judged}
        if (first := rated.get((claims[0].fragment, claims[0].quote))) is not None and len(claims) > 1:
            top = max(claims[1:], key=lambda c: rated.get((c.fragment, c.quote), -1.0))
            if rated.get((top.fragment, top.quote), -1.0) >= first + self.policy.first_margin:
                claims.remove(top)
                claims.insert(0, top)
        return Draft(True, tuple(claims[: self.policy.max_statements]), draft.model_calls)

    def _answer_by_similarity(
        self, question: str, rankings: list[list[Scored]], hits: Sequence[Hit], language: str | None
    ) -> Draft:
        scored = rankings[0]
        if not scored or scored[0][0] < self.policy.found_threshold:
            return Draft(found=False)
        chosen: list[Claim] = []
        per_fragment: dict[int, int] = {}

        def take(value: float, number: int, sentence: str) -> None:
            fits = len(chosen) < self.policy.max_statements and per_fragment.get(number, 0) < self.policy.per_fragment
            if fits and not any(_overlaps(c, number, sentence) for c in chosen):
                per_fragment[number] = per_fragment.get(number, 0) + 1
                chosen.append(Claim(sentence, number, sentence))

        take(*scored[0])
        # Each part of a compound question ("what does it cost, and how heavy is it?") gets its best quote.
        for ranking in rankings[1:]:
            fresh = [r for r in ranking if not any(_overlaps(c, r[1], r[2]) for c in chosen)]
            if fresh and fresh[0][0] >= self.policy.found_threshold - self.policy.part_margin:
                take(*fresh[0])
        best = scored[0][0]
        for value, number, sentence in scored[1:]:
            if value < max(self.policy.found_threshold, best - self.policy.near_best):
                break
            take(value, number, sentence)
        return self._found(question, chosen, hits, language)

    def _found(self, question: str, chosen: list[Claim], hits: Sequence[Hit], language: str | None) -> Draft:
        """The chosen quotes with the calculation a priced question asks for, if one is sure."""
        # A calculation's inputs come from items and rows, not from a whole list: "Zone B, 15 to 50 km: 85 EUR."
        # is what the 85 EUR is quoted from, not the list of every zone.
        narrowed = _items_of_lists(chosen, hits)

        def rank(questions: list[str]) -> list[list[Scored]]:
            return [[c for c in r if not _is_whole(hits, c[1], c[2])] for r in self._score(questions, hits, language)]

        extra, proposals = propose(question, hits, narrowed, rank)
        claims = [*chosen, *extra]
        if proposals:
            # A computed answer shows the quotes its figures come from, not the neighbours that scored near them.
            inputs = [source for p in proposals for _, source in p.inputs if isinstance(source, FigureInput)]
            candidates = [*narrowed, *extra]
            # In the order the calculation uses them, as its formula reads.
            used = sorted(
                (c for c in candidates if any(i.fragment == c.fragment and i.figure in c.quote for i in inputs)),
                key=lambda c: next(k for k, i in enumerate(inputs) if i.fragment == c.fragment and i.figure in c.quote),
            )
            claims = used or claims
        return Draft(found=True, claims=tuple(claims), calculations=tuple(proposals))

    def _answer_moved(self, readings: list[str], hits: Sequence[Hit], naming: set[str], language: str | None) -> Draft:
        """A follow-up moved to a new topic ("…hinges? and what about the finish?"): only a sentence whose text
        or headings name the topic may answer, the judge decides among them, and what it accepts is quoted,
        best first. Each reading of it (the question before with the topic joined, or put in place of what it was
        about) is judged, and a candidate counts with its best rating."""
        each = [
            self._judged(
                reading,
                _fitting(stated_quantities(reading), self._score([reading], hits, language)[0]),
                hits,
                language,
                naming,
            )
            for reading in readings
        ]
        judged = each[0] if len(each) == 1 else _best_ratings(each)
        question = readings[0]
        if not judged:
            return Draft(found=False)
        best = max(p for p, _, _ in judged)
        accepted = [j for j in judged if j[0] >= max(self.policy.judge_threshold, best * self.policy.also_accepted)]
        if not accepted:
            return Draft(found=False)
        chosen: list[Claim] = []
        for _, number, sentence in accepted:
            if (
                len(chosen) < self.policy.max_statements
                and sum(c.fragment == number for c in chosen) < self.policy.per_fragment
            ):
                chosen.append(Claim(sentence, number, sentence))
        return self._found(question, chosen, hits, language)


def _best_ratings(judgements: Sequence[list[Scored]]) -> list[Scored]:
    """Each candidate once, at the best probability any judgement gave it, best first."""
    rated: dict[tuple[int, str], float] = {}
    for judged in judgements:
        for p, number, bare in judged:
            rated[(number, bare)] = max(p, rated.get((number, bare), 0.0))
    return sorted(((p, number, bare) for (number, bare), p in rated.items()), key=lambda j: -j[0])


def judged_text(hits: Sequence[Hit], number: int, bare: str) -> str:
    """What the judge reads for candidate `bare` of hit `number`: where it stands, then its block with its lead-in."""
    fragment = hits[number - 1].fragment
    return candidate_text(fragment.title, fragment.section, read_of(fragment, bare))


def _whole(hits: Sequence[Hit], number: int, quote: str) -> Block | None:
    """The whole list or procedure `quote` is, in hit `number`'s fragment; None for any other block."""
    text = hits[number - 1].fragment.text
    return next((b for b in fragment_blocks(text) if b.text == quote and b.kind in ("list", "steps")), None)


def _is_whole(hits: Sequence[Hit], number: int, quote: str) -> bool:
    return _whole(hits, number, quote) is not None


def _items_of_lists(chosen: Sequence[Claim], hits: Sequence[Hit]) -> list[Claim]:
    """The chosen claims with each whole list or procedure replaced by its items (or steps)."""
    out: list[Claim] = []
    for claim in chosen:
        if _whole(hits, claim.fragment, claim.quote) is None:
            out.append(claim)
            continue
        parts = [
            b.text
            for b in fragment_blocks(hits[claim.fragment - 1].fragment.text)
            if b.kind in ("item", "step") and b.text in claim.quote
        ]
        out.extend(Claim(part, claim.fragment, part) for part in dict.fromkeys(parts))
    return out


def _rows_holding(draft: Draft, quantities: Sequence[Reading], hits: Sequence[Hit], most: int) -> tuple[Draft, bool]:
    """The draft with a whole list indexed by the asked unit ("Zone A, up to 15 km: …", "Zone B, 15 to 50 km: …")
    quoted by the item whose range holds the stated quantity (30 km asks for Zone B, not for every zone), and
    whether a quoted row's range holds it."""
    if not draft.found or not quantities:
        return draft, False
    claims: list[Claim] = []
    for claim in draft.claims:
        rows = [c for c in _items_of_lists([claim], hits) if row_holds(quantities, c.quote)]
        if _is_whole(hits, claim.fragment, claim.quote) and rows:
            claims.extend(r for r in rows if not any(_overlaps(c, r.fragment, r.quote) for c in claims))
        elif not any(_overlaps(c, claim.fragment, claim.quote) for c in claims):
            claims.append(claim)
    kept = tuple(claims[:most])
    return Draft(True, kept, draft.model_calls, draft.calculations), any(row_holds(quantities, c.quote) for c in kept)


def _fitting(quantities: Sequence[Reading], ranking: list[Scored]) -> list[Scored]:
    """The candidates whose figures don't say another case: "up to 15 km" doesn't answer for 40 km."""
    return [c for c in ranking if fits_figures(quantities, c[2]) is not False]


def _overlaps(claim: Claim, number: int, quote: str) -> bool:
    """True when `quote` repeats a chosen quote of the same fragment: the same, or one holding the other (an item
    and its whole list, a sentence and the pair it leans on)."""
    return claim.fragment == number and (quote in claim.quote or claim.quote in quote)
