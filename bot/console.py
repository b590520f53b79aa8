"""The terminal surface: renders an Answer as text, and the interactive `verbatim chat`."""

from __future__ import annotations

import sys
import textwrap
import uuid
from typing import TextIO

from core.answers import REFUSAL_HEADING, Answer, discarded_note
from core.errors import VerbatimError
from core.knowledge import SCOPES
from core.pipeline import Pipeline, clean_question

REFUSAL_TEXT = "The documents don't cover this question, so there is nothing to quote as an answer."
ERROR_TEXT = "Sorry, something went wrong while answering. The error was logged; please try again in a moment."


class Style:
    """ANSI colours on a terminal, plain text elsewhere."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    def __call__(self, code: str, text: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if self.enabled else text


def render(answer: Answer, color: bool = False, width: int = 88) -> str:
    """An answer as terminal text: quotes with captions, or the refusal in its own style."""
    s = Style(color)
    lines: list[str] = []
    if answer.reason == "error":
        lines.append(s("1;33", "⚠  Sorry"))
        lines.append(f"   {ERROR_TEXT}")
        if answer.error:
            lines.append(s("2", f"   ({answer.error})"))
        return "\n".join(lines)
    if not answer.answered:
        lines.append(s("1;35", f"🚫 {REFUSAL_HEADING}"))
        lines.append(f"   {REFUSAL_TEXT}")
        if answer.closest:
            lines.append(s("2", f"   Closest sections found: {'; '.join(answer.closest)}"))
        return "\n".join(lines)
    lines.append(s("1;32", "✅ From the documents"))
    for statement in answer.statements:
        if not statement.restates_its_quote:
            lines.extend(textwrap.wrap(statement.text, width, initial_indent="   ", subsequent_indent="   "))
        for quote in statement.quotes:
            for paragraph in quote.text.splitlines() or [""]:
                wrapped = textwrap.wrap(paragraph, width - 6) or [""]
                lines.extend(s("36", f"   │ {part}") for part in wrapped)
            lines.append(s("2", f"     📄 {quote.caption}"))
    if answer.discarded:
        lines.append(s("2;33", f"   ({discarded_note(answer.discarded)})"))
    return "\n".join(lines)


def chat(pipeline: Pipeline, audience: str, out: TextIO, inp: TextIO | None = None) -> int:
    """An interactive conversation on the same pipeline as the bots; follow-ups keep context."""
    inp = inp or sys.stdin
    color = out.isatty()
    conversation = f"console:{uuid.uuid4().hex}"
    print(
        f"Ask about the documents in {pipeline.settings.knowledge_dir} ({audience} audience). "
        "Follow-up questions keep the conversation; '/new' starts another, '/quit' or Ctrl-D leaves.",
        file=out,
    )
    while True:
        if inp.isatty():
            try:
                line = input("› ")
            except EOFError:
                print(file=out)
                return 0
        else:
            out.write("› ")
            out.flush()
            line = inp.readline()
            if not line:
                print(file=out)
                return 0
        command = line.strip().lower()
        if command in ("/quit", "/exit", "quit", "exit"):
            return 0
        if command == "/new":
            conversation = f"console:{uuid.uuid4().hex}"
            print("New conversation.", file=out)
            continue
        if not command:
            continue
        try:
            question = clean_question(line)
        except VerbatimError as exc:
            print(f"   {exc}", file=out)
            continue
        answer = pipeline.ask(question, SCOPES[audience], surface="console", conversation=conversation)
        print(render(answer, color), file=out)
        print(file=out)
