"""The provenance register: every document's row and state, review dates, and what nothing refers to."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Sequence
from datetime import date
from pathlib import Path

import numpy as np
import pytest

from core.answering.pipeline import Pipeline
from core.answering.review import Period, parse_period, past_review, review_due
from core.common.answers import Claim, Draft, Turn
from core.common.errors import ConfigError
from core.common.questions import SCOPES
from core.common.settings import Settings, from_env
from core.common.values import Hit
from core.ingest import sync
from core.measuring.register import read_register, sweep_data
from core.retrieval.knowledge import KnowledgeBase
from core.store import INDEX_FILE, IndexStore
from core.store.migrations import INDEX_MIGRATIONS, migrate
from core.store.sql import SQLiteDialect
from core.store.sqlite import SQLiteIndex
from tests.fakes import FakeEmbedder

PRICES = (
    "---\ntitle: Prices\naudience: public\nowner: Sales office\nas_of: 2020-01-01\nreview_every: 180d\n"
    "source: https://intranet.example/prices\nlicence: internal use only\n---\n"
    "## Fronts\n\nOak fronts cost 185 EUR per m².\n"
)
WARRANTY = "---\ntitle: Warranty\naudience: internal\n---\n## Periods\n\nJoinery carries a five year warranty.\n"
TODAY = date(2026, 12, 1)


def open_index(tmp_path: Path) -> SQLiteIndex:
    return SQLiteIndex(tmp_path / "data" / INDEX_FILE)


def by_path(index: IndexStore) -> dict:
    return {record.path: record for record in index.register()}


# --- the register's rows ---------------------------------------------------------------------------


def test_an_indexed_document_records_its_provenance(engine, write_kb, fake_embedder):
    kb = write_kb({"prices.md": PRICES, "warranty.md": WARRANTY})
    index = engine.open().index  # on each engine: the register is the store's
    sync(kb, index, fake_embedder)
    prices = by_path(index)["prices.md"]
    assert prices.state == "indexed" and prices.error is None
    assert (prices.title, prices.audience, prices.owner, prices.as_of) == (
        "Prices",
        "public",
        "Sales office",
        "2020-01-01",
    )
    assert prices.source == "https://intranet.example/prices" and prices.licence == "internal use only"
    assert prices.review_every == "180d"
    assert prices.sha256 == hashlib.sha256((kb / "prices.md").read_bytes()).hexdigest()
    assert prices.fragments == 1 and prices.indexed_at and prices.modified == date.today().isoformat()
    warranty = by_path(index)["warranty.md"]
    assert warranty.owner is None and warranty.as_of is None and warranty.licence is None


def test_a_removed_document_keeps_its_row_but_is_never_searched(engine, write_kb, fake_embedder):
    kb = write_kb({"prices.md": PRICES, "warranty.md": WARRANTY})
    index = engine.open().index  # on each engine: the register is the store's
    sync(kb, index, fake_embedder)
    (kb / "warranty.md").unlink()
    assert sync(kb, index, fake_embedder).removed == 1
    warranty = by_path(index)["warranty.md"]
    assert (warranty.state, warranty.fragments, warranty.indexed_at) == ("removed", 0, None)
    assert [f.document for f in index.load().fragments] == ["prices.md"]
    generation = index.generation()
    again = sync(kb, index, fake_embedder)
    assert again.removed == 0 and not again.changed and index.generation() == generation  # counted once


def test_a_document_put_back_is_added_again(engine, write_kb, fake_embedder):
    kb = write_kb({"prices.md": PRICES, "warranty.md": WARRANTY})
    index = engine.open().index  # on each engine: the register is the store's
    sync(kb, index, fake_embedder)
    (kb / "warranty.md").unlink()
    sync(kb, index, fake_embedder)
    write_kb({"warranty.md": WARRANTY})
    report = sync(kb, index, fake_embedder)
    assert (report.added, report.updated) == (1, 0)
    assert by_path(index)["warranty.md"].state == "indexed"
    assert sorted(f.document for f in index.load().fragments) == ["prices.md", "warranty.md"]


def test_a_failed_document_keeps_its_owner_and_reason_and_loses_its_fragments(engine, write_kb, fake_embedder):
    kb = write_kb({"prices.md": PRICES})
    index = engine.open().index  # on each engine: the register is the store's
    sync(kb, index, fake_embedder)
    (kb / "prices.md").write_bytes(b"\xff\xfe not text")
    sync(kb, index, fake_embedder)
    prices = by_path(index)["prices.md"]
    assert prices.state == "failed" and "UTF-8" in (prices.error or "")
    assert prices.owner == "Sales office" and prices.fragments == 0 and prices.indexed_at is None
    assert len(index.load().fragments) == 0


def test_only_indexed_documents_reach_the_search(tmp_path, write_kb, fake_embedder):
    """Even fragments a crashed or older writer left behind are not loaded for a document not indexed."""
    kb = write_kb({"prices.md": PRICES, "warranty.md": WARRANTY})
    index = open_index(tmp_path)
    sync(kb, index, fake_embedder)
    for state in ("queued", "failed", "removed"):
        index.db.execute("UPDATE documents SET state = ? WHERE path = 'warranty.md'", (state,))
        index.db.commit()
        assert [f.document for f in index.load().fragments] == ["prices.md"], state


def test_the_register_migration_keeps_an_existing_index(tmp_path):
    path = tmp_path / INDEX_FILE
    old = sqlite3.connect(path)
    old.execute("PRAGMA foreign_keys = ON")
    migrate(old, INDEX_MIGRATIONS[:3], SQLiteDialect())  # the index as it was before the register
    old.execute(
        "INSERT INTO documents (path, title, sha256, size, state, indexed_at) "
        "VALUES ('a.md', 'A', 'abc', 3, 'indexed', '2026-01-01 00:00:00')"
    )
    old.execute(
        "INSERT INTO fragments (document_id, position, of, section, text, vector, hash) "
        "VALUES (1, 1, 1, '[]', 'Some text here.', ?, 'h')",
        (np.ones(4, dtype=np.float32).tobytes(),),
    )
    old.execute("INSERT OR REPLACE INTO meta VALUES ('dimension', '4')")
    old.commit()
    old.close()
    index = SQLiteIndex(path)
    assert [(r.path, r.state, r.fragments) for r in index.register()] == [("a.md", "indexed", 1)]
    assert [f.text for f in index.load().fragments] == ["Some text here."]
    index.remove(["a.md"])  # the new state is allowed, and the fragments still belong to their document
    assert index.register()[0].state == "removed"
    assert index.db.execute("SELECT count(*) FROM fragments").fetchone()[0] == 0


def test_an_index_with_the_old_fragment_columns_upgrades_keeping_every_row(tmp_path, write_kb, fake_embedder):
    path = tmp_path / "data" / INDEX_FILE
    path.parent.mkdir()
    old = sqlite3.connect(path)
    old.execute("PRAGMA foreign_keys = ON")
    migrate(old, INDEX_MIGRATIONS[:6], SQLiteDialect())  # `of` and `vector`, as released before one schema
    old.execute(
        "INSERT INTO documents (path, title, audience, sha256, size, state, indexed_at) "
        "VALUES ('a.md', 'A', 'public', 'abc', 3, 'indexed', '2026-01-01 00:00:00')"
    )
    vector = np.arange(4, dtype=np.float32) / 4
    old.execute(
        "INSERT INTO fragments (document_id, position, of, section, text, vector, hash) "
        "VALUES (1, 1, 2, '[\"S\"]', 'Some text here.', ?, 'h')",
        (vector.tobytes(),),
    )
    old.execute("INSERT OR REPLACE INTO meta VALUES ('dimension', '4')")
    old.commit()
    generation = int(old.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()[0])
    old.close()

    index = SQLiteIndex(path)
    columns = {r[1] for r in index.db.execute("PRAGMA table_info(fragments)")}
    assert {"total", "embedding"} <= columns and not {"of", "vector"} & columns
    assert index.generation() == generation, "readers holding the old generation need not reload"
    corpus = index.load()
    fragment = corpus.fragments[0]
    assert (fragment.text, fragment.section, fragment.position, fragment.of) == ("Some text here.", ("S",), 1, 2)
    assert np.array_equal(corpus.matrix[0], vector)
    assert np.array_equal(index.vectors_for(["h"])["h"], vector), "its vector is found by hash, not embedded again"
    index.close()


# --- review dates -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "period"),
    [
        ("180d", Period(180, "day")),
        ("180 days", Period(180, "day")),
        ("90", Period(90, "day")),
        ("12 weeks", Period(84, "day")),
        ("6 months", Period(6, "month")),
        ("6mo", Period(6, "month")),
        ("1 year", Period(12, "month")),
        ("never", None),
    ],
)
def test_review_every_reads_days_weeks_months_and_years(text, period):
    assert parse_period(text) == period


@pytest.mark.parametrize("text", ["soon", "6m", "-3d", "0d", "3 fortnights"])
def test_an_unreadable_review_period_is_refused_with_the_forms_it_takes(text):
    with pytest.raises(ValueError, match="180d, 12 weeks, 6 months or 1 year"):
        parse_period(text)


def test_a_review_date_counts_calendar_months_and_falls_back_to_the_default():
    assert review_due("2025-08-31", "6 months", 0) == date(2026, 2, 28)
    assert review_due("2025-10-01", None, 30) == date(2025, 10, 31)
    assert review_due("2025-10-01", "never", 30) is None  # a document may opt out of the default
    assert review_due("2025-10-01", "soon", 30) == date(2025, 10, 31)  # unreadable: the default applies
    assert review_due(None, "180d", 30) is None and review_due("2025-10-01", None, 0) is None
    assert not past_review("2025-10-01", None, 30, today=date(2025, 10, 31))  # the due day is still on time
    assert past_review("2025-10-01", None, 30, today=date(2025, 11, 1))


def test_review_days_comes_from_the_environment_as_whole_days():
    assert from_env({}).review_days == 0
    assert from_env({"VERBATIM_REVIEW_DAYS": "180"}).review_days == 180
    with pytest.raises(ConfigError, match="VERBATIM_REVIEW_DAYS must be a whole number of days"):
        from_env({"VERBATIM_REVIEW_DAYS": "6 months"})


class QuoteFirst:
    """An answerer that quotes the first retrieved fragment whole, so the real verification passes it."""

    name = "scripted"

    def surer(self, threshold: float) -> None:
        return None

    def rewrite(self, question: str, history: Sequence[Turn]) -> tuple[str, int]:
        return question, 0

    def answer(self, question: str, hits: Sequence[Hit], language: str | None = None) -> Draft:
        return Draft(True, (Claim(hits[0].fragment.text, 1, hits[0].fragment.text),))


def test_an_answer_quoting_a_document_past_review_says_so_in_its_json(tmp_path, write_kb):
    kb = write_kb({"prices.md": PRICES, "warranty.md": WARRANTY.replace("---\n## ", "as_of: 2999-01-01\n---\n## ")})
    settings = Settings(knowledge_dir=kb, data_dir=tmp_path / "data", min_similarity=0.2, review_days=3650)
    pipeline = Pipeline(settings, KnowledgeBase(settings, FakeEmbedder()), QuoteFirst())
    stale = pipeline.answer("how much do oak fronts cost", SCOPES["internal"])
    quote = stale.to_json()["statements"][0]["quotes"][0]
    assert (quote["document"], quote["as_of"], quote["stale"]) == ("prices.md", "2020-01-01", True)
    fresh = pipeline.answer("what warranty does joinery carry", SCOPES["internal"])
    quote = fresh.to_json()["statements"][0]["quotes"][0]
    assert (quote["document"], quote["as_of"], quote["stale"]) == ("warranty.md", "2999-01-01", False)
    logged = pipeline.logged_answer(stale.id)  # the run log keeps what the answer said
    assert logged is not None and logged.statements[0].quotes[0].stale
    pipeline.close()


# --- status: what needs attention ----------------------------------------------------------------


def test_status_names_failed_overdue_ownerless_and_unreadable_metadata(tmp_path, write_kb, fake_embedder):
    kb = write_kb(
        {
            "prices.md": PRICES,
            "warranty.md": WARRANTY,
            "odd.md": "---\nowner: Workshop\nas_of: autumn\nreview_every: soon\n---\n## A\n\nSome odd text.\n",
            "broken.md": b"\xff\xfe",
        }
    )
    settings = Settings(knowledge_dir=kb, data_dir=tmp_path / "data")
    KnowledgeBase(settings, fake_embedder).sync()
    write_kb({"new.md": "## New\n\nNot indexed yet.\n"})
    status = read_register(settings, today=TODAY)
    found = {(a.kind, a.document) for a in status.attention}
    assert found == {
        ("failed", "broken.md"),
        ("past_review", "prices.md"),
        ("no_owner", "warranty.md"),
        ("bad_metadata", "odd.md"),
    }
    overdue = next(a for a in status.attention if a.kind == "past_review")
    assert overdue.detail == "2020-06-29"
    assert [a.detail for a in status.attention if a.kind == "bad_metadata"] == [
        "as_of 'autumn' is not a date such as 2026-10-01",
        "review_every 'soon' is not a period such as 180d, 12 weeks, 6 months or 1 year",
    ]
    assert {d.path: d.state for d in status.documents}["new.md"] == "queued"
    assert status.totals == {
        "queued": 1,
        "indexing": 0,
        "indexed": 3,
        "failed": 1,
        "removed": 0,
        "documents": 5,
        "fragments": 3,
    }
    payload = json.loads(json.dumps(status.to_json()))
    assert payload["documents"][[d["path"] for d in payload["documents"]].index("prices.md")]["review_due"] == (
        "2020-06-29"
    )


def test_the_default_review_period_counts_from_the_file_date_without_as_of(tmp_path, write_kb, fake_embedder):
    kb = write_kb({"warranty.md": WARRANTY.replace("---\n## ", "owner: Workshop\n---\n## ")})
    settings = Settings(knowledge_dir=kb, data_dir=tmp_path / "data", review_days=30)
    KnowledgeBase(settings, fake_embedder).sync()
    assert read_register(settings).attention == ()  # the file was written today
    later = date.fromordinal(date.today().toordinal() + 31)
    assert [(a.kind, a.document) for a in read_register(settings, today=later).attention] == [
        ("past_review", "warranty.md")
    ]


def test_a_public_surface_with_no_public_document_needs_attention(tmp_path, write_kb, fake_embedder):
    kb = write_kb({"warranty.md": WARRANTY.replace("---\n## ", "owner: Workshop\n---\n## ")})
    settings = Settings(knowledge_dir=kb, data_dir=tmp_path / "data")
    KnowledgeBase(settings, fake_embedder).sync()
    assert read_register(settings).attention == ()
    (attention,) = read_register(settings, public_surfaces=["Telegram"]).attention
    assert (attention.kind, attention.detail) == ("no_public_document", "Telegram")


def test_status_of_a_folder_never_indexed_creates_nothing(tmp_path, write_kb):
    kb = write_kb({"warranty.md": WARRANTY})
    status = read_register(Settings(knowledge_dir=kb, data_dir=tmp_path / "data"))
    assert [(d.path, d.state) for d in status.documents] == [("warranty.md", "queued")]
    assert not (tmp_path / "data").exists()


# --- sweep: what nothing refers to ---------------------------------------------------------------


def test_sweep_lists_leftovers_and_removes_them_only_when_applied(tmp_path, write_kb, fake_embedder):
    kb = write_kb({"prices.md": PRICES, "warranty.md": WARRANTY})
    settings = Settings(knowledge_dir=kb, data_dir=tmp_path / "data")
    knowledge = KnowledgeBase(settings, fake_embedder)
    knowledge.sync()
    (kb / "warranty.md").unlink()
    knowledge.sync()
    knowledge.close()
    db = sqlite3.connect(settings.data_dir / INDEX_FILE)  # foreign keys off: as an old or foreign writer might
    db.execute(
        "INSERT INTO fragments (document_id, position, total, section, text, embedding, hash) "
        "VALUES (999, 1, 1, '[]', 'Nobody''s text.', ?, 'x')",
        (np.ones(FakeEmbedder().dim, dtype=np.float32).tobytes(),),
    )
    db.commit()
    db.close()
    aside = settings.data_dir / f"{INDEX_FILE}.corrupt-20260101-000000"
    aside.write_bytes(b"damaged")

    found = sweep_data(settings)
    assert (found.index.orphan_fragments, found.index.removed, found.corrupt_files) == (
        1,
        ("warranty.md",),
        (aside.name,),
    )
    assert not found.applied and aside.exists() and sweep_data(settings).index == found.index  # nothing changed

    applied = sweep_data(settings, apply=True)
    assert applied.applied and applied.index == found.index and not aside.exists()
    assert sweep_data(settings).empty
    index = open_index(tmp_path)
    assert [r.path for r in index.register()] == ["prices.md"]
    assert [f.document for f in index.load().fragments] == ["prices.md"]  # what is indexed is untouched


def test_sweep_of_a_missing_data_folder_finds_nothing(tmp_path):
    found = sweep_data(Settings(data_dir=tmp_path / "nowhere"), apply=True)
    assert found.empty and not (tmp_path / "nowhere").exists()
