"""What every store does, whichever engine holds it: each test runs on SQLite and on PostgreSQL (`engine`,
tests/core/store/conftest.py). What only one engine does is in test_sqlite.py and test_postgres.py."""

from __future__ import annotations

import subprocess
import sys

import numpy as np

from core.common.answers import Answer, turns_from
from core.common.questions import SCOPES
from core.common.settings import Settings
from core.ingest import sync
from core.ingest.fragments import fragment_document, fragment_hash
from core.ingest.readers import parse_document
from core.retrieval.knowledge import KnowledgeBase
from core.store import RUNLOG_FILE
from tests.fakes import FakeEmbedder

PRICES = "---\ntitle: Prices\naudience: public\n---\n## Fronts\n\nOak fronts cost 185 EUR per m².\n"
WARRANTY = "---\ntitle: Warranty\naudience: internal\n---\n## Periods\n\nOak fronts carry a five year warranty.\n"


# --- the bots' shared state ------------------------------------------------------------------------------


def test_an_event_is_first_seen_once_whichever_store_instance_asks(engine):
    one, two = engine.open(), engine.open()
    assert one.state.first_time("slack-event:Ev1")
    assert not two.state.first_time("slack-event:Ev1")
    assert two.state.first_time("slack-event:Ev2")
    assert two.state.first_time("slack-event:Ev1", ttl=0.0), "an id older than its ttl counts as new again"


def test_conversation_links_are_shared_and_replaced(engine):
    one, two = engine.open(), engine.open()
    one.state.link("telegram-message:7:1000", "conversation-a")
    assert two.state.linked("telegram-message:7:1000") == "conversation-a"
    assert two.state.linked("telegram-message:7:1001") is None
    two.state.link("telegram-message:7:1000", "conversation-b")
    assert one.state.linked("telegram-message:7:1000") == "conversation-b"


def test_conversation_links_survive_a_restart_and_keep_only_the_hashed_key(engine):
    store = engine.open()
    store.state.link("telegram-message:7:1000", "conversation-a")
    store.close()
    again = engine.open()
    assert again.state.linked("telegram-message:7:1000") == "conversation-a"
    assert again.state.linked("telegram-message:7:1001") is None
    assert engine.query("SELECT key FROM links", RUNLOG_FILE) == [(again.state.hashed("telegram-message:7:1000"),)]


def test_rate_slots_are_shared_and_say_how_long_to_wait(engine):
    one, two = engine.open(), engine.open()
    assert one.state.take_slot("user:1", limit=2) == 0
    assert two.state.take_slot("user:1", limit=2) == 0
    wait = one.state.take_slot("user:1", limit=2, window=60.0)
    assert 0 < wait <= 60.0
    assert two.state.take_slot("user:2", limit=2) == 0, "limits are per key"
    assert one.state.take_slot("user:1", limit=2, window=0.0) == 0, "slots older than the window are free again"


def test_a_stamp_is_claimed_by_one_store_per_period(engine):
    one, two = engine.open(), engine.open()
    assert one.state.stamped("digest") is None
    assert one.state.claim("digest", every=100.0, now=1000.0)
    assert not two.state.claim("digest", every=100.0, now=1050.0)
    assert two.state.stamped("digest") == 1000.0
    assert two.state.claim("digest", every=100.0, now=1100.0)


_CHILD = """
import sys
from core.store import open_store
store = open_store(sys.argv[1], sys.argv[2])
print(store.state.first_time('slack-event:Ev9'), store.state.first_time('slack-event:Ev9'))
store.state.link('telegram-message:1:2', 'conversation-from-child')
store.close()
"""


def test_another_process_on_the_same_store_shares_events_and_links(engine):
    child = subprocess.run(
        [sys.executable, "-c", _CHILD, str(engine.data_dir), engine.database_url],
        capture_output=True,
        text=True,
        check=True,
    )
    assert child.stdout.split() == ["True", "False"]
    store = engine.open()
    assert not store.state.first_time("slack-event:Ev9")
    assert store.state.linked("telegram-message:1:2") == "conversation-from-child"


# --- the run log -----------------------------------------------------------------------------------------


def test_the_run_log_keeps_answers_feedback_and_history(engine, pipeline):
    store = engine.open()
    answer = pipeline.ask("How much is a walnut worktop?", frozenset({"public"}), "slack", conversation="T1:C1:1")
    store.runlog.record(answer.to_record(), "slack", "T1:C1:1")
    assert store.runlog.feedback(answer.id, "up", "slack", who="U1")
    assert not store.runlog.feedback("no-such-answer", "down", "slack")
    other = engine.open()
    entry = other.runlog.tail(1)[0]
    assert (entry.id, entry.surface, entry.kind, entry.up, entry.down) == (answer.id, "slack", answer.kind, 1, 0)
    assert [t.question for t in turns_from(other.runlog.history("T1:C1:1"))] == ["How much is a walnut worktop?"]
    record = other.runlog.answer(answer.id)
    assert record is not None
    again = Answer.from_record(record)
    assert (again.statements, again.calculations) == (answer.statements, answer.calculations)
    logged = other.runlog.since("2000-01-01T00:00:00Z")
    assert [(entry.id, entry.up, entry.down) for entry in logged] == [(answer.id, 1, 0)]
    assert logged[0].fragments == tuple((h.fragment_id, round(h.score, 4)) for h in answer.retrieved)


# --- the index -------------------------------------------------------------------------------------------


def test_the_generation_moves_with_the_content_and_only_then(engine, write_kb, fake_embedder):
    kb = write_kb({"prices.md": PRICES})
    index = engine.open().index
    sync(kb, index, fake_embedder)
    first = index.generation()
    sync(kb, index, fake_embedder)
    assert index.generation() == first, "an unchanged folder leaves the generation alone"
    (kb / "prices.md").write_text(PRICES.replace("185", "199"), encoding="utf-8")
    sync(kb, index, fake_embedder)
    changed = index.generation()
    assert changed != first
    assert index.load().generation == changed
    assert "199" in index.load().fragments[0].text
    (kb / "other.md").write_text("# Other\n\nSomething else entirely here.", encoding="utf-8")
    (kb / "prices.md").unlink()
    sync(kb, index, fake_embedder)
    assert index.generation() not in (first, changed)
    assert [(r.path, r.state) for r in index.register()] == [("other.md", "indexed"), ("prices.md", "removed")]
    assert [f.document for f in index.load().fragments] == ["other.md"]


def test_vectors_are_found_again_by_fragment_hash(engine, write_kb, fake_embedder):
    kb = write_kb({"prices.md": PRICES})
    index = engine.open().index
    sync(kb, index, fake_embedder)
    corpus = index.load()
    [(digest,)] = engine.query("SELECT hash FROM fragments")
    found = index.vectors_for([digest, "no-such-hash"])
    assert list(found) == [digest]
    assert np.array_equal(found[digest], corpus.matrix[0])
    assert index.vectors_for(["no-such-hash"]) == {}
    # A changed file whose fragments' text is unchanged (only its owner moved) embeds nothing: the vectors
    # are found again by hash.
    (kb / "prices.md").write_text(PRICES.replace("audience: public", "audience: public\nowner: Sales"), "utf-8")
    report = sync(kb, index, fake_embedder)
    assert (report.updated, report.embedded) == (1, 0)
    assert np.array_equal(index.load().matrix, corpus.matrix)


def test_the_vector_dimension_is_forgotten_with_the_model_and_set_again_by_the_next_sync(
    engine, write_kb, fake_embedder
):
    kb = write_kb({"prices.md": PRICES})
    index = engine.open().index
    assert index.dimension() is None
    sync(kb, index, fake_embedder)
    dim = index.load().matrix.shape[1]
    assert index.dimension() == dim
    index.reset("another-model")
    assert (index.dimension(), index.embedder_id(), len(index.load().fragments)) == (None, "another-model", 0)
    sync(kb, index, fake_embedder)
    assert (index.dimension(), index.embedder_id()) == (dim, fake_embedder.id)


def test_a_run_that_died_mid_document_leaves_batches_the_next_run_reuses_and_never_shows(engine, write_kb):
    """A process killed between two batches runs no `abort`: its staged rows stay, unsearched, and the next
    run finds their vectors by hash instead of embedding them again (on both stores, for replicas too)."""
    sections = "\n\n".join(f"## Part {i}\n\nItem {i} of the catalogue costs {i} euros." for i in range(6))
    kb = write_kb({"catalogue.md": f"---\ntitle: Catalogue\naudience: public\n---\n{sections}\n"})
    dead = engine.open().index
    doc = parse_document("catalogue.md", (kb / "catalogue.md").read_bytes(), {}, {}, "")
    fragments = fragment_document(doc)[:4]
    dead.reset(FakeEmbedder().id)  # as `sync` does first on an empty index
    dead.mark_indexing(doc)
    dead.stage(
        doc.path,
        fragments,
        [fragment_hash(f) for f in fragments],
        FakeEmbedder().embed([f.embedded_text for f in fragments]),
    )
    # ... and the process dies here: no commit, no abort.
    index = engine.open().index
    assert len(index.load().fragments) == 0, "a dead run's batches are never searched"
    report = sync(kb, index, FakeEmbedder())
    assert (report.added + report.updated, report.embedded, report.fragments) == (1, 2, 6)
    assert len(index.load().fragments) == 6


def test_a_question_finds_only_what_its_scope_may_read(engine, write_kb, fake_embedder):
    kb = write_kb({"prices.md": PRICES, "warranty.md": WARRANTY})
    settings = Settings(knowledge_dir=kb, data_dir=engine.data_dir, database_url=engine.database_url)
    knowledge = KnowledgeBase(settings, fake_embedder)
    try:
        knowledge.sync()
        public = knowledge.retrieve("oak fronts warranty price", SCOPES["public"], floor=-1.0).hits
        staff = knowledge.retrieve("oak fronts warranty price", SCOPES["internal"], floor=-1.0).hits
        assert [h.fragment.document for h in public] == ["prices.md"]
        assert sorted(h.fragment.document for h in staff) == ["prices.md", "warranty.md"]
        assert knowledge.titles(SCOPES["public"]) == ["Prices"]
        assert sorted(knowledge.titles(SCOPES["internal"])) == ["Prices", "Warranty"]
    finally:
        knowledge.close()


# --- opening a store -------------------------------------------------------------------------------------


def test_importing_core_opens_no_database():
    code = "import core, sys; print('sqlite3' in sys.modules, 'psycopg' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


def test_processes_opening_one_new_store_together_all_succeed_and_set_nothing_aside(engine):
    """The Slack and Telegram bots, or two replicas, start at once after an upgrade: migrations run one after
    the other."""
    code = "import sys; from core.store import open_store; open_store(sys.argv[1], sys.argv[2]).close()"
    for round_ in range(3):
        place = engine.another(f"round{round_}")
        started = [
            subprocess.Popen([sys.executable, "-c", code, str(place.data_dir), place.database_url]) for _ in range(4)
        ]
        assert [p.wait(120) for p in started] == [0, 0, 0, 0]
        assert not place.open().index.damaged_copies(), "a live index was moved aside"
