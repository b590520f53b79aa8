"""Grouping similar questions: average-linkage agglomerative clustering on cosine similarity, in numpy."""

from __future__ import annotations

import numpy as np

# Two refused questions belong together when, on average, they are at least this similar. Measured on
# all-MiniLM-L6-v2 over the questions' topic words (see core.measuring.gaps.topic): wordings of one topic
# ("Do you offer instalment plans?", "can I pay in instalments?"; three ways to ask about PayPal or
# gift wrapping) stay above it, different shop topics (PayPal and instalments, PayPal and gift
# wrapping) below. A higher cut splits one topic's wordings; a lower one joins neighbouring topics.
SIMILARITY = 0.45
# The cut for multilingual-e5-small, whose cosines sit higher and closer together. Matching MiniLM's share of
# unrelated pairs over the cut (0.45 leaves 1.04 % of the 26,565 pairs of the demo's and the policies' gold
# questions above it) gives 0.869 on those English questions; on the German and French calibration splits'
# questions, pairs about different sections are above 0.87 in 5.0 % and 29.1 % of cases, above 0.89 in 1.4 %
# and 11.2 %. 0.89: neighbouring topics ("in Raten zahlen", "mit PayPal bezahlen") stay apart.
MULTILINGUAL_SIMILARITY = 0.89


def same_topic(embedder: str) -> float:
    """The similarity cut for the embedder that settings name ("local", "multilingual", "remote")."""
    return MULTILINGUAL_SIMILARITY if embedder == "multilingual" else SIMILARITY


def cluster(vectors: np.ndarray, threshold: float = SIMILARITY, weights: np.ndarray | None = None) -> list[list[int]]:
    """Row numbers grouped so that every group's average pairwise similarity is at least `threshold`.

    `vectors` are unit rows; `weights` counts how many times each row was asked (default 1 each),
    so a question asked five times pulls its group's average five times as hard. Groups come
    heaviest first, each with its rows in order.

    Average linkage rather than single: one borderline question must not chain two topics
    together. The pair-average table is updated with the Lance–Williams formula, so each merge
    costs one O(n) row update plus an O(n²) argmax, not a recomputation from the members.
    """
    n = len(vectors)
    if n == 0:
        return []
    size = np.ones(n) if weights is None else np.asarray(weights, dtype=np.float64).copy()
    sim = np.asarray(vectors, dtype=np.float64) @ np.asarray(vectors, dtype=np.float64).T
    np.fill_diagonal(sim, -np.inf)
    members: list[list[int]] = [[i] for i in range(n)]
    while n > 1:
        i, j = divmod(int(np.argmax(sim)), n)
        if sim[i, j] < threshold:
            break
        merged = (size[i] * sim[i] + size[j] * sim[j]) / (size[i] + size[j])
        sim[i, :] = merged
        sim[:, i] = merged
        sim[i, i] = -np.inf
        sim[j, :] = -np.inf  # j is absorbed into i
        sim[:, j] = -np.inf
        size[i] += size[j]
        members[i] += members[j]
        members[j] = []
    groups = [sorted(m) for m in members if m]
    weight = np.ones(len(vectors)) if weights is None else np.asarray(weights, dtype=np.float64)
    groups.sort(key=lambda g: (-float(weight[g].sum()), g[0]))
    return groups


def medoid(vectors: np.ndarray, rows: list[int], weights: np.ndarray | None = None) -> int:
    """The row of `rows` most similar to the others (weighted): the group's most typical member."""
    if len(rows) == 1:
        return rows[0]
    block = np.asarray(vectors[rows], dtype=np.float64)
    w = np.ones(len(rows)) if weights is None else np.asarray(weights, dtype=np.float64)[rows]
    # A row's own weight counts too: the question asked most often is the most typical among equals.
    scores = (block @ block.T) @ w
    return rows[int(np.argmax(scores))]
