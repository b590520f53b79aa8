"""Loading keeps what ranking needs in memory and reads the hits' text from the index (issue 16).

A corpus loaded before another process re-indexed never shows text the index no longer holds:
a vanished, swapped or narrowed fragment reads as gone, and the knowledge base searches again.
"""

from __future__ import annotations

import shutil
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from core.answering.policy import policy_for
from core.common.errors import IndexChanged
from core.common.questions import SCOPES
from core.common.settings import Settings
from core.ingest import sync
from core.retrieval import loading as loading_module
from core.retrieval.knowledge import KnowledgeBase
from core.retrieval.loading import LoadedSearch
from core.retrieval.search import Searcher
from core.store import INDEX_FILE
from core.store.corpus import StoredFragments
from core.store.sqlite import SQLiteIndex
from tests.fakes import FakeEmbedder

PRICES = "---\ntitle: Prices\naudience: public\n---\n## Fronts\n\nOak fronts cost 185 EUR per m².\n"
WARRANTY = "---\ntitle: Warranty\naudience: public\n---\n## Periods\n\nOak joinery carries a five year warranty.\n"
DISCOUNTS = "---\ntitle: Discounts\naudience: internal\n---\n## Authority\n\nSales staff may give oak 5% off.\n"
QUESTION = "oak fronts warranty discount"


def index_at(tmp_path: Path) -> SQLiteIndex:
    return SQLiteIndex(tmp_path / "data" / INDEX_FILE)


def test_the_corpus_holds_no_text_and_reads_the_rows_as_stored(tmp_path, write_kb, fake_embedder):
    folder = write_kb({"prices.md": PRICES, "warranty.md": WARRANTY, "discounts.md": DISCOUNTS})
    index = index_at(tmp_path)
    sync(folder, index, fake_embedder)
    corpus = index.load()
    assert isinstance(corpus.fragments, StoredFragments)
    # Public documents first (the public scope is a slice), then by path.
    assert [f.document for f in corpus.fragments] == ["prices.md", "warranty.md", "discounts.md"]
    assert list(corpus.audiences) == ["public", "public", "internal"]
    assert corpus.fragments[0].text == "Oak fronts cost 185 EUR per m²."
    assert corpus.fragments[-1].caption.startswith("Discounts › Authority")
    stored = dict(index.db.execute("SELECT id, embedding FROM fragments"))
    for row, fragment_id in enumerate(corpus.ids):
        assert np.array_equal(corpus.matrix[row], np.frombuffer(stored[int(fragment_id)], dtype=np.float32))
    assert corpus.titles(SCOPES["public"]) == ["Prices", "Warranty"]
    assert corpus.titles(SCOPES["internal"]) == ["Prices", "Warranty", "Discounts"]


def test_titles_read_no_fragment(tmp_path, write_kb, fake_embedder, monkeypatch):
    folder = write_kb({"prices.md": PRICES, "warranty.md": WARRANTY})
    index = index_at(tmp_path)
    sync(folder, index, fake_embedder)
    corpus = index.load()

    def no_reads(rows):
        raise AssertionError("titles read fragments")

    monkeypatch.setattr(corpus.fragments, "_read", no_reads)
    assert corpus.titles(SCOPES["public"]) == ["Prices", "Warranty"]


def test_a_stale_corpus_never_shows_a_document_narrowed_since(tmp_path, write_kb, fake_embedder):
    folder = write_kb({"prices.md": PRICES, "warranty.md": WARRANTY})
    index = index_at(tmp_path)
    sync(folder, index, fake_embedder)
    stale = Searcher(index.load())
    # Another process makes the warranty staff-only (its public version is not searched from then on).
    other = index_at(tmp_path)
    write_kb({"warranty.md": WARRANTY.replace("audience: public", "audience: internal")})
    sync(folder, other, FakeEmbedder())
    query = fake_embedder.embed([QUESTION])[0]
    with pytest.raises(IndexChanged) as raised:
        stale.search(query, SCOPES["public"], floor=-1.0)
    assert [h.fragment.document for h in raised.value.hits] == ["prices.md"]
    fresh = Searcher(index.load()).search(query, SCOPES["public"], floor=-1.0)
    assert [h.fragment.document for h in fresh] == ["prices.md"]


def test_a_reused_fragment_id_of_another_document_is_not_shown(tmp_path, write_kb, fake_embedder):
    folder = write_kb({"prices.md": PRICES, "warranty.md": WARRANTY})
    index = index_at(tmp_path)
    sync(folder, index, fake_embedder)
    corpus = index.load()
    last = int(np.argmax(corpus.ids))
    # The document holding the highest id goes, and a new one takes its id (SQLite reuses the top rowid).
    top = (int(corpus.ids[last]),)
    gone = index.db.execute(
        "SELECT d.path FROM fragments f JOIN documents d ON d.id = f.document_id WHERE f.id = ?", top
    ).fetchone()[0]
    (folder / gone).unlink()
    other = index_at(tmp_path)
    sync(folder, other, FakeEmbedder())
    write_kb({"zzz.md": DISCOUNTS})
    sync(folder, other, FakeEmbedder())
    assert int(corpus.ids[last]) in {r[0] for r in index.db.execute("SELECT id FROM fragments")}, "the id was reused"
    assert corpus.fragments_at([last]) == [None]
    with pytest.raises(IndexChanged):
        corpus.fragments[last]


def knowledge_base(tmp_path: Path, folder: Path) -> KnowledgeBase:
    settings = Settings(knowledge_dir=folder, data_dir=tmp_path / "data", resync_seconds=3600)
    kb = KnowledgeBase(settings, FakeEmbedder())
    kb.sync()
    return kb


def test_a_re_index_between_the_generation_check_and_the_read_searches_again(tmp_path, write_kb, monkeypatch):
    folder = write_kb({"prices.md": PRICES, "warranty.md": WARRANTY})
    kb = knowledge_base(tmp_path, folder)  # loaded; no text read yet (a fragment read once is kept a while)
    loaded = kb.store.index.generation()
    # Another process re-indexes the price list right after this one checked the generation.
    write_kb({"prices.md": PRICES.replace("185", "199")})
    sync(folder, index_at(tmp_path), FakeEmbedder())
    real = kb.store.index.generation
    answers = iter([loaded])
    monkeypatch.setattr(kb.store.index, "generation", lambda: next(answers, None) or real())
    hits = kb.retrieve(QUESTION, SCOPES["public"], floor=-1.0).hits
    texts = {h.fragment.text for h in hits}
    assert "Oak fronts cost 199 EUR per m²." in texts and "Oak fronts cost 185 EUR per m²." not in texts
    assert kb.searcher.corpus.generation == real()
    kb.close()


def test_when_the_index_keeps_moving_the_hits_still_valid_are_answered(tmp_path, write_kb, monkeypatch):
    folder = write_kb({"prices.md": PRICES, "warranty.md": WARRANTY})
    kb = knowledge_base(tmp_path, folder)
    loaded = kb.store.index.generation()
    write_kb({"prices.md": PRICES.replace("185", "199")})
    sync(folder, index_at(tmp_path), FakeEmbedder())
    # The generation never seems to move: the reload keeps the stale corpus, whose price fragment is gone.
    monkeypatch.setattr(kb.store.index, "generation", lambda: loaded)
    hits = kb.retrieve(QUESTION, SCOPES["public"], floor=-1.0).hits
    assert [h.fragment.document for h in hits] == ["warranty.md"]
    kb.close()


def test_a_corpus_loaded_before_its_file_was_deleted_still_reads_its_text(tmp_path, write_kb, fake_embedder):
    folder = write_kb({"prices.md": PRICES, "warranty.md": WARRANTY})
    index = index_at(tmp_path)
    sync(folder, index, fake_embedder)
    corpus = index.load()
    shutil.rmtree(tmp_path / "data")
    assert {f.document for f in corpus.fragments} == {"prices.md", "warranty.md"}


def test_closing_the_knowledge_base_closes_the_corpus_connections_so_the_index_file_alone_is_whole(tmp_path, write_kb):
    folder = write_kb({"prices.md": PRICES, "warranty.md": WARRANTY})
    kb = KnowledgeBase(Settings(knowledge_dir=folder, data_dir=tmp_path / "a"), FakeEmbedder())
    kb.sync()
    assert kb.retrieve(
        QUESTION, SCOPES["public"], policy_for(kb.settings).min_similarity
    ).hits  # a loaded corpus, reading text through its connection
    kb.close()
    assert not (tmp_path / "a" / f"{INDEX_FILE}-wal").exists()
    (tmp_path / "b").mkdir()
    shutil.copyfile(tmp_path / "a" / INDEX_FILE, tmp_path / "b" / INDEX_FILE)  # a backup of the file alone
    copy = KnowledgeBase(Settings(knowledge_dir=folder, data_dir=tmp_path / "b"), FakeEmbedder())
    report = copy.sync()
    assert (report.unchanged, report.added, report.embedded) == (2, 0, 0)
    copy.close()


def test_a_big_corpus_loads_a_new_generation_in_the_background_while_questions_are_answered(
    tmp_path, write_kb, monkeypatch
):
    """Above BACKGROUND_RELOAD_ROWS a question waits for no reload (3–7 s at 1M) unless a hit it found was
    re-indexed since: it is answered from the corpus loaded, and the next ones from the new."""
    monkeypatch.setattr(loading_module, "BACKGROUND_RELOAD_ROWS", 1)
    folder = write_kb({"prices.md": PRICES, "warranty.md": WARRANTY})
    kb = knowledge_base(tmp_path, folder)
    old = kb.searcher
    write_kb({"prices.md": PRICES.replace("185", "199")})
    sync(folder, index_at(tmp_path), FakeEmbedder())  # another process re-indexes the price list

    loading, release = threading.Event(), threading.Event()
    real_load = kb.store.index.load

    def slow_load():
        loading.set()
        assert release.wait(30)
        return real_load()

    monkeypatch.setattr(kb.store.index, "load", slow_load)
    started = time.monotonic()
    hits = kb.retrieve("oak joinery warranty", SCOPES["public"], floor=0.5).hits
    assert loading.wait(10) and time.monotonic() - started < 5, "the question waited for the load"
    assert [h.fragment.document for h in hits] == ["warranty.md"], "answered from the corpus loaded"
    assert kb._answering_searcher() is old  # still loading: a second question doesn't start another load
    # A question whose hit was re-indexed since waits for the load: the new text may be its answer.
    asked: list[set[str]] = []
    waiting = threading.Thread(
        target=lambda: asked.append({h.fragment.text for h in kb.retrieve(QUESTION, SCOPES["public"], floor=-1.0).hits})
    )
    waiting.start()
    waiting.join(0.5)
    assert waiting.is_alive(), "it should wait for the load under way"
    release.set()
    waiting.join(10)
    assert asked and "Oak fronts cost 199 EUR per m²." in asked[0] and "Oak fronts cost 185 EUR per m²." not in asked[0]
    deadline = time.monotonic() + 10
    while kb._answering_searcher() is old:
        assert time.monotonic() < deadline, "the background load never landed"
        time.sleep(0.01)
    texts = {h.fragment.text for h in kb.retrieve(QUESTION, SCOPES["public"], floor=-1.0).hits}
    assert "Oak fronts cost 199 EUR per m²." in texts
    kb.close()


def test_a_small_corpus_reloads_before_answering(tmp_path, write_kb, monkeypatch):
    """Below BACKGROUND_RELOAD_ROWS a load takes milliseconds: the question waits for it, no thread is started."""
    folder = write_kb({"prices.md": PRICES, "warranty.md": WARRANTY})
    kb = knowledge_base(tmp_path, folder)
    started: list[int] = []
    monkeypatch.setattr(
        LoadedSearch, "_reload_in_background", lambda self: (started.append(1), self._loading.release())
    )
    write_kb({"prices.md": PRICES.replace("185", "199")})
    sync(folder, index_at(tmp_path), FakeEmbedder())
    texts = {h.fragment.text for h in kb.retrieve(QUESTION, SCOPES["public"], floor=-1.0).hits}
    assert "Oak fronts cost 199 EUR per m²." in texts
    assert started == [] and kb.loaded_generation == kb.store.index.generation()
    kb.close()


def test_during_a_background_load_a_cached_text_narrowed_since_is_never_shown_to_the_public(
    tmp_path, write_kb, monkeypatch
):
    """The corpus answering while its successor loads may hold text another process has since made internal in
    its cache: once the store has moved on, every hit is checked against the store again."""
    monkeypatch.setattr(loading_module, "BACKGROUND_RELOAD_ROWS", 1)
    folder = write_kb({"prices.md": PRICES, "warranty.md": WARRANTY})
    kb = knowledge_base(tmp_path, folder)
    public = {h.fragment.document for h in kb.retrieve(QUESTION, SCOPES["public"], floor=-1.0).hits}
    assert public == {"prices.md", "warranty.md"}  # both texts now in the corpus's cache

    release = threading.Event()
    real_load = kb.store.index.load
    monkeypatch.setattr(kb.store.index, "load", lambda: (release.wait(30), real_load())[1])
    write_kb({"prices.md": PRICES.replace("audience: public", "audience: internal")})
    sync(folder, index_at(tmp_path), FakeEmbedder())  # another process narrows the price list
    try:
        for _ in range(3):  # the first question starts the load; the others find it under way
            hits = kb.retrieve(QUESTION, SCOPES["public"], floor=-1.0).hits
            assert [h.fragment.document for h in hits] == ["warranty.md"]
    finally:
        release.set()
    kb.close()


def test_a_background_load_that_fails_is_not_started_again_by_every_question(tmp_path, write_kb, monkeypatch):
    monkeypatch.setattr(loading_module, "BACKGROUND_RELOAD_ROWS", 1)
    folder = write_kb({"prices.md": PRICES, "warranty.md": WARRANTY})
    kb = knowledge_base(tmp_path, folder)
    write_kb({"prices.md": PRICES.replace("185", "199")})
    sync(folder, index_at(tmp_path), FakeEmbedder())
    loads = []

    def failing_load():
        loads.append(1)
        raise MemoryError("no room for the new generation")

    monkeypatch.setattr(kb.store.index, "load", failing_load)
    for _ in range(5):
        assert kb.retrieve("oak joinery warranty", SCOPES["public"], floor=0.5).hits
        time.sleep(0.05)
    assert len(loads) == 1, "retried after RELOAD_RETRY_SECONDS, not per question"
    kb.close()
