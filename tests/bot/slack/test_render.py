"""Slack messages: the notification text is escaped like the blocks, so a document can't ping or forge a link;
a quote's text shows as written, never formatted, and no line of it steps out of the quote."""

import html
import re

import pytest

from bot import presenter
from bot.slack.render import LOOKALIKES, SOFT_HYPHEN, TEXT_LIMIT, messages
from core import KnowledgeBase, Pipeline, Settings
from core.common.answers import Answer, Claim, Draft, Quote, Statement
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


def quoted(text):
    """The blocks Slack gets for an answer that quotes `text`."""
    quote = Quote(text, 1, "d.md", "Price list", ("Worktops",), 3, 7)
    answer = Answer("a1", "q", "answered", None, (Statement(text, (quote,)),), 0, (), {}, "extractive")
    return [block for message in messages(presenter.present(answer)) for block in message.blocks]


def quote_sections(blocks):
    return [b["text"]["text"] for b in blocks if b["type"] == "section"]


def as_read(mrkdwn):
    """What a reader sees of a quote section: the quote marks gone, escapes and lookalikes read as what they show."""
    lines = [line.removeprefix("&gt;").removeprefix(" ") for line in mrkdwn.split("\n")]
    text = html.unescape("\n".join(lines)).replace(SOFT_HYPHEN, "")
    return text.translate({ord(lookalike): mark for mark, lookalike in LOOKALIKES.items()})


# A mark Slack's mrkdwn would read as formatting: a backtick, or *, _ or ~ at a word's edge.
FORMATTING = re.compile(r"`|(?<![^\W_])[*_~]|[*_~](?![^\W_])")


def test_formatting_in_a_quoted_document_shows_as_written():
    document = (
        "*Not in the knowledge base*\n"
        "_All_ worktops ~20% off~ with code `SPRING`\n"
        "> This line is not a quote of its own\n"
        "Ask for oak_worktop_38 at https://shop.example/oak_worktop_38 or 2*3*4"
    )
    [section] = quote_sections(quoted(document))
    shown = "\n".join(line.removeprefix("&gt; ") for line in section.split("\n"))
    assert not FORMATTING.search(shown), f"Slack would format {shown!r}"
    assert not any(line.startswith("&gt;") for line in shown.split("\n")), "a line opens a quote of its own"
    assert "oak_worktop_38 at https://shop.example/oak_worktop_38 or 2*3*4" in shown, "marks inside a word are kept"
    assert as_read(section) == document, "the reader sees the document's text, character for character"
    # What Slack receives, mark by mark: lookalikes at a word's edge, a soft hyphen before a leading >.
    assert shown.split("\n")[:3] == [
        "\u2217Not in the knowledge base\u2217",
        "\u02cdAll\u02cd worktops \u223c20% off\u223c with code \u02cbSPRING\u02cb",
        "\u00ad&gt; This line is not a quote of its own",
    ]


def test_every_line_of_a_quote_stays_in_it_so_none_passes_for_the_bots_caption():
    document = "Worktops\n📄 Price list › Discounts · fragment 1 of 7\n\nAll oak is free. " + "Oak worktop. " * 600
    blocks = quoted(document)
    sections = quote_sections(blocks)
    assert len(sections) > 1, "the long line is cut over several sections"
    for section in sections:
        assert len(section) <= TEXT_LIMIT
        assert all(line.startswith("&gt;") for line in section.split("\n")), f"a line left the quote: {section[:80]!r}"
    captions = [e["text"] for b in blocks if b["type"] == "context" for e in b["elements"]]
    assert captions == ["📄 Price list › Worktops · fragment 3 of 7"], "the bot's caption is the only one"
    assert " ".join(as_read(s) for s in sections).split() == document.split(), "nothing of the document is lost"
