"""The answerability judge: does this sentence, under its document and section, answer this question?

A multilingual-e5-small cross-encoder fine-tuned for exactly that judgement on invented companies' documents and
chat questions in English, German, French and Spanish (`scripts/train_judge.py`, model card in
`core/data/judge/MODEL_CARD.md`), shipped inside the package as int8 ONNX and run with onnxruntime on the CPU: no
key, no network. It reads `<s> question </s></s> title › section: block </s>` and gives a probability.
Unlike a similarity, that probability means the same on every knowledge base,
so one threshold serves them all.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import os
import threading
from collections import OrderedDict
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from core.answering.policy import LIMITS
from core.common.errors import JudgeError
from core.common.text import SECTION_SEPARATOR
from core.vectors.embeddings import cpu_session

MODEL_DIR = Path(__file__).parents[1] / "data" / "judge"
MODEL_FILE = MODEL_DIR / "judge.onnx"
TOKENIZER_FILE = MODEL_DIR / "tokenizer.json"

log = logging.getLogger(__name__)


def candidate_text(title: str, section: Sequence[str], sentence: str) -> str:
    """What the judge reads for a candidate sentence (as in training): where it stands, then the sentence."""
    where = SECTION_SEPARATOR.join(p for p in (title, *section) if p)
    return f"{where}: {sentence}" if where else sentence


class Judge:
    """The shipped judge, loaded on first use; safe to share between threads."""

    def __init__(
        self,
        model_path: Path = MODEL_FILE,
        threads: int = 1,
        max_tokens: int = LIMITS.judge_tokens,
        tokenizer_path: Path | None = None,
    ) -> None:
        self._model_path = model_path
        self._threads = threads
        self._max_tokens = max_tokens
        self._tokenizer_path = tokenizer_path or model_path.parent / "tokenizer.json"
        self._lock = threading.Lock()
        self._session: object | None = None
        self._tokenizer: object | None = None
        self._pool: ThreadPoolExecutor | None = None
        self._cache: OrderedDict[tuple[str, str], float] = OrderedDict()
        self._preloading = False

    @functools.cached_property
    def id(self) -> str:
        digest = hashlib.sha256(self._model_path.read_bytes()).hexdigest() if self._model_path.exists() else "missing"
        form = "fragment" if self._max_tokens != LIMITS.judge_tokens else "sentence"
        return f"judge:{form}:{digest[:12]}"

    def _load(self) -> tuple[object, object]:
        with self._lock:
            if self._session is None:
                from tokenizers import Tokenizer

                if not self._model_path.exists():
                    raise JudgeError(f"The answerability judge {self._model_path} is missing.")
                # The session first: it builds without the GIL, so a preload leaves the thread that embeds the first
                # question free; the tokenizer's load holds the GIL, and is left for the embedder's own build.
                # Pairs side by side, each on one core: a pair alone is too small a product to split between two
                # (12 pairs: 116 ms on two workers of one thread, 173 ms one after another on two threads).
                session = cpu_session(self._model_path, 1, arena=False)
                tokenizer = Tokenizer.from_file(str(self._tokenizer_path))
                # A long question is cut too: "only_second" raises when the question alone fills the window.
                tokenizer.enable_truncation(self._max_tokens, strategy="longest_first")
                self._tokenizer, self._session = tokenizer, session
                if self._threads > 1:
                    self._pool = ThreadPoolExecutor(self._threads, thread_name_prefix="judge")
            return self._session, self._tokenizer

    def preload(self) -> None:
        """Start loading the model on a thread of its own, once: a process asked one question loads it while the
        question is embedded and searched (on the other core, where there is one), not after."""
        with self._lock:
            if self._session is not None or self._preloading:
                return
            self._preloading = True
        # Not a daemon: an interpreter that exits while onnxruntime builds the session aborts; exit waits for it.
        threading.Thread(target=self._preload, name="judge-load").start()

    def _preload(self) -> None:
        try:
            self._load()
        except Exception as exc:  # the first question's own load raises it again, with its sentence
            log.debug("the judge could not be preloaded: %s", exc)

    def score(self, question: str, candidates: Sequence[str]) -> np.ndarray:
        """The probability that each candidate answers the question, in the candidates' order.

        Pairs judged before come from a bounded cache: a calibration sweep asks the same pairs for every
        threshold, and a thread's follow-ups bring the same sentences back."""
        out = np.empty(len(candidates), dtype=np.float32)
        missing = []
        with self._lock:
            for i, candidate in enumerate(candidates):
                known = self._cache.get((question, candidate))
                if known is None:
                    missing.append(i)
                else:
                    out[i] = known
        if missing:
            # Each text read once: overlapping fragments can hand the same sentence under the same heading twice.
            texts = list(dict.fromkeys(candidates[i] for i in missing))
            fresh = dict(zip(texts, self._run(question, texts), strict=True))
            with self._lock:
                for i in missing:
                    out[i] = fresh[candidates[i]]
                for text, probability in fresh.items():
                    self._cache[(question, text)] = float(probability)
                while len(self._cache) > LIMITS.judge_cache_pairs:
                    self._cache.popitem(last=False)
        return out

    def _run(self, question: str, candidates: Sequence[str]) -> np.ndarray:
        try:
            return self._infer(question, candidates)
        except JudgeError:
            raise
        except Exception as exc:  # the tokenizer or the runtime: one sentence, never a traceback to the asker
            raise JudgeError(f"The answerability judge failed ({type(exc).__name__}: {exc}).") from exc

    def _infer(self, question: str, candidates: Sequence[str]) -> np.ndarray:
        """Each pair in a model call of its own, unpadded. The int8 model quantises each call's activations with
        one scale for the whole batch, so a pair batched with others got another probability than alone: by 0.019
        on average and up to 0.42, enough to cross the threshold (MODEL_CARD.md, "Latency"). Alone, a pair's
        probability is the same whatever it is asked with, and it is what validation measured."""
        session, tokenizer = self._load()
        encodings = tokenizer.encode_batch([(question, c) for c in candidates])  # type: ignore[attr-defined]
        takes = {i.name for i in session.get_inputs()}  # type: ignore[attr-defined]  # e5 reads no token types

        def logit(encoding: object) -> float:
            ids = encoding.ids  # type: ignore[attr-defined]
            feed = {
                "input_ids": np.array([ids], dtype=np.int64),
                "attention_mask": np.ones((1, len(ids)), dtype=np.int64),
                "token_type_ids": np.array([encoding.type_ids], dtype=np.int64),  # type: ignore[attr-defined]
            }
            feed = {name: value for name, value in feed.items() if name in takes}
            return float(session.run(None, feed)[0][0, 0])  # type: ignore[attr-defined]

        pool = self._pool if len(encodings) > 1 else None
        logits = np.array(list((pool.map if pool else map)(logit, encodings)), dtype=np.float32)
        return 1.0 / (1.0 + np.exp(-logits))


@functools.cache
def shared() -> Judge:
    """One judge per process: every pipeline and answerer shares its session, judging up to `LIMITS.judge_threads`
    pairs at once."""
    return Judge(threads=max(1, min(LIMITS.judge_threads, os.cpu_count() or 1)))
