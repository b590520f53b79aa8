import json
import threading
import time

import httpx

from bot import presenter
from bot.slack import start_http_server
from bot.slack.listeners import question_text
from bot.slack.render import BLOCK_LIMIT, TEXT_LIMIT, escape, messages
from core.common.answers import Answer, Quote, Statement
from core.common.errors import AnswererError, RunLogError
from core.measuring.fakes import ScriptedAnswerer
from tests.bot.slack.conftest import (
    WAIT,
    dispatch,
    drain,
    event_body,
    form,
    mention,
    signed_headers,
    until,
)


def block_action(action_id, value, **extra):
    """A signed-able block_actions payload for one button click by U1 in C1."""
    payload = {
        "type": "block_actions",
        "team": {"id": "T1"},
        "user": {"id": "U1"},
        "channel": {"id": "C1"},
        "api_app_id": "A1",
        "trigger_id": "t",
        "container": {"type": "message"},
        **extra,
        "actions": [{"action_id": action_id, "block_id": "b", "value": value, "type": "button", "action_ts": "1"}],
    }
    return form(payload=json.dumps(payload))


def blocks_text(blocks):
    out = []
    for b in blocks:
        if b["type"] == "section":
            out.append(b["text"]["text"])
        elif b["type"] == "context":
            out.extend(e["text"] for e in b["elements"])
    return "\n".join(out)


def test_mention_is_answered_in_its_thread_with_quote_and_caption(make_app, fake_slack):
    app = make_app()
    response = dispatch(app, event_body(mention("how much is a walnut worktop?")))
    assert response.status == 200
    post = fake_slack.wait_for("chat.postMessage")[0].body
    assert post["channel"] == "C1" and post["thread_ts"] == "1700000000.000100"
    text = blocks_text(post["blocks"])
    assert "&gt; Solid walnut worktop, 38 mm: 520 EUR per running metre." in text
    assert "📄 Price list › Worktops · fragment 3 of 7" in text
    assert "520 EUR" in post["text"]
    actions = next(b for b in post["blocks"] if b["type"] == "actions")
    assert [e["action_id"] for e in actions["elements"]] == ["verbatim_feedback_up", "verbatim_feedback_down"]
    assert len(fake_slack.calls("auth.test")) == 1
    fake_slack.wait_for("reactions.remove")
    assert fake_slack.calls("reactions.add")[0].body["name"] == "hourglass_flowing_sand"


def test_a_mention_inside_a_thread_replies_in_that_thread(make_app, fake_slack):
    dispatch(
        make_app(), event_body(mention("warranty on hinges?", ts="1700000000.000900", thread_ts="1700000000.000500"))
    )
    assert fake_slack.wait_for("chat.postMessage")[0].body["thread_ts"] == "1700000000.000500"


def test_refusal_has_its_own_blocks_and_no_quotes(make_app, fake_slack):
    dispatch(make_app(), event_body(mention("What is the capital of France?")))
    post = fake_slack.wait_for("chat.postMessage")[0].body
    text = blocks_text(post["blocks"])
    assert "🚫 *Not in the knowledge base*" in text and "&gt;" not in text and "📄" not in text


def test_bot_messages_edits_and_other_subtypes_get_no_reply(make_app, fake_slack):
    app = make_app()
    dm = {"type": "message", "channel": "D1", "channel_type": "im", "ts": "1700000001.000100"}
    dispatch(app, event_body({**dm, "user": "U2", "bot_id": "B2", "text": "how much is a walnut worktop?"}))
    dispatch(app, event_body({**dm, "user": "UBOT", "text": "how much is a walnut worktop?"}))
    dispatch(app, event_body({**dm, "subtype": "message_changed", "message": {"text": "x"}}))
    dispatch(app, event_body({**dm, "subtype": "channel_join", "user": "U2", "text": "joined"}))
    dispatch(app, event_body(mention("how much is a walnut worktop?", bot_id="B9")))
    drain(app)  # every listener those events started has finished: a reply would have been posted
    assert fake_slack.calls("chat.postMessage") == []


def test_direct_message_is_answered_in_the_dm(make_app, fake_slack):
    dm = {
        "type": "message",
        "channel": "D1",
        "channel_type": "im",
        "user": "U1",
        "ts": "1700000002.000100",
        "text": "how much is a walnut worktop?",
    }
    dispatch(make_app(), event_body(dm))
    post = fake_slack.wait_for("chat.postMessage")[0].body
    assert post["channel"] == "D1" and "thread_ts" not in post
    assert "520 EUR" in blocks_text(post["blocks"])


def test_a_redelivered_event_is_answered_once(make_app, fake_slack):
    app = make_app()
    body = event_body(mention("how much is a walnut worktop?"), event_id="EvSAME")
    dispatch(app, body)
    retry = dispatch(app, body, **{"x-slack-retry-num": "1", "x-slack-retry-reason": "http_timeout"})
    assert retry.status == 200
    fake_slack.wait_for("chat.postMessage")
    drain(app)  # a second answer, had the retry started one, has been posted by now
    assert len(fake_slack.calls("chat.postMessage")) == 1


def test_an_event_whose_taker_died_is_answered_when_slack_delivers_it_again(
    make_app, fake_slack, pipeline, monkeypatch
):
    import bot.slack.listeners.common as common

    monkeypatch.setattr(common, "EVENT_LEASE_SECONDS", 0.5)
    state, first_time = pipeline.store.state, pipeline.store.state.first_time
    leases: list[bool] = []

    def leasing(key, ttl):
        leases.append(first_time(key, ttl))
        return leases[-1]

    monkeypatch.setattr(state, "first_time", leasing)
    app = make_app()
    body = event_body(mention("how much is a walnut worktop?"), event_id="EvLOST")
    assert first_time("slack-event:EvLOST", ttl=0.5)  # a process took it, then died unanswered
    early = dispatch(app, body, **{"x-slack-retry-num": "1", "x-slack-retry-reason": "http_timeout"})
    assert early.status == 200
    until(lambda: leases == [False], "the early delivery's answer was refused the lease")
    time.sleep(0.6)  # the lease runs out; the early delivery, inside it, started no answer
    assert fake_slack.calls("chat.postMessage") == []
    dispatch(app, body, **{"x-slack-retry-num": "2", "x-slack-retry-reason": "http_timeout"})
    assert "520 EUR" in blocks_text(fake_slack.wait_for("chat.postMessage")[0].body["blocks"])
    time.sleep(0.6)  # the lease has run out again, but the event is answered now: never twice
    dispatch(app, body, **{"x-slack-retry-num": "3", "x-slack-retry-reason": "http_timeout"})
    drain(app)
    assert len(fake_slack.calls("chat.postMessage")) == 1


def test_an_empty_mention_gets_a_hint(make_app, fake_slack):
    dispatch(make_app(), event_body(mention("   ")))
    assert "Ask me a question" in fake_slack.wait_for("chat.postMessage")[0].body["text"]


def test_an_overlong_mention_gets_a_clear_message(make_app, fake_slack):
    dispatch(make_app(), event_body(mention("oak " * 5000)))
    assert "at most 2,000 characters" in fake_slack.wait_for("chat.postMessage")[0].body["text"]


def test_a_follow_up_in_the_thread_uses_the_history(make_app, fake_slack):
    app = make_app()
    dispatch(app, event_body(mention("How much is a solid oak worktop?", ts="1700000003.000100")))
    fake_slack.wait_for("chat.postMessage")
    follow = mention("and how heavy is a 3 m one?", ts="1700000003.000200", thread_ts="1700000003.000100")
    dispatch(app, event_body(follow))
    second = fake_slack.wait_for("chat.postMessage", 2)[1].body
    assert second["thread_ts"] == "1700000003.000100"
    assert "53 kg" in blocks_text(second["blocks"])


def test_feedback_is_recorded_against_the_answer(make_app, fake_slack, pipeline):
    app = make_app()
    dispatch(app, event_body(mention("how much is a walnut worktop?")))
    post = fake_slack.wait_for("chat.postMessage")[0].body
    answer_id = next(b for b in post["blocks"] if b["type"] == "actions")["elements"][1]["value"]
    thread = {"message": {"ts": "1800000000.000001", "thread_ts": "1700000000.000100"}}
    response = dispatch(
        app, block_action("verbatim_feedback_down", answer_id, **thread), "application/x-www-form-urlencoded"
    )
    assert response.status == 200
    fake_slack.wait_for("chat.postEphemeral")
    assert (pipeline.runlog.tail(1)[0].up, pipeline.runlog.tail(1)[0].down) == (0, 1)


def test_internal_document_is_quoted_in_a_staff_channel_but_not_in_a_public_one(make_app, fake_slack):
    app = make_app(public_channels=frozenset({"CPUB"}))
    question = "how much discount can a salesperson give without approval?"
    dispatch(app, event_body(mention(question, channel="CSTAFF", ts="1700000004.000100")))
    staff = fake_slack.wait_for("chat.postMessage")[0].body
    assert "Discount authority and supplier terms" in blocks_text(staff["blocks"])
    dispatch(app, event_body(mention(question, channel="CPUB", ts="1700000004.000200")))
    public = fake_slack.wait_for("chat.postMessage", 2)[1].body
    assert "Discount authority" not in blocks_text(public["blocks"])
    assert "Not in the knowledge base" in blocks_text(public["blocks"])


def test_apology_when_answering_fails(make_app, fake_slack, pipeline):
    pipeline.answerer = ScriptedAnswerer(AnswererError("the model server is down", 3))
    dispatch(make_app(), event_body(mention("how much is a walnut worktop?")))
    post = fake_slack.wait_for("chat.postMessage")[0].body
    assert "Sorry, something went wrong" in post["text"] and post["thread_ts"] == "1700000000.000100"


def ask_command(text: str, trigger_id: str = "t") -> str:
    """A signed-able /ask by U1 in C1."""
    return form(
        command="/ask",
        text=text,
        channel_id="C1",
        user_id="U1",
        team_id="T1",
        response_url="http://127.0.0.1:9/unused",
        trigger_id=trigger_id,
    )


def test_ask_command_answers_ephemerally_with_a_post_button(make_app, fake_slack):
    app = make_app()
    body = ask_command("how much is a walnut worktop?")
    assert dispatch(app, body, "application/x-www-form-urlencoded").status == 200
    ephemeral = fake_slack.wait_for("chat.postEphemeral")[0].body
    assert ephemeral["user"] == "U1" and "520 EUR" in ephemeral["text"]
    share = next(b for b in ephemeral["blocks"] if b["type"] == "actions")["elements"][0]
    assert fake_slack.calls("chat.postMessage") == []
    dispatch(app, block_action("verbatim_share", share["value"]), "application/x-www-form-urlencoded")
    posted = fake_slack.wait_for("chat.postMessage")[0].body
    assert posted["channel"] == "C1" and "520 EUR" in blocks_text(posted["blocks"])


def test_http_mode_accepts_signed_requests_and_rejects_bad_signatures(make_app, fake_slack):
    port, stop = start_http_server(make_app(), 0, "127.0.0.1")
    try:
        url = f"http://127.0.0.1:{port}/slack/events"
        body = event_body(mention("how much is a walnut worktop?"))
        bad = httpx.post(url, content=body, headers=signed_headers(body, secret="wrong"), timeout=WAIT)
        assert bad.status_code == 401
        good = httpx.post(url, content=body, headers=signed_headers(body), timeout=WAIT)
        assert good.status_code == 200
        fake_slack.wait_for("chat.postMessage")
        challenge = json.dumps({"type": "url_verification", "challenge": "abc", "token": "x"})
        verified = httpx.post(url, content=challenge, headers=signed_headers(challenge), timeout=WAIT)
        assert verified.json()["challenge"] == "abc"
    finally:
        stop.set()


# --- rendering ------------------------------------------------------------------------------------


def quote(text, k=1):
    return Quote(text, k, "d.md", "Doc", ("Sec",), k, 9)


def answered(*texts, discarded=0):
    statements = tuple(Statement(t, (quote(t, i),)) for i, t in enumerate(texts, 1))
    return Answer("a1", "q", "answered", None, statements, discarded, (), {}, "extractive")


def test_document_text_cannot_ping_the_channel_or_forge_a_link():
    message = messages(presenter.present(answered("Call <!channel> & see <https://evil.example|prices>")))[0]
    text = blocks_text(message.blocks)
    assert "<!channel>" not in text and "&lt;!channel&gt; &amp; see &lt;https://evil.example|prices&gt;" in text


def test_long_answers_are_split_within_slacks_limits():
    answer = answered(*[f"Statement {i} " + "x" * 1100 for i in range(40)], discarded=2)
    parts = messages(presenter.present(answer))
    assert len(parts) > 1
    for part in parts:
        assert len(part.blocks) <= BLOCK_LIMIT
        assert all(len(b["text"]["text"]) <= TEXT_LIMIT for b in part.blocks if b["type"] == "section")
        assert len(part.text) <= TEXT_LIMIT
    assert parts[-1].blocks[-1]["type"] == "actions"
    assert "2 quotes could not be verified and were left out" in blocks_text(parts[-1].blocks)


def test_question_text_drops_mentions_and_decodes_entities():
    assert (
        question_text("<@UBOT> price &amp; weight of <https://x.example|the table>?") == "price & weight of the table?"
    )
    assert escape("a<b>&c") == "a&lt;b&gt;&amp;c"


def test_fifty_events_at_once_are_each_answered_once(make_app, fake_slack, pipeline):
    # Answering waits at this gate until all fifty events are acknowledged. The acks therefore cannot have
    # waited for an answer, which no wall-clock bound on a loaded machine could show as surely.
    gate = threading.Event()
    ask = pipeline.ask

    def gated(*args, **kwargs):
        gate.wait(WAIT)
        return ask(*args, **kwargs)

    pipeline.ask = gated
    app = make_app()
    port, stop = start_http_server(app, 0, "127.0.0.1")
    try:
        url = f"http://127.0.0.1:{port}/slack/events"
        bodies = [event_body(mention("how much is a walnut worktop?", ts=f"1700000100.{i:06d}")) for i in range(50)]
        with httpx.Client(timeout=WAIT) as client:
            statuses = [client.post(url, content=b, headers=signed_headers(b)).status_code for b in bodies]
        assert statuses == [200] * 50 and fake_slack.calls("chat.postMessage") == []
        gate.set()
        fake_slack.wait_for("chat.postMessage", 50, timeout=2 * WAIT)
    finally:
        gate.set()
        stop.set()
    drain(app)  # a fifty-first post, had any event been answered twice, has been made by now
    posts = fake_slack.calls("chat.postMessage")
    assert sorted(p.body["thread_ts"] for p in posts) == sorted(f"1700000100.{i:06d}" for i in range(50))


def test_an_answer_is_not_posted_to_a_channel_that_became_public_since(make_app, fake_slack):
    """Asked with /ask in a staff channel; by the time "Post to channel" is pressed, the channel is public."""
    body = form(
        command="/ask",
        text="what discount may sales staff give?",
        channel_id="C1",
        user_id="U1",
        team_id="T1",
        response_url="http://127.0.0.1:9/unused",
        trigger_id="t",
    )
    dispatch(make_app(), body, "application/x-www-form-urlencoded")
    ephemeral = fake_slack.wait_for("chat.postEphemeral")[0].body
    share = next(b for b in ephemeral["blocks"] if b["type"] == "actions")["elements"][0]
    now_public = make_app(public_channels=frozenset({"C1"}))
    dispatch(now_public, block_action("verbatim_share", share["value"]), "application/x-www-form-urlencoded")
    refusal = fake_slack.wait_for("chat.postEphemeral", 2)[1].body
    assert refusal["text"] == presenter.SHARE_REFUSED
    assert fake_slack.calls("chat.postMessage") == []


def test_a_replayed_ask_command_is_answered_once(make_app, fake_slack):
    app = make_app()
    body = ask_command("how much is a walnut worktop?", trigger_id="13345224609.738474920.8088930838d88f008e0")
    assert dispatch(app, body, "application/x-www-form-urlencoded").status == 200
    fake_slack.wait_for("chat.postEphemeral")
    assert dispatch(app, body, "application/x-www-form-urlencoded").status == 200  # the same signed request again
    drain(app)  # a second answer, had the replay started one, has been posted by now
    assert len(fake_slack.calls("chat.postEphemeral")) == 1


def test_a_run_log_that_cannot_be_written_gets_the_apology_not_advice_or_a_path(
    make_app, fake_slack, pipeline, monkeypatch, caplog
):
    def unwritable(*args, **kwargs):
        raise RunLogError("The run log /srv/verbatim/var/runlog.sqlite3 can't be written (disk I/O error).")

    monkeypatch.setattr(pipeline.runlog, "record", unwritable)
    app = make_app()
    dispatch(app, ask_command("how much is a walnut worktop?"), "application/x-www-form-urlencoded")
    told = fake_slack.wait_for("chat.postEphemeral")[0].body["text"]
    drain(app)
    assert told == f"⚠️ {presenter.APOLOGY}"
    assert "/srv/verbatim" in caplog.text, "the operator's log names the run log"
