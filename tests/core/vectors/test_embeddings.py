import httpx
import numpy as np
import pytest

from core.common.errors import EmbeddingError
from core.vectors.embeddings import RemoteEmbedder
from tests.fakes import Reply


def test_local_model_gives_unit_vectors_that_rank_paraphrases_close(local_embedder):
    v = local_embedder.embed(["oak kitchen front price", "how much do oak cupboard doors cost", "capital of France"])
    assert v.shape == (3, 384) and v.dtype == np.float32
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    assert v[0] @ v[1] > v[0] @ v[2] + 0.2


def test_local_model_batches_keep_input_order(local_embedder):
    texts = [f"text number {i} " + "word " * (i % 7) for i in range(70)]
    together = local_embedder.embed(texts)
    alone = np.stack([local_embedder.embed([t])[0] for t in texts[:5]])
    assert np.allclose(together[:5], alone, atol=1e-4)


def embedding_reply(n, dim=4):
    return Reply(200, {"data": [{"index": i, "embedding": [1.0, float(i), 0.0, 0.0]} for i in range(n)]})


def test_remote_embedder_posts_batches_with_the_key_and_normalises(fake_server):
    fake_server.script = [embedding_reply(32), embedding_reply(3)]
    embedder = RemoteEmbedder(fake_server.url + "/v1", "nomic", api_key="sk-secret")
    vectors = embedder.embed([f"t{i}" for i in range(35)])
    assert vectors.shape == (35, 4)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0)
    assert [r.path for r in fake_server.requests] == ["/v1/embeddings", "/v1/embeddings"]
    assert fake_server.requests[0].body["model"] == "nomic"
    assert fake_server.requests[0].headers["authorization"] == "Bearer sk-secret"


def test_remote_embedder_retries_429_and_5xx_then_succeeds(fake_server, monkeypatch):
    monkeypatch.setattr("time.sleep", lambda s: None)
    fake_server.script = [Reply(429, {}, {"Retry-After": "0"}), Reply(503, {}), embedding_reply(1)]
    vectors = RemoteEmbedder(fake_server.url, "m").embed(["x"])
    assert vectors.shape == (1, 4) and len(fake_server.requests) == 3


def test_remote_embedder_gives_up_after_three_attempts_without_leaking_the_key(fake_server, monkeypatch):
    monkeypatch.setattr("time.sleep", lambda s: None)
    fake_server.script = [Reply(500, {"error": "sk-secret echoed"})] * 3
    with pytest.raises(EmbeddingError) as caught:
        RemoteEmbedder(fake_server.url, "m", api_key="sk-secret").embed(["x"])
    assert "HTTP 500" in str(caught.value) and "3 attempts" in str(caught.value)
    assert "sk-secret" not in str(caught.value)
    assert len(fake_server.requests) == 3


def test_remote_embedder_times_out(fake_server, monkeypatch):
    monkeypatch.setattr("time.sleep", lambda s: None)
    fake_server.script = [Reply(200, {}, hang=True)] * 3
    with pytest.raises(EmbeddingError, match="did not answer in time"):
        RemoteEmbedder(fake_server.url, "m", timeout=0.1).embed(["x"])


def test_remote_embedder_reports_a_server_that_is_down():
    with pytest.raises(EmbeddingError, match="could not reach"):
        RemoteEmbedder("http://127.0.0.1:9", "m", timeout=0.5, transport=httpx.HTTPTransport(retries=0)).embed(["x"])


def test_cached_embedder_embeds_each_text_once_and_keeps_order():
    from core.vectors.embeddings import CachedEmbedder
    from tests.fakes import FakeEmbedder

    inner = FakeEmbedder()
    cached = CachedEmbedder(inner, size=3)
    first = cached.embed(["oak", "beech", "oak"])
    assert inner.calls == 1 and np.allclose(first[0], first[2])
    again = cached.embed(["beech", "oak"])
    assert inner.calls == 1 and np.allclose(again, first[[1, 0]])
    cached.embed(["walnut", "ash"])  # two new texts push the least recently used one ("beech") out
    cached.embed(["oak"])
    assert inner.calls == 2
    cached.embed(["beech"])
    assert inner.calls == 3
    assert cached.id == inner.id
