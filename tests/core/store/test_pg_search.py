"""How the PostgreSQL store searches through pgvector (core/store/pg_search.py): the plan for a server's version,
and the exact top 5 on a filtered corpus by both methods: iterative index scans (pgvector 0.8.2, the tests'
server) and the widened search re-ranked exactly (pgvector 0.6.2, pgserver 0.1.4's server)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator

import numpy as np
import pytest

from core.retrieval.search import Searcher
from core.store import pg_search
from core.store.pg_search import MAX_EF, MIN_EF, Method, Plan, nearest_sql, plan, version_tuple, width

psycopg = pytest.importorskip("psycopg", reason="the postgres extra (psycopg) is not installed")

NEW, OLD = Method("0.8.2"), Method("0.6.2")
DIM, PER_DOCUMENT, DOCUMENTS = 64, 30, 200
SUBJECTS = np.random.default_rng(6).normal(size=(150, DIM)) / np.sqrt(DIM)
# Above the scores of rows on other subjects (~0 ± 0.13), as answering's floor is above unrelated fragments'.
FLOOR = 0.5


# --- the plan -------------------------------------------------------------------------------------------


def test_versions_are_compared_as_numbers():
    assert version_tuple("0.8.2") == (0, 8, 2) and version_tuple("0.10.0") > (0, 8) > version_tuple("0.7.4")
    assert version_tuple("1.0.0-beta") == (1, 0, 0) and version_tuple("") == (0,)
    assert (NEW.iterative, Method("0.10.1").iterative, OLD.iterative) == (True, True, False)
    assert NEW.to_json() == {
        "method": "iterative_scan",
        "pgvector": "0.8.2",
        "index_bytes": 0,
        "shared_buffers_bytes": 0,
    }
    assert OLD.to_json()["method"] == "widened_exact_rerank" and OLD.to_json()["pgvector"] == "0.6.2"
    assert "iterative index scans" in NEW.describe() and "pgvector 0.6.2" in OLD.describe()


def test_an_index_larger_than_shared_buffers_is_said():
    # At 1M fragments the 2 GB index took 16-18 ms a search through 128 MB of shared_buffers, 7-8 ms held in 4 GB.
    fits = Method("0.8.2", index_bytes=300 << 20, buffer_bytes=4 << 30)
    outgrown = Method("0.8.2", index_bytes=2 << 30, buffer_bytes=128 << 20)
    assert not fits.outgrows_buffers and "shared_buffers" not in fits.describe()
    assert outgrown.outgrows_buffers
    assert "its index (2,147.5 MB) is larger than shared_buffers (134.2 MB)" in outgrown.describe()
    assert not Method("0.8.2").outgrows_buffers  # not read: nothing said


def test_the_search_widens_with_the_index_up_to_pgvectors_limit():
    assert width(1_000) == width(20_000) == MIN_EF
    assert MIN_EF < width(100_000) < width(1_000_000) < MAX_EF == width(10**9)


def test_pgvector_0_8_scans_on_for_a_scope_instead_of_widening():
    rows = 1_000_000
    whole, quarter, narrow = (plan(NEW, rows, n, 15) for n in (rows, rows // 4, rows // 100))
    assert whole.ef_search == quarter.ef_search == narrow.ef_search == width(rows)
    assert whole.max_scan_tuples == quarter.max_scan_tuples == pg_search.SCAN_TUPLES
    assert narrow.max_scan_tuples >= 2 * width(rows) * 100  # deep enough for the scope's own rows
    assert "hnsw.iterative_scan = relaxed_order" in narrow.settings()
    assert plan(NEW, rows, rows // 10_000, 15) == Plan(exact=True)  # 100 rows: scored directly
    assert plan(NEW, 10**9, 10**9 // 1000, 15) == Plan(exact=True)  # a scan deeper than MAX_SCAN: exact


def test_before_0_8_the_search_is_widened_by_the_scopes_share_or_ranked_exactly():
    whole, quarter = plan(OLD, 50_000, 50_000, 15), plan(OLD, 50_000, 12_500, 15)
    assert whole == Plan(exact=False, ef_search=width(50_000))
    assert quarter == Plan(exact=False, ef_search=4 * width(50_000))
    assert "iterative" not in quarter.settings()
    assert plan(OLD, 1_000_000, 250_000, 15).ef_search == MAX_EF
    assert plan(OLD, 1_000_000, 10_000, 15) == Plan(exact=True)  # 1%: even 1,000 wide holds ~10 of its rows
    assert Plan(exact=True).settings() == ""


# --- the exact top 5 on a small filtered corpus -------------------------------------------------------------


def _vectors(rng: np.random.Generator, subjects: np.ndarray) -> np.ndarray:
    """Unit vectors near their subjects' (cosine ~0.92 within a subject, ~0 between subjects)."""
    vectors = SUBJECTS[subjects] + 0.3 * rng.normal(size=(len(subjects), DIM)) / np.sqrt(DIM)
    return (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)


def _fill(url: str) -> None:
    """6,000 vectors on 150 subjects in 200 documents: one in four public, two (1%) for a board of directors."""
    from pgvector.psycopg import register_vector

    from core.store.postgres import HNSW

    vectors = _vectors(np.random.default_rng(7), np.random.default_rng(8).integers(0, len(SUBJECTS), 6000))
    with psycopg.connect(url, autocommit=True) as db:
        register_vector(db)
        for d in range(DOCUMENTS):
            audience = "public" if d % 4 == 0 else "board" if d % 100 == 1 else "internal"
            db.execute(
                "INSERT INTO documents (id, path, title, audience, sha256, size, state) "
                "VALUES (%s, %s, %s, %s, %s, 1, 'indexed')",
                (d + 1, f"doc{d:03d}.md", f"Doc {d}", audience, "0" * 64),
            )
        db.execute(f"ALTER TABLE fragments ALTER COLUMN embedding TYPE vector({DIM})")
        with db.cursor().copy(
            "COPY fragments (id, document_id, position, total, section, text, embedding, hash, staged) FROM STDIN"
        ) as copy:
            for i, vector in enumerate(vectors):
                text = f"Fragment {i}."
                sha = hashlib.sha256(text.encode()).hexdigest()
                copy.write_row(
                    (i + 1, i // PER_DOCUMENT + 1, i % PER_DOCUMENT + 1, PER_DOCUMENT, "[]", text, vector, sha, 0)
                )
        db.execute(f"CREATE INDEX fragments_by_embedding ON fragments USING hnsw (embedding vector_cosine_ops) {HNSW}")
        db.execute("INSERT INTO meta VALUES ('dimension', %s)", (str(DIM),))
        db.execute("ANALYZE")


@pytest.fixture
def through_the_index(monkeypatch) -> Iterator[None]:
    """Every scope through the HNSW index, however few its rows (at this size they would be scored directly)."""
    monkeypatch.setattr(pg_search, "EXACT_UP_TO", 0)
    yield


def _top5_by_each_scope(url: str, method: Method | None = None) -> tuple[Method, int]:
    """Search the store as answering does and compare with exact search in memory; the method and the
    number of searches that were ranked exactly."""
    from core.store.postgres import PostgresStore

    store = PostgresStore(url)
    try:
        _fill(url)
        index = store.index
        if method is not None:
            index.policy._method = method  # the same server searched as an older one would be
        exact = Searcher(index.load())
        rng = np.random.default_rng(11)
        compared = 0
        for query in _vectors(rng, rng.integers(0, len(SUBJECTS), 40)):
            for scope in ({"public"}, {"public", "internal"}, {"board"}):
                expected = exact.search(query, scope, FLOOR)
                got = index.search(query, scope, FLOOR)
                assert [h.fragment_id for h in got] == [h.fragment_id for h in expected], scope
                assert np.allclose([h.score for h in got], [h.score for h in expected], atol=1e-5)
                compared += len(expected) == 5
        assert compared >= 75  # the public and the staff scope's top 5 for every question
        method = index.method()
        # The HNSW index the corpus built, as status reads its size (not the 0 of a size never read).
        assert method.index_bytes > 1 << 20 and method.buffer_bytes > 0
        return Method(method.pgvector), index.exact_searches  # the method, without the sizes status reads
    finally:
        store.close()


def _nearest(url: str, settings: str, audiences: list[str], explain: bool = False) -> list[str]:
    """The store's candidate query for the public rows nearest a fixed vector, under `settings` (or its plan)."""
    from pgvector.psycopg import register_vector

    with psycopg.connect(url) as db:
        register_vector(db)
        db.execute(settings)
        rows = db.execute(
            ("EXPLAIN " if explain else "") + nearest_sql("('indexed', 'indexing')", exact=False),
            {"q": np.ones(DIM, dtype=np.float32), "audiences": audiences, "limit": 100},
            prepare=False,
        ).fetchall()
    return [str(r[0]) for r in rows]


def test_iterative_index_scans_give_the_exact_top_5_of_every_scope(database_url, through_the_index):
    method, ranked_exactly = _top5_by_each_scope(database_url)
    assert method == NEW
    assert ranked_exactly == 0, "every scope, the board's 1% too, found its candidates without exact ranking"
    # The public quarter is searched through the index; scanning on, 10 wide still hands over 100 of its rows.
    settings = plan(NEW, 6000, 1500, 15).settings()
    assert "fragments_by_embedding" in "\n".join(_nearest(database_url, settings, ["public"], explain=True))
    assert len(_nearest(database_url, settings.replace("ef_search = 100", "ef_search = 10"), ["public"])) == 100
    assert len(_nearest(database_url, "SET LOCAL hnsw.ef_search = 10", ["public"])) <= 10  # stopped at 10 rows


def test_the_widened_search_gives_the_exact_top_5_where_pgvector_is_older(database_url, through_the_index):
    """Forced on the tests' server: the method a server before pgvector 0.8 gets."""
    method, ranked_exactly = _top5_by_each_scope(database_url, OLD)
    assert method == OLD
    assert ranked_exactly == 40, "only the board's 1% is ranked exactly: too few of its rows in 1,000"


def test_a_server_with_pgvector_0_6_gets_the_widened_search_and_the_exact_top_5(
    old_pg_server, request, through_the_index
):
    from tests.postgres import fresh_database

    method, ranked_exactly = _top5_by_each_scope(fresh_database(old_pg_server, request))
    assert method == OLD and ranked_exactly == 40


# --- what status and doctor say -----------------------------------------------------------------------------


def _status(url: str, tmp_path) -> tuple[str, dict[str, str]]:
    from core.common.settings import Settings
    from core.measuring.register import read_register
    from core.store.postgres import PostgresStore

    PostgresStore(url).close()  # the tables, as the first replica leaves them
    status = read_register(Settings(knowledge_dir=tmp_path, data_dir=tmp_path / "nowhere", database_url=url))
    return status.search, status.to_json()["search_method"]


def test_status_says_the_server_searches_with_iterative_index_scans(database_url, tmp_path):
    search, method = _status(database_url, tmp_path)
    assert (method["method"], method["pgvector"]) == ("iterative_scan", "0.8.2")
    assert "pgvector 0.8.2" in search and "iterative index scans" in search
    # The server's shared_buffers as it has them (pgserver starts with 128 MB); no index before the first batch.
    assert method["shared_buffers_bytes"] >= 1 << 20 and method["index_bytes"] == 0


def test_status_says_an_older_server_searches_wider_and_ranks_exactly(old_pg_server, request, tmp_path):
    from tests.postgres import fresh_database

    search, method = _status(fresh_database(old_pg_server, request), tmp_path)
    assert (method["method"], method["pgvector"]) == ("widened_exact_rerank", "0.6.2")
    assert "pgvector 0.6.2" in search and "ALTER EXTENSION vector UPDATE" in search


def test_doctor_says_what_decides_the_method_without_contacting_the_database():
    from bot.doctor import diagnose
    from tests.conftest import DEMO_KB

    found = diagnose(
        {"VERBATIM_KNOWLEDGE_DIR": str(DEMO_KB), "VERBATIM_DATABASE_URL": "postgresql://nowhere.invalid/db"}
    )
    line = next(p for p in found.parts if p.startswith("Answers:"))
    assert "iterative index scans from 0.8" in line and "verbatim status says which" in line


class _Counts:
    """A database stand-in for `Policy`: a generation, and per (audience, searched) row counts."""

    def __init__(self) -> None:
        self.generation, self.rows, self.counted = "1", [("public", True, 300), ("internal", True, 900)], 0

    def execute(self, sql: str, prepare: bool = False) -> _Counts:
        if "count(*)" in sql:
            self.counted += 1
        return self

    def fetchone(self) -> tuple[str]:
        return (self.generation,)

    def fetchall(self) -> list[tuple[str, bool, int]]:
        return self.rows


def test_the_policy_counts_again_only_for_a_new_generation_and_counts_unsearched_index_rows_as_scanned():
    policy = pg_search.Policy("('indexed')")
    policy._method = Method("0.8.2")
    db = _Counts()
    assert policy.sizes(db) == {"public": 300, "internal": 900}
    policy.sizes(db)
    assert db.counted == 1, "the same generation is not counted again"
    db.generation, db.rows = "2", [("public", True, 300), ("internal", True, 900), ("internal", False, 50_000)]
    assert policy.sizes(db) == {"public": 300, "internal": 900} and db.counted == 2
    # A staged batch of 50,000 rows sits in the index: a scan that covers the 1,200 searched rows is not exhaustive.
    assert policy.plan(db, ["public", "internal"], 5) == plan(Method("0.8.2"), 51_200, 1_200, 5)
