"""The questions the documents don't answer: refusals grouped by topic, each with the closest fragment
the index held, for the gap report and the admins' weekly digest.
"""

from __future__ import annotations

import logging
import re
import time
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from core.common.text import STOPWORDS
from core.common.values import Fragment
from core.retrieval.knowledge import KnowledgeBase
from core.store import Logged
from core.store.corpus import Corpus
from core.vectors.clusters import SIMILARITY, cluster, medoid, same_topic
from core.vectors.embeddings import Embedder, embed_queries

log = logging.getLogger(__name__)


DAY = 86_400.0


# Refusals that say something about the documents; errors and questions in other languages do not.
GAP_REASONS = ("no_match", "not_found", "unverified")


# Clustering costs O(n²) memory and up to O(n³) time: the most recent distinct questions suffice.
MAX_GAP_QUESTIONS = 2000


EXAMPLES = 5


def iso(epoch: float) -> str:
    """The run log's timestamp format."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch))


@dataclass(frozen=True)
class Closest:
    """The section a group of refused questions came nearest to, and how near (cosine similarity)."""

    heading: str  # Document › Section
    document: str
    score: float


@dataclass(frozen=True)
class Gap:
    """Refused questions that ask the same thing: one line for document owners."""

    question: str  # the most typical question of the group (its medoid)
    count: int  # how many times the group's questions were asked
    examples: tuple[str, ...]  # distinct wordings, most asked first
    surfaces: tuple[str, ...]
    reasons: dict[str, int]
    closest: Closest | None
    first_asked: str
    last_asked: str


def _key(question: str) -> str:
    """Questions that differ only in case, spacing or final punctuation are one question."""
    return " ".join(question.casefold().split()).rstrip("?!. ")


_WORD = re.compile(r"[\w'’-]+")


def topic(question: str) -> str:
    """The question's content words, in order: what it asks about, without how it asks.

    MiniLM weighs the scaffolding of a question ("can I …", "do you …") as much as its topic, so
    "can I pay with PayPal" came out closer to "can I pay in monthly installments" than to "is
    PayPal accepted?". Dropping the stop words first lets the topic decide.
    """
    words = [w for w in _WORD.findall(question) if w.lower() not in STOPWORDS]
    return " ".join(words) or question


def find_gaps(
    entries: Sequence[Logged],
    embedder: Embedder,
    corpus: Corpus,
    similarity: float = SIMILARITY,
    limit: int | None = None,
) -> list[Gap]:
    """The refused questions among `entries`, grouped by meaning, biggest group first."""
    refused = [e for e in entries if e.kind == "refused" and e.reason in GAP_REASONS]
    by_key: dict[str, list[Logged]] = defaultdict(list)
    for entry in refused:
        by_key[_key(entry.standalone_question)].append(entry)
    keys = sorted(by_key, key=lambda k: by_key[k][-1].at, reverse=True)[:MAX_GAP_QUESTIONS]
    if not keys:
        return []
    texts = [by_key[k][0].standalone_question for k in keys]
    vectors = embed_queries(embedder, [topic(t) for t in texts])
    weights = np.array([len(by_key[k]) for k in keys], dtype=np.float64)
    fragments = corpus.by_ids(i for e in refused for i, _ in e.fragments)
    gaps = []
    for rows in cluster(vectors, similarity, weights)[:limit]:
        asked = [e for r in rows for e in by_key[keys[r]]]
        centre = medoid(vectors, rows, weights)
        ordered = sorted(rows, key=lambda r: (-weights[r], r))
        gaps.append(
            Gap(
                question=texts[centre],
                count=len(asked),
                examples=tuple(texts[r] for r in ordered[:EXAMPLES]),
                surfaces=tuple(sorted({e.surface for e in asked})),
                reasons=dict(Counter(e.reason or "" for e in asked).most_common()),
                closest=_closest(asked, fragments, corpus, vectors[centre]),
                first_asked=min(e.at for e in asked),
                last_asked=max(e.at for e in asked),
            )
        )
    return gaps


def _closest(
    asked: Sequence[Logged], fragments: dict[int, Fragment], corpus: Corpus, centre: np.ndarray
) -> Closest | None:
    """The best-scoring fragment the questions retrieved, if it is still indexed; else the nearest one now.

    A question refused at the floor retrieved nothing, and a re-index gives fragments new ids:
    then the group's most typical question is compared with every indexed fragment instead.
    """
    best: tuple[float, Fragment] | None = None
    for entry in asked:
        for fragment_id, score in entry.fragments:
            found = fragments.get(fragment_id)
            if found is not None and (best is None or score > best[0]):
                best = (score, found)
    # Vectors of another model (the index not yet rebuilt for it) can't be compared: then nothing is named.
    if best is None and len(corpus.ids) and corpus.matrix.shape[1] == len(centre):
        scores = corpus.matrix @ np.asarray(centre, dtype=np.float32)
        row = int(np.argmax(scores))
        nearest = corpus.fragments_at([row])[0]  # None: re-indexed this very moment; then nothing is named
        best = (float(scores[row]), nearest) if nearest is not None else None
    if best is None:
        return None
    return Closest(best[1].heading, best[1].document, round(best[0], 3))


def recent_gaps(knowledge: KnowledgeBase, days: float = 7.0, now: float | None = None, limit: int = 5) -> list[Gap]:
    """The biggest groups of refused questions of the last `days` days: `/verbatim gaps` and the digest."""
    until = time.time() if now is None else now
    entries = [e for e in knowledge.store.runlog.since(iso(until - days * DAY)) if e.at <= iso(until)]
    similarity = same_topic(knowledge.settings.embedder)
    return find_gaps(entries, knowledge.embedder, knowledge.store.index.load(), similarity, limit=limit)
