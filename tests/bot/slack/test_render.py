"""Slack messages: the notification text is escaped like the blocks, so a document can't ping or forge a link."""

import pytest

from core import KnowledgeBase, Pipeline, Settings
from core.common.answers import Claim, Draft
from core.measuring.fakes import ScriptedAnswerer, WordEmbedder
from tests.bot.slack.conftest import dispatch, event_body, mention

HOSTILE = "Big news <!channel>: ask <@U0BADGUY> at <https://evil.example|our shop> about the spring offer today."


@pytest.fixture
def hostile_pipeline(tmp_path, write_kb):
    """A document whose text, and a model whose statement, try to ping everyone and forge a link."""
    folder = write_kb({"offers.md": f"# Offers\n\n{HOSTILE}\n"})
    settings = Settings(knowledge_dir=folder, data_dir=tmp_path / "hostile-data", min_similarity=0.1)
    kb = KnowledgeBase(settings, WordEmbedder())
    kb.sync()
    statement = "Everyone <!here> should ask <https://evil.example|at our shop>"
    return Pipeline(settings, kb, ScriptedAnswerer(Draft(True, (Claim(statement, 1, HOSTILE),))))


def test_the_notification_text_can_never_ping_or_forge_a_link(make_app, fake_slack, hostile_pipeline):
    dispatch(make_app(the_pipeline=hostile_pipeline), event_body(mention("spring offer at the shop?")))
    post = fake_slack.wait_for("chat.postMessage")[0].body
    for raw in ("<!channel>", "<!here>", "<@U0BADGUY>", "<https://evil.example|"):
        assert raw not in post["text"], f"{raw} reached chat.postMessage's text"
        assert raw not in str(post["blocks"])
    assert "&lt;!channel&gt;" in post["text"] and "&lt;!here&gt;" in post["text"]
    assert "&lt;https://evil.example|our shop&gt;" in post["text"]
