"""Every threshold and count that shapes an answer, in one place.

`AnswerPolicy` holds the decisions: how similar a hit must be, when the judge refuses, what is quoted and in
which order. `Limits` holds the bounds that keep a hostile document or model reply from costing more than an
answer is worth. Each value has one line of meaning here; what it gained or cost when it was chosen is measured
in core/data/judge/MODEL_CARD.md (the section named beside it) or docs/quality.md, not in comments that go
stale with the next change. `tests/test_layout.py` holds that no other module of `core/answering/` defines a
number of its own.

The embedder decides the scale of similarity: the multilingual one's cosines sit higher and closer together
than MiniLM's, so its floors are its own (`MULTILINGUAL`), and a remote embedder has no measured second-look
floor (`REMOTE`). Settings override what their variables set (`policy_for`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from core.common.settings import Settings


@dataclass(frozen=True)
class AnswerPolicy:
    """The thresholds and counts of one operating point; `policy_for` gives the one a knowledge base answers with."""

    # Retrieval and the found flag (docs/quality.md, "Re-deriving the floor"; README, "The multilingual embedder").
    min_similarity: float = 0.40  # a fragment less similar to the question than this is no hit
    found_threshold: float = 0.50  # the best sentence's score (similarity + lexical) that says "found"

    # The judge (MODEL_CARD.md, "The operating point").
    judge_threshold: float = 0.6  # none of the judged candidates this probable: the answer is refused
    judged: int = 4  # how many of similarity's best candidates the judge reads
    sure: float = 0.85  # a candidate the judge rates this high is quoted too ("The judge's sure pick")
    first_margin: float = 0.1  # a quote rated this much above similarity's first goes first
    also_accepted: float = 0.9  # a moved follow-up also quotes what the judge rates this share of its best
    heading_weight: float = 0.05  # weight of the asked terms a candidate's own heading names, breaking near ties

    # The second look at hits below the floor, for a refused question ("The second look (shipped)").
    second_look_floor: float = 0.25  # how far down it retrieves; at or above min_similarity it is off
    second_look_threshold: float = 0.8  # what the judge must reach there

    # The judge as the LLM answerer's second opinion (VERBATIM_LLM_JUDGE): it drops a claim rated under this.
    second_opinion_threshold: float = 0.25

    # What similarity quotes (docs/how-it-works.md, "Answers: three barriers against invention").
    max_statements: int = 4  # quotes in one answer
    per_fragment: int = 2  # quotes from one fragment
    near_best: float = 0.08  # a sentence this close to the best one is quoted too (compound questions)
    part_margin: float = 0.08  # a part of a compound question may quote this far below the found-threshold
    lexical_weight: float = 0.35  # weight of the share of the question's key terms a sentence holds

    # Calculations (docs/how-it-works.md, "Calculations"; read from DEFAULT).
    priced_candidates: int = 4  # how far down a part's ranking a priced sentence may be found
    candidate_margin: float = 0.15  # ... and how far below that part's best score

    # Reading the question (module functions read these from DEFAULT: no embedder or setting changes them).
    own_topic_words: int = 2  # a follow-up naming more topic words of its own stands alone, even with an "it"
    swap_words: int = 4  # a follow-up of at most this many naming words swaps the item ("and the beech one?")
    max_key_words: int = 5  # a list item's or row's name, which a question must name, has at most this many words
    # How close (cosine) a question's word must be to a table's keys to be taken for a key of that kind, asking for
    # a row the table lacks ("Which laptop does a salesperson get?"); None: not asked. Measured for MiniLM alone
    # (its words of one kind score 0.40-0.75, others 0.12-0.27); e5's cosines sit higher for every pair of words.
    row_key_kind: float | None = 0.35
    count_stem: int = 5  # letters of a counted thing's word compared ("5 guests" and "guest" are one measure)


DEFAULT = AnswerPolicy()
# The multilingual embedder's cosine scale: floor and found-threshold calibrated on the English gold sets and
# brought down once the judge read German, French and Spanish; its second-look floor chosen on its validation
# businesses (MODEL_CARD.md, "The operating point"). Its judge thresholds are the stricter pair that scored as well
# on the German, French and Spanish validation businesses once each pair was judged alone (MODEL_CARD.md,
# "Latency"): those questions come with the near misses the judge rates 0.6-0.85.
MULTILINGUAL = replace(
    DEFAULT,
    min_similarity=0.86,
    found_threshold=0.90,
    second_look_floor=0.80,
    row_key_kind=None,
    judge_threshold=0.7,
    second_look_threshold=0.85,
)
# A remote embedder's cosines were never measured for a second look: a floor no hit is found below turns it off.
REMOTE = replace(DEFAULT, second_look_floor=1.0, row_key_kind=None)
BY_EMBEDDER = {"local": DEFAULT, "multilingual": MULTILINGUAL, "remote": REMOTE}

# The policy's fields a setting may override (VERBATIM_MIN_SIMILARITY, …); None in the settings: the default.
OVERRIDES = ("min_similarity", "found_threshold", "judge_threshold", "second_look_floor", "second_look_threshold")


def policy_for(settings: Settings) -> AnswerPolicy:
    """The policy for the settings' embedder, with what the settings set instead of its defaults.

    VERBATIM_JUDGE_THRESHOLD, when set, is also the LLM answerer's second-opinion threshold."""
    policy = BY_EMBEDDER.get(settings.embedder, DEFAULT)
    chosen = {name: value for name in OVERRIDES if (value := getattr(settings, name)) is not None}
    if settings.judge_threshold is not None:
        chosen["second_opinion_threshold"] = settings.judge_threshold
    return replace(policy, **chosen)


def second_look_on(policy: AnswerPolicy) -> bool:
    """Whether the second look retrieves anything the first did not."""
    return policy.second_look_floor < policy.min_similarity


@dataclass(frozen=True)
class Limits:
    """Bounds on what one answer may cost or hold, whoever wrote its input."""

    min_quote: int = 8  # characters: a shorter quote proves nothing
    max_quote: int = 1200  # characters: a longer one is a document, not a quote
    max_calculations: int = 5  # per answer; the rest are ignored
    max_inputs: int = 8  # figures one calculation may use
    max_assumptions: int = 8  # quantities from the question one calculation may use
    max_expression: int = 300  # characters of a calculation's expression
    max_nodes: int = 64  # parts of its syntax tree
    max_depth: int = 12  # nesting of its syntax tree
    max_magnitude: int = 10**12  # a figure or result beyond this is a runaway expression: no price list holds more
    max_claims: int = 20  # statements read from one model reply
    max_reply_bytes: int = 1_000_000  # a model reply longer than this is refused unread
    # The judge's engine (core/answering/judge.py; MODEL_CARD.md, "Latency").
    judge_tokens: int = 128  # a question and one candidate, as it was trained
    judge_fragment_tokens: int = 256  # the fragment-level form (measured, not shipped): a question and a fragment
    judge_cache_pairs: int = 20_000  # rated pairs remembered (~3 MB)
    judge_threads: int = 2  # pairs judged at once, each on one core


LIMITS = Limits()
