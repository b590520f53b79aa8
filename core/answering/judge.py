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
                tokenizer = Tokenizer.from_file(str(self._tokenizer_path))
                # A long question is cut too: "only_second" raises when the question alone fills the window.
                tokenizer.enable_truncation(self._max_tokens, strategy="longest_first")
                tokenizer.enable_padding(**padding_of(tokenizer))
                self._tokenizer = tokenizer
                self._session = cpu_session(self._model_path, self._threads, arena=False)
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
            fresh = self._run(question, [candidates[i] for i in missing])
            with self._lock:
                for i, probability in zip(missing, fresh, strict=True):
                    out[i] = probability
                    self._cache[(question, candidates[i])] = float(probability)
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
        session, tokenizer = self._load()
        encodings = tokenizer.encode_batch([(question, c) for c in candidates])  # type: ignore[attr-defined]
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        types = np.array([e.type_ids for e in encodings], dtype=np.int64)
        lengths = mask.sum(axis=1)
        order = np.argsort(lengths, kind="stable")
        takes = {i.name for i in session.get_inputs()}  # type: ignore[attr-defined]  # e5 reads no token types
        logits = np.empty(len(candidates), dtype=np.float32)
        for start in range(0, len(order), LIMITS.judge_batch):
            chosen = order[start : start + LIMITS.judge_batch]
            width = max(int(lengths[chosen].max()), 1)
            feed = {
                "input_ids": ids[chosen, :width],
                "attention_mask": mask[chosen, :width],
                "token_type_ids": types[chosen, :width],
            }
            feed = {name: value for name, value in feed.items() if name in takes}
            logits[chosen] = session.run(None, feed)[0][:, 0]  # type: ignore[attr-defined]
        return 1.0 / (1.0 + np.exp(-logits))


def padding_of(tokenizer: object) -> dict[str, object]:
    """How a batch is padded: MiniLM's vocabulary pads with [PAD] (id 0), e5's with <pad> (id 1)."""
    for token in ("[PAD]", "<pad>"):
        if (token_id := tokenizer.token_to_id(token)) is not None:  # type: ignore[attr-defined]
            return {"pad_id": token_id, "pad_token": token}
    return {"pad_id": 0, "pad_token": "[PAD]"}


@functools.cache
def shared() -> Judge:
    """One judge per process: every pipeline and answerer shares its session, on up to `LIMITS.judge_threads` cores."""
    return Judge(threads=max(1, min(LIMITS.judge_threads, os.cpu_count() or 1)))
