"""Answers as Telegram HTML: quotes in <blockquote>, captions in italics, the refusal in its own style."""

from __future__ import annotations

import html
from dataclasses import dataclass

from core.answers import REFUSAL_HEADING, Answer, discarded_note

LIMIT = 4096  # Telegram's limit for one message's text
REFUSAL_TEXT = "Our documents don't cover this question, so I won't guess."
APOLOGY = "Sorry, something went wrong while I was answering. Please try again in a minute."


@dataclass(frozen=True)
class Piece:
    """A unit that is never split across messages unless it alone is too long: tags wrap plain text."""

    text: str
    open: str = ""
    close: str = ""

    def html(self, text: str | None = None) -> str:
        return f"{self.open}{html.escape(self.text if text is None else text, quote=False)}{self.close}"


def pieces(answer: Answer) -> list[Piece]:
    if answer.reason == "error":
        return [Piece(f"⚠️ {APOLOGY}")]
    if not answer.answered:
        out = [Piece("🚫 "), Piece(REFUSAL_HEADING, "<b>", "</b>"), Piece(f"\n{REFUSAL_TEXT}")]
        if answer.closest:
            out.append(Piece(f"\n\nClosest sections I found: {'; '.join(answer.closest)}", "<i>", "</i>"))
        return out
    out = []
    for statement in answer.statements:
        if not statement.restates_its_quote:
            out.append(Piece(statement.text + "\n"))
        for quote in statement.quotes:
            out.append(Piece(quote.text, "<blockquote>", "</blockquote>"))
            out.append(Piece(f"📄 {quote.caption}", "<i>", "</i>"))
            out.append(Piece("\n\n"))
    if answer.discarded:
        out.append(Piece(f"⚠️ {discarded_note(answer.discarded)}", "<i>", "</i>"))
    return out


def _split(piece: Piece, room: int) -> list[str]:
    """A piece too long for one message, cut into well-formed parts that each fit `room`."""
    parts, text = [], piece.text
    while text:
        size = len(text)
        while len(piece.html(text[:size])) > room:
            size = max(1, size * 3 // 4)
        cut = text.rfind(" ", 0, size) if size < len(text) else size
        cut = cut if cut > 0 else size
        parts.append(piece.html(text[:cut]))
        text = text[cut:].lstrip(" ")
    return parts


def messages(answer: Answer) -> list[str]:
    """The answer as HTML messages of at most 4,096 characters, split between pieces, tags intact."""
    out: list[str] = []
    current = ""
    for piece in pieces(answer):
        rendered = piece.html()
        if len(current) + len(rendered) <= LIMIT:
            current += rendered
            continue
        if current.strip():
            out.append(current.rstrip())
        current = ""
        if len(rendered) <= LIMIT:
            current = rendered
        else:
            *full, current = _split(piece, LIMIT)
            out.extend(full)
    if current.strip():
        out.append(current.rstrip())
    return out
