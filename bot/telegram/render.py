"""Answers as Telegram HTML: quotes in <blockquote>, captions in italics, the refusal in its own style."""

from __future__ import annotations

import html
from dataclasses import dataclass

from bot.asking import split
from bot.presenter import Presentation

LIMIT = 4096  # Telegram's limit for one message's text


@dataclass(frozen=True)
class Piece:
    """A unit that is never split across messages unless it alone is too long: tags wrap plain text."""

    text: str
    open: str = ""
    close: str = ""

    def html(self, text: str | None = None) -> str:
        return f"{self.open}{html.escape(self.text if text is None else text, quote=False)}{self.close}"

    def size(self, text: str) -> int:
        """How long a part of this piece's text is once sent: escaped and in its tags."""
        return len(self.html(text))


def pieces(shown: Presentation) -> list[Piece]:
    if shown.style in ("error", "language"):
        return [Piece(f"{'⚠️' if shown.style == 'error' else '🌐'} {shown.parts[0].text}")]
    if shown.style == "refusal":
        out = [Piece("🚫 "), Piece(shown.heading, "<b>", "</b>"), Piece(f"\n{shown.parts[0].text}")]
        out.extend(Piece(f"\n\n{part.text}", "<i>", "</i>") for part in shown.parts[1:])
        return out
    out = []
    for part in shown.parts:
        if part.kind == "quote":
            out.append(Piece(part.text, "<blockquote>", "</blockquote>"))
        elif part.kind == "caption":
            out.extend([Piece(f"📄 {part.text}", "<i>", "</i>"), Piece("\n\n")])
        elif part.kind == "note":
            out.append(Piece(f"⚠️ {part.text}", "<i>", "</i>"))
        elif part.kind == "calculation":
            out.extend([Piece(part.text, "<b>", "</b>"), Piece("\n")])
        elif part.kind in ("source", "assumption"):
            out.extend([Piece(f"{'📄' if part.kind == 'source' else '↳'} {part.text}", "<i>", "</i>"), Piece("\n")])
        else:
            out.append(Piece(part.text + "\n"))
    return out


def messages(shown: Presentation) -> list[str]:
    """The answer as HTML messages of at most 4,096 characters, split between pieces, tags intact."""
    out: list[str] = []
    current = ""
    for piece in pieces(shown):
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
            # A piece too long for one message alone: cut into well-formed parts, each wrapped in its tags.
            *full, current = (piece.html(t) for t in split(piece.text, LIMIT, piece.size))
            out.extend(full)
    if current.strip():
        out.append(current.rstrip())
    return out
