"""A PostgreSQL that is down at start-up or goes down mid-run: one sentence, a retry, nothing lost or doubled.

Each test has a server of its own (`outage`, see tests/postgres.py) that it stops as a crash does
(`pg_ctl stop -m immediate`: every connection cut) and starts again on the same socket and data.
"""

from __future__ import annotations

import logging
import threading
import time

import pytest

from core.answering.pipeline import Pipeline
from core.common.errors import ConfigError, StoreUnavailable
from core.common.questions import SCOPES
from core.common.settings import Settings
from core.retrieval.knowledge import KnowledgeBase
from core.store import open_store

PRICES = "---\ntitle: Prices\naudience: public\n---\n## Fronts\n\nOak fronts cost 185 EUR per m².\n"
WAIT = 60.0  # a bound reached only on failure


@pytest.fixture(autouse=True)
def _short_waits(monkeypatch):
    """The first use after a crash waits this long for the pool to reconnect (10 s in production) before
    it says the database is down; the tests wait less."""
    monkeypatch.setattr("core.store.postgres.CONNECTION_WAIT", 2.0)


def test_a_database_down_at_start_up_is_waited_for_with_one_sentence(outage, caplog):
    outage.stop()
    caplog.set_level(logging.WARNING, logger="core.store.postgres")
    said = threading.Event()

    def bring_it_back() -> None:
        deadline = time.monotonic() + WAIT
        while not any("trying again" in r.getMessage() for r in caplog.records) and time.monotonic() < deadline:
            time.sleep(0.05)
        said.set()
        outage.start()

    helper = threading.Thread(target=bring_it_back)
    helper.start()
    store = open_store("unused", outage.url, wait=WAIT)
    helper.join()
    try:
        assert said.is_set()
        warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
        assert len(warnings) == 1, "one sentence, not one per attempt"
        assert "can't be reached" in warnings[0] and "trying again for up to 60 s" in warnings[0]
        assert store.state.first_time("slack-event:Ev1")
    finally:
        store.close()


def test_a_database_still_down_when_the_wait_ends_is_one_sentence(outage):
    outage.stop()
    with pytest.raises(ConfigError) as caught:
        open_store("unused", outage.url, wait=1.0)
    message = str(caught.value)
    assert "can't be used" in message and "tried for 1 s" in message and "VERBATIM_DATABASE_URL" in message
    assert "\n" not in message


def test_a_wrong_database_name_is_not_waited_for(outage, caplog):
    caplog.set_level(logging.WARNING, logger="core.store.postgres")
    with pytest.raises(ConfigError, match="does not exist"):
        open_store("unused", outage.server.get_uri("no_such_database"), wait=WAIT)
    assert not caplog.records, "a name that doesn't exist won't start existing: no retry"


def test_a_database_that_drops_mid_run_is_one_sentence_and_the_pool_reconnects(outage, tmp_path, write_kb):
    from tests.fakes import FakeEmbedder

    kb = write_kb({"prices.md": PRICES})
    # A resync before every question: re-reading the folder meets the outage too, and says nothing to the user.
    settings = Settings(knowledge_dir=kb, data_dir=tmp_path / "unused", database_url=outage.url, resync_seconds=1e-6)
    pipeline = Pipeline(settings, KnowledgeBase(settings, FakeEmbedder()))
    try:
        pipeline.knowledge.sync()
        before = pipeline.ask("How much are oak fronts?", SCOPES["public"], "slack", conversation="C1:1")
        assert before.kind == "answered"

        outage.stop()
        for attempt in (
            lambda: pipeline.ask("How much are oak fronts per m2?", SCOPES["public"], "slack", conversation="C1:1"),
            lambda: pipeline.knowledge.retrieve("oak fronts", SCOPES["public"], pipeline.policy.min_similarity),
            lambda: pipeline.store.state.first_time("slack-event:Ev2"),
        ):
            with pytest.raises(StoreUnavailable) as caught:
                attempt()
            assert "can't be reached" in str(caught.value) and "tried again on the next use" in str(caught.value)

        outage.start()  # the very next use reaches it: no waiting for the pool's next reconnection attempt
        again = pipeline.ask("How much are oak fronts per m2?", SCOPES["public"], "slack", conversation="C1:1")
        assert again.kind == "answered"
        # The question caught by the outage was never logged; the one asked again was, once.
        logged = [e.question for e in pipeline.runlog.tail(10)]
        assert logged == ["How much are oak fronts?", "How much are oak fronts per m2?"]
        assert [t.question for t in pipeline.history("C1:1")] == logged, "the conversation goes on"
        assert pipeline.store.state.first_time("slack-event:Ev2"), "an event seen while down was never recorded"
    finally:
        pipeline.close()


def test_a_restart_shorter_than_the_connection_wait_costs_only_time(outage, monkeypatch):
    monkeypatch.setattr("core.store.postgres.CONNECTION_WAIT", WAIT)
    store = open_store("unused", outage.url)
    try:
        assert store.state.first_time("slack-event:Ev1")
        outage.stop()
        pool = store.database.pool  # type: ignore[attr-defined]

        def restart_once_a_use_waits() -> None:
            deadline = time.monotonic() + WAIT
            while not pool.get_stats().get("requests_waiting") and time.monotonic() < deadline:
                time.sleep(0.02)
            outage.start()

        helper = threading.Thread(target=restart_once_a_use_waits)
        helper.start()
        store.state.link("telegram-message:1:2", "conversation-a")  # waits through the restart
        helper.join()
        assert store.state.linked("telegram-message:1:2") == "conversation-a"
    finally:
        store.close()
