"""Answers as Slack Block Kit messages: quotes with captions, or the refusal in its own style."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from bot import presenter
from bot.asking import split
from bot.presenter import Presentation

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


# Slack has no escape for its formatting marks (its docs give one only for &, < and >), and a zero-width
# space beside a mark makes Slack format more, not less: it counts as a word break. So in a quote each mark
# that could open or close formatting becomes a lookalike, as jsx-slack's <Escape> does. Slack formats only
# at a word's edge, so a mark between two letters or digits stays as written (snake_case, most links); a
# backtick is always replaced. A line that starts with > (or the fullwidth ＞) gets an invisible soft hyphen
# first, which keeps it from opening a quote of its own.
LOOKALIKES = {"*": "\u2217", "_": "\u02cd", "~": "\u223c", "`": "\u02cb"}  # ∗ ˍ ∼ ˋ
SOFT_HYPHEN = "\u00ad"
_MARK = re.compile(r"`|(?<![^\W_])[*_~]|[*_~](?![^\W_])")
QUOTED = "&gt; "  # how each line of a quote starts


def literal(text: str) -> str:
    """`text` with nothing Slack's mrkdwn would format: it reads the same, and shows as written (then `escape` it)."""
    text = _MARK.sub(lambda mark: LOOKALIKES[mark.group()], text)
    return SOFT_HYPHEN + text if text.lstrip().startswith((">", "\uff1e")) else text


def _quoted_line(text: str) -> str:
    return QUOTED + escape(literal(text)) if text.strip() else QUOTED.rstrip()


def _section(mrkdwn: str) -> list[Block]:
    return [{"type": "section", "text": {"type": "mrkdwn", "text": part}} for part in split(mrkdwn, TEXT_LIMIT)]


def _context(mrkdwn: str) -> Block:
    return {"type": "context", "elements": [{"type": "mrkdwn", "text": mrkdwn[:TEXT_LIMIT]}]}


def _quote(text: str) -> list[Block]:
    """Every line quoted, so no line of a document can step out of the quote and pass for the bot's own words.

    A line longer than a section is cut into lines that each fit one, with room for its line end, so
    the sections are cut between quoted lines and none starts unquoted.
    """
    lines = [
        _quoted_line(piece)
        for line in text.splitlines()
        for piece in split(line, TEXT_LIMIT - 1, size=lambda piece: len(_quoted_line(piece)))
    ]
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


def share_actions(answer_id: str, label: str = presenter.SHARE_LABEL) -> Block:
    return _buttons(f"share:{answer_id}", ("verbatim_share", label, answer_id))


def answer_blocks(shown: Presentation) -> tuple[list[Block], str]:
    """The answer's blocks (before splitting into messages) and its plain-text fallback, both escaped."""
    blocks: list[Block] = []
    if shown.style in ("error", "language"):
        icon = "⚠️" if shown.style == "error" else "🌐"
        blocks.extend(_section(f"{icon} {escape(shown.parts[0].text)}"))
        return blocks, escape(shown.plain)
    if shown.style == "refusal":
        blocks.extend(_section(f"🚫 *{escape(shown.heading)}*\n{escape(shown.parts[0].text)}"))
        blocks.extend(_context(escape(part.text)) for part in shown.parts[1:])
        return blocks, escape(shown.plain)
    for part in shown.parts:
        if part.kind == "quote":
            blocks.extend(_quote(part.text))
        elif part.kind == "caption":
            blocks.append(_context(f"📄 {escape(part.text)}"))
        elif part.kind == "note":
            blocks.append(_context(f"⚠️ {escape(part.text)}"))
        elif part.kind == "calculation":
            blocks.extend(_section(f"*{escape(part.text)}*"))
        elif part.kind in ("source", "assumption"):
            blocks.append(_context(f"{'📄' if part.kind == 'source' else '↳'} {escape(part.text)}"))
        else:
            blocks.extend(_section(escape(part.text)))
    return blocks, escape(shown.plain)


def messages(shown: Presentation, actions: list[Block] | None = None) -> list[Message]:
    """One or more messages within Slack's limits; the action buttons (👍 / 👎 unless given) go on the last one."""
    blocks, fallback = answer_blocks(shown)
    if actions is None:
        actions = [feedback_actions(shown.answer_id)] if shown.feedback else []
    room = BLOCK_LIMIT - len(actions)
    groups = [blocks[i : i + room] for i in range(0, len(blocks), room)] or [[]]
    groups[-1] = groups[-1] + actions
    texts = split(fallback, TEXT_LIMIT)
    return [Message(group, texts[i] if i < len(texts) else "(continued)") for i, group in enumerate(groups)]
