"""How a big Markdown document indexes: fragments, embedding rate, peak memory.

    .venv/bin/python benchmarks/big_document.py --mb 5 --real 768

Generates one document of `--mb` megabytes, then syncs it into a fresh index with the real
local embedder for the first `--real` fragments and a cheap stand-in for the rest (so the
whole pipeline runs, reading, fragmenting, staging in batches, swapping in, in bounded CPU),
and prints the real embedder's rate, the extrapolated time for the whole document and the
peak RSS. Used to pick VERBATIM_MAX_DOCUMENT_MB's default (see README).
"""

from __future__ import annotations

import argparse
import random
import resource
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from core.ingest import FragmentProgress, sync
from core.store import INDEX_FILE
from core.store.sqlite import SQLiteIndex
from core.vectors.embeddings import LocalEmbedder

_WORDS = "oak walnut front worktop delivery warranty joinery cabinet hinge drawer price customer order fitting "
_WORDS += "measure panel edge finish colour oil lacquer floor carry install return refund week month day"
WORDS = _WORDS.split(" ")


def document(megabytes: float, seed: int = 7) -> str:
    rng = random.Random(seed)
    parts = ["---\ntitle: Big catalogue\naudience: public\n---\n"]
    size, section = 0, 0
    while size < megabytes * 1_000_000:
        section += 1
        parts.append(f"\n## Section {section}\n")
        for _ in range(rng.randint(2, 6)):
            sentences = []
            for _ in range(rng.randint(2, 8)):
                words = rng.choices(WORDS, k=rng.randint(8, 20))
                sentences.append(" ".join(words).capitalize() + f" costs {rng.randint(1, 9999)} EUR.")
            parts.append("\n" + " ".join(sentences) + "\n")
        size = sum(len(p) for p in parts)
    return "".join(parts)


class Bounded:
    """The real model for the first `real` texts, then a cheap deterministic vector."""

    def __init__(self, real: int) -> None:
        self.model = LocalEmbedder()
        self.left = real
        self.real_texts = 0
        self.real_seconds = 0.0

    @property
    def id(self) -> str:
        return self.model.id

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        take = min(self.left, len(texts))
        out = []
        if take:
            started = time.perf_counter()
            out.append(self.model.embed(texts[:take]))
            self.real_seconds += time.perf_counter() - started
            self.real_texts += take
            self.left -= take
        if take < len(texts):
            dim = out[0].shape[1] if out else 384
            cheap = np.zeros((len(texts) - take, dim), dtype=np.float32)
            cheap[:, 0] = 1.0
            out.append(cheap)
        return np.vstack(out)


class Show:
    def __call__(self, done: int, total: int, name: str) -> None:
        pass

    def fragments(self, event: FragmentProgress) -> None:
        if event.done % 2048 < 256:
            eta = f"{event.eta:.0f}" if event.eta is not None else "?"
            print(f"  {event.done}/{event.total} fragments, {event.rate:.0f}/s, eta {eta} s", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=float, default=5.0)
    parser.add_argument("--real", type=int, default=768)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        kb = Path(tmp) / "kb"
        kb.mkdir()
        (kb / "big.md").write_text(document(args.mb), encoding="utf-8")
        embedder = Bounded(args.real)
        embedder.model.embed(["warm up"])  # load the model before measuring
        rss_model = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        started = time.perf_counter()
        report = sync(kb, SQLiteIndex(Path(tmp) / INDEX_FILE), embedder, Show(), max_document_bytes=10**9)
        seconds = time.perf_counter() - started
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        size = (kb / "big.md").stat().st_size / 1e6
        print(f"document {size:.1f} MB, {report.fragments} fragments (mean {report.mean_chars:.0f} chars)")
        print(f"sync {seconds:.1f} s with {embedder.real_texts} real embeddings")
        if embedder.real_texts:
            rate = embedder.real_texts / embedder.real_seconds
            print(f"real rate {rate:.1f} fragments/s; the whole document: {report.fragments / rate / 60:.1f} min")
        print(f"peak RSS {rss:.0f} MB (model loaded: {rss_model:.0f} MB)")


if __name__ == "__main__":
    main()
