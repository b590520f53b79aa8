"""Answers as Slack Block Kit messages: quotes with captions, or the refusal in its own style."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.answers import REFUSAL_HEADING, Answer, discarded_note

REFUSAL_TEXT = "The documents don't cover this question, so I won't guess."
APOLOGY = "Sorry, something went wrong while I was answering. It has been logged; please try again in a minute."
HINT = "Ask me a question after the mention, for example: _@Verbatim how much is delivery 30 km away?_"
TEXT_LIMIT = 3000  # Slack's limit for one section's text
BLOCK_LIMIT = 50  # Slack's limit of blocks per message

Block = dict[str, Any]


@dataclass(frozen=True)
class Message:
    blocks: list[Block]
    text: str  # the plain fallback for notifications and screen readers


def escape(text: str) -> str:
    """Slack's three control characters, so a document can never mention @channel or forge a link."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _chunks(text: str, limit: int) -> list[str]:
    """Split text into pieces of at most `limit` characters, at line ends or spaces when possible."""
    pieces = []
    while len(text) > limit:
        cut = text.rfind("\n", 0, limit)
        if cut <= 0:
            cut = text.rfind(" ", 0, limit)
        if cut <= 0:
            cut = limit
        pieces.append(text[:cut])
        text = text[cut:].lstrip("\n ")
    pieces.append(text)
    return pieces


def _section(mrkdwn: str) -> list[Block]:
    return [{"type": "section", "text": {"type": "mrkdwn", "text": part}} for part in _chunks(mrkdwn, TEXT_LIMIT)]


def _context(mrkdwn: str) -> Block:
    return {"type": "context", "elements": [{"type": "mrkdwn", "text": mrkdwn[:TEXT_LIMIT]}]}


def _quote(text: str) -> list[Block]:
    lines = [f"&gt; {escape(line)}" if line.strip() else "&gt;" for line in text.splitlines()]
    return _section("\n".join(lines))


def _buttons(block_id: str, *buttons: tuple[str, str, str]) -> Block:
    """An actions block of (action_id, label, value) buttons."""
    return {
        "type": "actions",
        "block_id": block_id,
        "elements": [
            {"type": "button", "action_id": action, "text": {"type": "plain_text", "text": label}, "value": value}
            for action, label, value in buttons
        ],
    }


def feedback_actions(answer_id: str) -> Block:
    return _buttons(
        f"feedback:{answer_id}",
        ("verbatim_feedback_up", "👍", answer_id),
        ("verbatim_feedback_down", "👎", answer_id),
    )


def share_actions(answer_id: str) -> Block:
    return _buttons(f"share:{answer_id}", ("verbatim_share", "Post to channel", answer_id))


def answer_blocks(answer: Answer) -> tuple[list[Block], str]:
    """The answer's blocks (before splitting into messages) and its plain-text fallback."""
    if answer.reason == "error":
        return _section(f"⚠️ {APOLOGY}"), APOLOGY
    if not answer.answered:
        blocks = _section(f"🚫 *{REFUSAL_HEADING}*\n{REFUSAL_TEXT}")
        if answer.closest:
            blocks.append(_context("Closest sections I found: " + escape("; ".join(answer.closest))))
        return blocks, f"{REFUSAL_HEADING}. {REFUSAL_TEXT}"
    blocks = []
    fallback = []
    for statement in answer.statements:
        if not statement.restates_its_quote:
            blocks.extend(_section(escape(statement.text)))
            fallback.append(statement.text)
        for quote in statement.quotes:
            blocks.extend(_quote(quote.text))
            blocks.append(_context(f"📄 {escape(quote.caption)}"))
            fallback.append(f"“{' '.join(quote.text.split())}” ({quote.caption})")
    if answer.discarded:
        blocks.append(_context(f"⚠️ {discarded_note(answer.discarded)}"))
    return blocks, "\n".join(fallback)


def messages(answer: Answer, actions: list[Block] | None = None) -> list[Message]:
    """One or more messages within Slack's limits; the action buttons go on the last one."""
    blocks, fallback = answer_blocks(answer)
    if actions is None:
        actions = [] if answer.reason == "error" else [feedback_actions(answer.id)]
    room = BLOCK_LIMIT - len(actions)
    groups = [blocks[i : i + room] for i in range(0, len(blocks), room)] or [[]]
    groups[-1] = groups[-1] + actions
    texts = _chunks(fallback, TEXT_LIMIT)
    return [Message(group, texts[i] if i < len(texts) else "(continued)") for i, group in enumerate(groups)]
