"""Index and search figures: build time, unchanged re-index, embedding and search latency, RSS.

Run: python benchmarks/index_search.py [SIZES...] [--knowledge DIR]   (default: 10000 100000, the demo)
SIZES are the synthetic corpora searched after the demo's; `--knowledge` indexes another folder than the demo's.
Prints figures; asserts nothing (shared machines are noisy: compare ratios within one run).
"""

from __future__ import annotations

import argparse
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.answering.policy import DEFAULT
from core.common.questions import SCOPES
from core.common.settings import Settings
from core.retrieval.knowledge import KnowledgeBase
from core.retrieval.search import Searcher
from core.store.corpus import Corpus
from core.vectors.embeddings import LocalEmbedder, normalise

KB = Path(__file__).resolve().parent.parent / "knowledge"
QUESTIONS = [
    "how much is an oak kitchen front",
    "what does delivery cost 40 km away",
    "how long is the warranty on hinges",
    "how heavy is a 3 m oak worktop",
    "when is the balance due",
    "do you make windows",
]


def percentiles(samples: list[float]) -> str:
    q = np.percentile(samples, [50, 95])
    return f"p50 {q[0]:.2f} ms, p95 {q[1]:.2f} ms"


def synthetic_corpus(n: int, dim: int, rng: np.random.Generator) -> Corpus:
    from core.common.values import Fragment

    fragment = Fragment("synthetic.md", "Synthetic", "public", (), 1, 1, "text")
    return Corpus(
        ids=np.arange(n, dtype=np.int64),
        fragments=(fragment,) * n,
        matrix=normalise(rng.standard_normal(size=(n, dim), dtype=np.float32)),
        audiences=np.array(["public" if i % 4 else "internal" for i in range(n)], dtype=object),
        documents=rng.integers(0, max(n // 6, 1), n),
    )


def time_search(
    searcher: Searcher, queries: np.ndarray, scope: frozenset[str], floor: float, rounds: int
) -> list[float]:
    searcher.search(queries[0], scope, floor)  # builds the scope's view once, as a server would
    samples = []
    for i in range(rounds):
        started = time.perf_counter()
        searcher.search(queries[i % len(queries)], scope, floor)
        samples.append((time.perf_counter() - started) * 1000)
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sizes", nargs="*", type=int, default=[10_000, 100_000])
    parser.add_argument("--knowledge", type=Path, default=KB)
    args = parser.parse_args()
    embedder = LocalEmbedder()
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(knowledge_dir=args.knowledge, data_dir=Path(tmp))
        started = time.perf_counter()
        kb = KnowledgeBase(settings, embedder)
        report = kb.sync()
        build = time.perf_counter() - started
        print(
            f"index build ({'demo KB' if args.knowledge == KB else args.knowledge}, model load included): "
            f"{build:.2f} s, {report.fragments} fragments, "
            f"{report.fragments / build:.0f} fragments/s"
        )
        kb.close()
        started = time.perf_counter()
        kb = KnowledgeBase(settings, embedder)
        again = kb.sync()
        print(
            f"unchanged re-index (fresh open): {time.perf_counter() - started:.3f} s "
            f"({again.unchanged} unchanged, {again.added} added)"
        )

        embed_ms = []
        for i in range(60):
            started = time.perf_counter()
            embedder.embed([QUESTIONS[i % len(QUESTIONS)]])
            embed_ms.append((time.perf_counter() - started) * 1000)
        print(f"question embedding: {percentiles(embed_ms)}")

        queries = embedder.embed(QUESTIONS)
        demo = time_search(kb.searcher, queries, SCOPES["public"], DEFAULT.min_similarity, 500)
        print(f"search at {len(kb.searcher.corpus.fragments)} fragments (public scope): {percentiles(demo)}")
        model_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"peak RSS with the model loaded and the demo KB indexed: {model_rss:.0f} MB")

    rng = np.random.default_rng(7)
    for n in args.sizes:
        searcher = Searcher(synthetic_corpus(n, 384, rng))
        q = normalise(rng.normal(size=(20, 384)).astype(np.float32))
        # Floor 0.0 on random vectors leaves half the rows eligible: the worst case for selection.
        staff = time_search(searcher, q, SCOPES["internal"], 0.0, 200)
        public = time_search(searcher, q, SCOPES["public"], 0.0, 200)
        floored = time_search(searcher, q, SCOPES["internal"], DEFAULT.min_similarity, 200)
        matrix = searcher.corpus.matrix
        bare = []
        for i in range(200):
            started = time.perf_counter()
            matrix @ q[i % 20]
            bare.append((time.perf_counter() - started) * 1000)
        print(
            f"search at {n:,} fragments, floor 0.0: staff scope {percentiles(staff)}; public scope "
            f"{percentiles(public)}; at the default floor, staff scope {percentiles(floored)}; "
            f"bare matrix-vector product p50 {statistics.median(bare):.2f} ms"
        )

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    largest = max(args.sizes, default=0)
    print(f"peak RSS after the synthetic runs (model and a {largest:,} x 384 matrix held): {peak:.0f} MB")


if __name__ == "__main__":
    main()
