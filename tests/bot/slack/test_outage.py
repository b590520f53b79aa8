"""Slack on a shared PostgreSQL that goes down and comes back: one sentence, and each event answered once.

Two replicas (two Bolt apps, each with its own pipeline and pool) on one database of the test's own
(`outage`, tests/postgres.py), which the test stops as a crash does and starts again.
"""

from __future__ import annotations

import json
import threading

import pytest

from bot import presenter
from core import ACK_WAIT, KnowledgeBase, Pipeline, Settings
from tests.bot.slack.conftest import dispatch, drain, event_body, mention
from tests.fakes import FakeEmbedder

PRICES = "---\ntitle: Prices\naudience: public\n---\n## Fronts\n\nOak fronts cost 185 EUR per m².\n"


@pytest.fixture(autouse=True)
def _short_waits(monkeypatch):
    """The first use after a crash waits this long for the pool (10 s in production); the tests wait less."""
    monkeypatch.setattr("core.store.postgres.CONNECTION_WAIT", 2.0)


@pytest.fixture
def replicas(outage, tmp_path, write_kb):
    kb = write_kb({"prices.md": PRICES})
    settings = Settings(knowledge_dir=kb, data_dir=tmp_path / "unused", database_url=outage.url, resync_seconds=0)
    embedders = [StoppingEmbedder(), StoppingEmbedder()]
    pipelines = [Pipeline(settings, KnowledgeBase(settings, embedder)) for embedder in embedders]
    pipelines[0].knowledge.sync()
    yield list(zip(pipelines, embedders, strict=True))
    for pipeline in pipelines:
        pipeline.close()


class StoppingEmbedder(FakeEmbedder):
    """Stops the database when it embeds the question it is told to: an outage that begins mid-answer."""

    stop_at: tuple[str, object] | None = None

    def embed(self, texts):
        if self.stop_at and any(self.stop_at[0] in t for t in texts):
            outage, self.stop_at = self.stop_at[1], None
            outage.stop()  # type: ignore[attr-defined]
        return super().embed(texts)


def retry(n: int) -> dict[str, str]:
    return {"x-slack-retry-num": str(n), "x-slack-retry-reason": "http_error"}


def test_an_event_delivered_while_the_database_is_down_is_answered_once_when_delivered_again(
    outage, replicas, make_app, fake_slack
):
    one, two = (make_app(the_pipeline=pipeline) for pipeline, _ in replicas)
    body = event_body(mention("How much are oak fronts?", ts="1700000100.000100"), event_id="EvDown")
    outage.stop()

    # Not acknowledged, so Slack delivers it again; the asker is told once, on the first delivery.
    assert dispatch(one, body).status == 503
    told = fake_slack.wait_for("chat.postMessage")[0].body
    assert told["text"] == f"⏳ {presenter.UNAVAILABLE_RETRYING}" and told["thread_ts"] == "1700000100.000100"
    assert dispatch(two, body, **retry(1)).status == 503  # still down, on the other replica: not told again

    outage.start()
    assert dispatch(two, body, **retry(2)).status == 200
    answer = fake_slack.wait_for("chat.postMessage", 2)[1].body
    assert answer["thread_ts"] == "1700000100.000100" and "185 EUR" in json.dumps(answer["blocks"])
    assert dispatch(one, body, **retry(3)).status == 200  # a late redelivery to the first replica: skipped
    drain(one)
    drain(two)
    assert len(fake_slack.calls("chat.postMessage")) == 2, "one sentence while down, one answer after"
    assert [e.question for e in replicas[0][0].runlog.tail(10)] == ["How much are oak fronts?"], "logged once"


def test_an_answer_the_outage_interrupts_is_one_sentence_and_the_question_asked_again_is_answered_once(
    outage, replicas, make_app, fake_slack
):
    pipeline, embedder = replicas[0]
    app = make_app(the_pipeline=pipeline)
    embedder.stop_at = ("oak fronts per m2", outage)
    thread = "1700000200.000100"
    assert dispatch(app, event_body(mention("How much are oak fronts per m2?", ts=thread))).status == 200
    told = fake_slack.wait_for("chat.postMessage")[0].body
    assert told["text"] == f"⚠️ {presenter.UNAVAILABLE}" and told["thread_ts"] == thread
    assert not outage.up

    outage.start()
    again = mention("How much are oak fronts per m2?", ts="1700000200.000200", thread_ts=thread)
    assert dispatch(app, event_body(again)).status == 200
    answer = fake_slack.wait_for("chat.postMessage", 2)[1].body
    assert "185 EUR" in json.dumps(answer["blocks"])
    drain(app)
    assert len(fake_slack.calls("chat.postMessage")) == 2
    assert [e.question for e in pipeline.runlog.tail(10)] == ["How much are oak fronts per m2?"]


def test_every_store_call_before_the_acknowledgement_waits_at_most_ack_wait(
    database_url, tmp_path, write_kb, make_app, fake_slack, monkeypatch
):
    # Slack wants the acknowledgement within 3 s: a pool that has no connection free must fail the
    # middleware's calls in time (ACK_WAIT), not after the pool's own 10 s.
    kb = write_kb({"prices.md": PRICES})
    settings = Settings(knowledge_dir=kb, data_dir=tmp_path / "unused", database_url=database_url, resync_seconds=0)
    pipeline = Pipeline(settings, KnowledgeBase(settings, FakeEmbedder()))
    pipeline.knowledge.sync()
    app = make_app(the_pipeline=pipeline)
    database = pipeline.store.database  # type: ignore[attr-defined]
    use, waits = database.use, []

    def recording(wait=None):
        waits.append((threading.current_thread() is threading.main_thread(), wait))
        return use(wait)

    monkeypatch.setattr(database, "use", recording)
    assert dispatch(app, event_body(mention("How much are oak fronts?"))).status == 200
    fake_slack.wait_for("chat.postMessage")
    drain(app)
    before_ack = [wait for on_main, wait in waits if on_main]  # the middleware runs on the dispatching thread
    assert before_ack == [ACK_WAIT], "one read before the acknowledgement; the lease is the answer's"
    pipeline.close()
