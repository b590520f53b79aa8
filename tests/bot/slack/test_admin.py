"""`/verbatim` in Slack through the real Bolt app and the fake Web API, and the weekly digest."""

import logging
import time

import pytest

from bot.presenter import reports
from bot.slack import build_app, digest
from bot.slack.config import SlackSettings, slack_settings
from core import ConfigError
from core.common.questions import SCOPES
from tests.bot.slack.conftest import BOT_TOKEN, SECRET, dispatch, drain, form
from tests.fakes import Reply

ADMIN = "UADMIN1"


@pytest.fixture
def admin_app(fake_slack, pipeline):
    settings = SlackSettings(
        bot_token=BOT_TOKEN,
        mode="http",
        signing_secret=SECRET,
        api_url=fake_slack.server.url + "/api/",
        admin_users=frozenset({ADMIN}),
    )
    return build_app(settings, pipeline)


def command(app, text, user):
    body = form(
        command="/verbatim",
        text=text,
        channel_id="C1",
        user_id=user,
        team_id="T1",
        response_url="http://127.0.0.1:9/unused",
        trigger_id="t",
    )
    return dispatch(app, body, "application/x-www-form-urlencoded")


@pytest.mark.parametrize("text", ["status", "reindex", "gaps", ""])
def test_everyone_else_gets_one_line_and_the_attempt_is_logged(admin_app, fake_slack, caplog, text):
    with caplog.at_level(logging.WARNING):
        response = command(admin_app, text, "USOMEONE")
    drain(admin_app)
    assert response.status == 200 and reports.NOT_ALLOWED in response.body
    assert fake_slack.calls("chat.postEphemeral") == [] and fake_slack.calls("chat.postMessage") == []
    refused = [r.getMessage() for r in caplog.records if "refused" in r.getMessage()]
    assert refused and "USOMEONE" not in refused[0]  # logged, with the id hashed


def test_status_for_an_admin(admin_app, fake_slack, pipeline):
    pipeline.ask("do you gift wrap orders?", SCOPES["internal"], "slack")
    response = command(admin_app, "status", ADMIN)
    assert response.status == 200
    text = fake_slack.wait_for("chat.postEphemeral")[0].body
    assert text["user"] == ADMIN and text["channel"] == "C1"
    assert "indexed, none failed" in text["text"] and "Last 7 days: 1 asked, 1 refused (100%)" in text["text"]


def test_reindex_for_an_admin_replies_with_the_sync_report(admin_app, fake_slack):
    response = command(admin_app, "reindex", ADMIN)
    assert reports.REINDEX_STARTED in response.body
    text = fake_slack.wait_for("chat.postEphemeral")[0].body["text"]
    assert text.startswith("Re-read the documents: 0 added, 0 updated,") and "0 failed" in text


def test_gaps_for_an_admin_lists_the_refused_topics(admin_app, fake_slack, pipeline):
    for question in ("do you gift wrap orders?", "is gift wrapping available?", "can I pay with PayPal?"):
        pipeline.ask(question, SCOPES["internal"], "slack")
    command(admin_app, "gaps", ADMIN)
    text = fake_slack.wait_for("chat.postEphemeral")[0].body["text"]
    lines = text.splitlines()
    assert lines[0] == f"{reports.GAPS_HEADING}:"
    assert lines[1].startswith("• 2× “") and "gift" in lines[1] and "PayPal" in lines[2]


def test_an_unknown_subcommand_shows_the_usage(admin_app, fake_slack):
    response = command(admin_app, "explode", ADMIN)
    drain(admin_app)
    assert "/verbatim status" in response.body and fake_slack.calls("chat.postEphemeral") == []


def test_admin_ids_are_checked_at_start_up():
    env = {"SLACK_BOT_TOKEN": "xoxb-1-real", "SLACK_MODE": "http", "SLACK_SIGNING_SECRET": "s"}
    assert slack_settings({**env, "SLACK_ADMIN_USERS": "U01, U02 "}).admin_users == {"U01", "U02"}
    with pytest.raises(ConfigError, match="SLACK_ADMIN_USERS must list Slack user ids"):
        slack_settings({**env, "SLACK_ADMIN_USERS": "@alice"})
    assert slack_settings({**env, "VERBATIM_DIGEST_CHANNEL": "C0DIGEST"}).digest_channel == "C0DIGEST"
    with pytest.raises(ConfigError, match="VERBATIM_DIGEST_CHANNEL must be a staff channel"):
        slack_settings({**env, "VERBATIM_DIGEST_CHANNEL": "C0PUB", "SLACK_PUBLIC_CHANNELS": "C0PUB"})


# --- the weekly digest ------------------------------------------------------------------------------


def test_due_once_a_week():
    assert digest.due(None, 1000.0)
    assert not digest.due(1000.0, 1000.0 + digest.WEEK - 1)
    assert digest.due(1000.0, 1000.0 + digest.WEEK)


def test_the_digest_posts_once_a_week_and_survives_a_restart(admin_app, fake_slack, pipeline):
    pipeline.ask("do you gift wrap orders?", SCOPES["internal"], "slack")
    assert pipeline.store.state.stamped(digest.KEY) is None  # never sent
    start = 1_900_000_000.0
    # The question was asked "now", which is before this clock: the digest reads the week before `start`.
    assert digest.tick(admin_app.client, pipeline, "C0DIGEST", now=start)
    assert not digest.tick(admin_app.client, pipeline, "C0DIGEST", now=start + 3600)
    assert not digest.tick(admin_app.client, pipeline, "C0DIGEST", now=start + digest.WEEK - 1)
    assert digest.tick(admin_app.client, pipeline, "C0DIGEST", now=start + digest.WEEK)
    posts = fake_slack.calls("chat.postMessage")
    assert len(posts) == 2 and posts[0].body["channel"] == "C0DIGEST"
    assert pipeline.store.state.stamped(digest.KEY) == start + digest.WEEK


def test_the_digest_names_the_weeks_refused_topics(admin_app, fake_slack, pipeline):
    for question in ("do you gift wrap orders?", "is gift wrapping available?"):
        pipeline.ask(question, SCOPES["internal"], "slack")
    assert digest.tick(admin_app.client, pipeline, "C0DIGEST", now=time.time() + 60)
    text = fake_slack.calls("chat.postMessage")[0].body["text"]
    assert text.startswith(reports.DIGEST_HEADING) and "2× “" in text and "gift" in text


def test_only_one_of_two_processes_posts_a_due_digest(admin_app, fake_slack, pipeline):
    state = pipeline.store.state
    assert state.claim(digest.KEY, digest.WEEK, 5_000_000.0)
    assert not state.claim(digest.KEY, digest.WEEK, 5_000_000.0)  # the other process, the same moment
    assert not digest.tick(admin_app.client, pipeline, "C0DIGEST", now=5_000_000.0 + 60)
    assert fake_slack.calls("chat.postMessage") == []


def test_in_a_channel_the_bot_is_not_in_the_reply_goes_to_the_response_url(admin_app, fake_slack):
    fake_slack.server.script.append(Reply(200, {"ok": False, "error": "channel_not_found"}))
    body = form(
        command="/verbatim",
        text="status",
        channel_id="CNOTIN",
        user_id=ADMIN,
        team_id="T1",
        response_url=fake_slack.server.url + "/commands/response",
        trigger_id="t",
    )
    dispatch(admin_app, body, "application/x-www-form-urlencoded")
    reply = fake_slack.wait_for("response")[0].body
    assert reply["response_type"] == "ephemeral" and "indexed" in reply["text"]
