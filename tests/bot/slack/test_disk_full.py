"""Slack on a full disk: the asker is told once, and the event is acknowledged rather than failed forever."""

import json

from bot import presenter
from tests.bot.slack.conftest import dispatch, drain, event_body, mention
from tests.fakes import FullDiskConnection

THREAD = "1700000400.000100"


def test_an_event_on_a_full_disk_gets_the_apology_once_and_no_500(make_app, fake_slack, pipeline):
    app = make_app()
    runlog = pipeline.store.runlog
    runlog.db = FullDiskConnection(runlog.db)  # the disk fills up under the running bot
    body = event_body(mention("how much is a walnut worktop?", ts=THREAD), event_id="EvFULL")
    assert dispatch(app, body).status == 200  # acknowledged: a 500 would only bring it back, to fail again
    told = fake_slack.wait_for("chat.postMessage")[0].body
    assert told["thread_ts"] == THREAD and told["text"] == f"⚠️ {presenter.APOLOGY}"
    retry = dispatch(app, body, **{"x-slack-retry-num": "1", "x-slack-retry-reason": "http_timeout"})
    assert retry.status == 200
    drain(app)
    assert len(fake_slack.calls("chat.postMessage")) == 1, "told once"


def test_an_answer_whose_log_row_hits_a_full_disk_gets_the_apology(make_app, fake_slack, pipeline, monkeypatch):
    app = make_app()
    runlog = pipeline.store.runlog
    monkeypatch.setattr(runlog, "record", _full_on_record(runlog))
    assert dispatch(app, event_body(mention("how much is a walnut worktop?", ts=THREAD))).status == 200
    told = fake_slack.wait_for("chat.postMessage")[0].body
    assert told["text"] == f"⚠️ {presenter.APOLOGY}" and "520 EUR" not in json.dumps(told)
    drain(app)


def _full_on_record(runlog):
    """The disk fills between the event's lease and its answer's log row."""
    record = runlog.record

    def record_on_a_full_disk(*args, **kwargs):
        runlog.db = FullDiskConnection(runlog.db)
        return record(*args, **kwargs)

    return record_on_a_full_disk
