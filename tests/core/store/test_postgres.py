"""What only the PostgreSQL store does: search in SQL (the same hits as SQLite's in memory), pgvector's column
and index, its migrations, replicas sharing one database, and the database URL and its errors. What every
store does, on SQLite and PostgreSQL alike, is in test_store.py.

A real PostgreSQL with pgvector is started once per run by `pgserver` (a dev dependency) on a Unix socket in a
temp folder (`tests/postgres.py`); each test gets its own database. When no server can be started the tests
are skipped with the reason, and fail under CI.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from core.common.errors import ConfigError
from core.common.questions import SCOPES
from core.common.settings import Settings, from_env
from core.ingest import sync
from core.retrieval.knowledge import KnowledgeBase
from core.retrieval.search import Searcher
from core.store import open_store
from core.vectors.embeddings import normalise
from tests.fakes import FakeEmbedder, mixed_handbook

psycopg = pytest.importorskip("psycopg", reason="the postgres extra (psycopg) is not installed")

PRICES = "---\ntitle: Prices\naudience: public\n---\n## Fronts\n\nOak fronts cost 185 EUR per m².\n"


def _folder(write_kb) -> Path:
    """Eight documents, public and internal, several fragments each: enough for the per-document cap to bite."""
    return write_kb(mixed_handbook(documents=8, sections=6, words=12, seed=7))


def _side_by_side(
    tmp_path: Path, kb: Path, database_url: str, embedder: FakeEmbedder
) -> tuple[KnowledgeBase, KnowledgeBase]:
    """Knowledge bases on the same folder: one on SQLite (ranks in memory), one on PostgreSQL (ranks in SQL)."""
    lite = KnowledgeBase(Settings(knowledge_dir=kb, data_dir=tmp_path / "lite"), embedder)
    pg = KnowledgeBase(Settings(knowledge_dir=kb, data_dir=tmp_path / "unused", database_url=database_url), embedder)
    return lite, pg


class Jittered(FakeEmbedder):
    """Bag of words plus a little noise of its own per text, as a real model gives: distinct texts never tie.

    The two searches compute a score in different arithmetic (numpy's float32 product, pgvector's
    cosine), so scores agree to about 1e-7 and an exact tie between two *different* texts, common with
    bare word counts, may break either way. Identical texts tie in both, and both break the tie alike.
    """

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        words = super().embed(texts)
        noise = (
            np.stack(
                [
                    np.random.default_rng(int(hashlib.md5(t.encode()).hexdigest()[:8], 16)).normal(size=self.dim)
                    for t in texts
                ]
            )
            if texts
            else np.zeros((0, self.dim))
        )
        return normalise((words + 0.03 * noise).astype(np.float32))


def _questions() -> list[str]:
    return [
        "oak worktop price",
        "delivery to the floor",
        "hinge warranty",
        "walnut drawer weight",
        "glue beech front",
        "carry oak",
        "item3x2",
        "nothing about joinery at all",
    ]


def test_answers_are_ranked_in_the_database_with_the_same_hits_as_sqlite(tmp_path, database_url, write_kb, monkeypatch):
    """Two knowledge bases on the same documents: SQLite ranks in memory, PostgreSQL in SQL; same hits."""
    from core.store import pg_search

    monkeypatch.setattr(pg_search, "EXACT_UP_TO", 0)  # through the HNSW index, though so few rows are scored directly
    kb = _folder(write_kb)
    # The same document under another name: its fragments tie with doc2's, and both searches rank copy.md first.
    (kb / "copy.md").write_text((kb / "doc2.md").read_text(), encoding="utf-8")
    fake_embedder = Jittered()
    lite, pg = _side_by_side(tmp_path, kb, database_url, fake_embedder)
    try:
        lite.sync()
        pg.sync()
        memory = Searcher(pg.store.index.load())  # the same rows searched in memory, for the fragment ids
        assert len(lite.searcher.corpus.fragments) == len(memory.corpus.fragments) > 40

        def refuse() -> None:
            raise AssertionError("answering loaded every vector from PostgreSQL")

        monkeypatch.setattr(pg.store.index, "load", refuse)
        compared = ties = 0
        for question in _questions():
            for scope in (SCOPES["public"], SCOPES["internal"]):
                for floor in (-1.0, 0.0, 0.2, 0.4):
                    expected = lite.retrieve(question, scope, floor).hits
                    got = pg.retrieve(question, scope, floor).hits
                    assert [h.fragment for h in got] == [h.fragment for h in expected], (question, scope, floor)
                    assert np.allclose([h.score for h in got], [h.score for h in expected], atol=1e-5)
                    compared += bool(expected)
                    ties += any(h.fragment.document == "copy.md" for h in got)
        assert compared > 40 and ties
        assert pg.titles(SCOPES["public"]) == lite.titles(SCOPES["public"]) == ["Doc 2", "Doc 0", "Doc 4", "Doc 6"]
        assert pg.titles(SCOPES["internal"]) == lite.titles(SCOPES["internal"])

        # Vectors no question produces, at every floor: the hits and the store's own fragment ids agree.
        rng = np.random.default_rng(1)
        for query in (v / np.linalg.norm(v) for v in rng.normal(size=(25, memory.corpus.matrix.shape[1]))):
            for scope in (SCOPES["public"], SCOPES["internal"]):
                for floor in (-1.0, 0.0, 0.2):
                    expected = memory.search(query, scope, floor)
                    got = pg.store.index.search(query, scope, floor)  # type: ignore[attr-defined]
                    assert [(h.fragment_id, h.fragment) for h in got] == [(h.fragment_id, h.fragment) for h in expected]
                    assert np.allclose([h.score for h in got], [h.score for h in expected], atol=1e-5)
        public_only = pg.store.index.search(query, SCOPES["public"], -1.0, k=50)  # type: ignore[attr-defined]
        assert public_only and {h.fragment.audience for h in public_only} == {"public"}
        assert max(Counter(h.fragment.document for h in public_only).values()) <= 3
    finally:
        lite.close()
        pg.close()


def test_a_scope_the_index_cuts_short_is_ranked_exactly(tmp_path, database_url, write_kb, fake_embedder, monkeypatch):
    """A scan that stops after ef_search rows, before the audience filter (pgvector before 0.8), may hand a small
    public share none of its rows: the search is ranked exactly. Iterative index scans (0.8) scan on instead."""
    from core.store import pg_search
    from core.store.pg_search import Plan

    words = ["oak", "walnut", "beech", "worktop", "front", "hinge", "drawer", "delivery", "price", "weight"]
    rng = np.random.default_rng(3)
    files = {}
    for number in range(pg_search.MIN_EF // 8 + 10):  # 8 fragments each: more rows than HNSW considers
        parts = [f"## Part {p}\n\nOak worktop {' '.join(rng.choice(words, size=8))} x{number}y{p}.\n" for p in range(8)]
        files[f"staff{number:03d}.md"] = f"# Staff {number}\n\n" + "\n".join(parts)
    # One public document whose text shares little with the question.
    files["public.md"] = "---\ntitle: Leaflet\naudience: public\n---\n## Care\n\nOil the wood once a year.\n"
    kb = write_kb(files)
    lite, pg = _side_by_side(tmp_path, kb, database_url, fake_embedder)
    try:
        lite.sync()
        pg.sync()
        index = pg.store.index
        expected = lite.retrieve("oak worktop wood", SCOPES["public"], 0.1).hits
        assert [h.fragment.document for h in expected] == ["public.md"]
        # The plan as it is (small scopes are scored directly), then HNSW 100 wide without scanning on.
        assert [h.fragment for h in pg.retrieve("oak worktop wood", SCOPES["public"], 0.1).hits] == [
            h.fragment for h in expected
        ]
        monkeypatch.setattr(index.policy, "plan", lambda db, audiences, wanted: Plan(exact=False, ef_search=100))  # type: ignore[attr-defined]
        before = index.exact_searches  # type: ignore[attr-defined]
        got = pg.retrieve("oak worktop wood", SCOPES["public"], 0.1).hits
        assert [h.fragment for h in got] == [h.fragment for h in expected]
        assert index.exact_searches == before + 1, "the public row was beyond the index's candidates"  # type: ignore[attr-defined]
        # The staff scope fills its five hits from the candidates: no exact ranking.
        assert len(pg.retrieve("oak worktop", SCOPES["internal"], 0.1).hits) == 5
        assert index.exact_searches == before + 1  # type: ignore[attr-defined]
        # Scanning on (pgvector 0.8), the same 100-wide search finds the public row through the index.
        exhaustive = Plan(False, 100, 20_000, exhaustive=True)
        monkeypatch.setattr(index.policy, "plan", lambda db, audiences, wanted: exhaustive)  # type: ignore[attr-defined]
        got = pg.retrieve("oak worktop wood", SCOPES["public"], 0.1).hits
        assert [h.fragment for h in got] == [h.fragment for h in expected]
        assert index.exact_searches == before + 1  # type: ignore[attr-defined]
    finally:
        lite.close()
        pg.close()


def test_the_vector_column_follows_the_embedder(database_url, tmp_path, write_kb, fake_embedder):
    kb = write_kb({"prices.md": PRICES})
    store = open_store(tmp_path, database_url)
    try:
        sync(kb, store.index, fake_embedder)
        dim = store.index.load().matrix.shape[1]
        store.index.reset("another-model")
        with psycopg.connect(database_url) as db:
            assert db.execute("SELECT value FROM meta WHERE key = 'dimension'").fetchone() is None
        sync(kb, store.index, fake_embedder)
        with psycopg.connect(database_url) as db:
            kind = db.execute(
                "SELECT format_type(atttypid, atttypmod) FROM pg_attribute "
                "WHERE attrelid = 'fragments'::regclass AND attname = 'embedding'"
            ).fetchone()[0]
            indexes = [r[0] for r in db.execute("SELECT indexdef FROM pg_indexes WHERE tablename = 'fragments'")]
        assert kind == f"vector({dim})"
        assert any("hnsw" in d and "vector_cosine_ops" in d for d in indexes)
    finally:
        store.close()


def test_migrations_are_recorded_and_applied_once(database_url, tmp_path):
    open_store(tmp_path, database_url).close()
    open_store(tmp_path, database_url).close()
    with psycopg.connect(database_url) as db:
        names = [r[0] for r in db.execute("SELECT name FROM _migrations ORDER BY name")]
    assert names == [
        "_m001_index",
        "_m002_runlog_and_state",
        "_m003_text_vectors",
        "_m004_entries_scope",
        "_m005_document_language",
        "_m006_secrets",
    ]


def test_one_replica_indexes_and_the_other_answers_from_it_without_embedding(
    database_url, tmp_path, write_kb, fake_embedder
):
    kb = write_kb({"prices.md": PRICES})
    settings = Settings(knowledge_dir=kb, data_dir=tmp_path / "data", database_url=database_url)
    other = FakeEmbedder()
    first, second = KnowledgeBase(settings, fake_embedder), KnowledgeBase(settings, other)
    try:
        with first.store.index.sole_indexer() as mine:
            assert mine
            report = second.sync(wait=False)  # another replica is indexing: this one doesn't
            assert (report.added, report.unchanged) == (0, 0)
        assert first.sync().added == 1
        hits = second.retrieve("oak fronts price", SCOPES["public"], floor=0.0).hits
        assert [h.fragment.document for h in hits] == ["prices.md"], "the other replica searches what was indexed"
        assert second.sync().unchanged == 1
        assert other.texts == 1, "the other replica embedded only its question"
    finally:
        first.close()
        second.close()


def test_a_database_that_cannot_be_reached_is_one_sentence():
    with pytest.raises(
        ConfigError, match=r"PostgreSQL database at 127\.0\.0\.1:1 can't be used .*VERBATIM_DATABASE_URL"
    ):
        open_store("unused", "postgresql://verbatim:secret@127.0.0.1:1/verbatim", wait=0)


def test_the_database_url_is_read_checked_and_never_shown():
    settings = from_env({"VERBATIM_DATABASE_URL": "postgresql://u:pw@db/verbatim"})
    assert settings.database_url == "postgresql://u:pw@db/verbatim"
    assert "pw" not in repr(settings)
    assert from_env({}).database_url == ""
    with pytest.raises(ConfigError, match="must start with postgresql://"):
        from_env({"VERBATIM_DATABASE_URL": "mysql://db"})
    assert (from_env({}).database_wait, from_env({"VERBATIM_DATABASE_WAIT": "5"}).database_wait) == (30.0, 5.0)
    with pytest.raises(ConfigError, match="VERBATIM_DATABASE_WAIT must be between"):
        from_env({"VERBATIM_DATABASE_WAIT": "-1"})


def test_log_status_and_sweep_read_the_database_not_a_data_folder(database_url, tmp_path, write_kb, monkeypatch):
    """With VERBATIM_DATABASE_URL set, the operator's commands show the shared store (no local files)."""
    import io

    from bot.cli import main
    from core.answering.pipeline import Pipeline
    from core.common.settings import Settings
    from core.retrieval.knowledge import KnowledgeBase
    from tests.fakes import FakeEmbedder

    kb = write_kb({"prices.md": PRICES, "old.md": "# Old\n\nAn old leaflet nobody reads any more."})
    settings = Settings(knowledge_dir=kb, data_dir=tmp_path / "nowhere", database_url=database_url)
    pipeline = Pipeline(settings, KnowledgeBase(settings, FakeEmbedder()))
    pipeline.knowledge.sync()
    (kb / "old.md").unlink()
    pipeline.knowledge.sync()  # the database keeps old.md's register row, marked removed
    pipeline.answer("how much are oak fronts per m2?", frozenset({"public"}), surface="telegram")
    pipeline.close()
    monkeypatch.setenv("VERBATIM_DATABASE_URL", database_url)
    common = ["--knowledge", str(kb), "--data", str(tmp_path / "nowhere")]
    for command, codes, expected in (
        ("log", (0,), "how much are oak fronts"),
        ("status", (0, 1), "prices.md"),  # 1: the documents have no owner, which needs attention
        ("sweep", (0,), "the register row of removed document old.md"),  # only the database knows it
    ):
        out = io.StringIO()
        assert main([command, *common], out=out) in codes
        assert expected in out.getvalue()
    assert not (tmp_path / "nowhere").exists(), "nothing was created or read on the local disk"


def test_two_replicas_answer_each_event_once_when_redeliveries_go_to_the_other(pg_server, capsys):
    """Two real `verbatim serve slack` processes on one database; a redelivery lands on the other replica."""
    import importlib.util

    from tests.conftest import REPO

    spec = importlib.util.spec_from_file_location("replicas", REPO / "benchmarks" / "replicas.py")
    assert spec and spec.loader
    replicas = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(replicas)
    figures = replicas.main(24, 8)
    assert figures == {"acked": 32, "answered": 24, "lost": 0, "twice": 0}


def test_a_server_without_pgvector_is_told_how_to_get_it(database_url, tmp_path, monkeypatch):
    # Debian's own PostgreSQL has no pgvector; the server is running, so "check it is running" would mislead.
    from core.store import postgres_pool

    def no_extension(db):
        raise psycopg.errors.FeatureNotSupported('extension "vector" is not available')

    monkeypatch.setattr(postgres_pool, "_migrate_locked", no_extension)
    with pytest.raises(ConfigError, match="pgvector") as refused:
        open_store(tmp_path, database_url, wait=0)
    assert "is running" not in str(refused.value) and "apt install" in str(refused.value)


def test_a_database_server_whose_disk_is_full_is_disk_full_not_unavailable(database_url, monkeypatch):
    # PostgreSQL reports a full disk as SQLSTATE 53100 (an OperationalError to psycopg): the server is up, so
    # "can't be reached, tried again" would be wrong, and the pool must not be dropped for it.
    import psycopg.errors

    from core.common.errors import DiskFull

    store = open_store("unused", database_url)
    try:
        database = store.database  # type: ignore[attr-defined]
        with pytest.raises(DiskFull, match=r"can't be written: its disk is full"), database.use() as db:
            db.execute("SELECT 1")
            raise psycopg.errors.DiskFull("could not extend file: No space left on device")
        assert not store.database.down  # type: ignore[attr-defined]
        assert store.state.first_time("slack-event:EvAfter")  # the next use goes on as before
    finally:
        store.close()
