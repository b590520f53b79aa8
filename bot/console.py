"""The terminal surface: renders an Answer as text, and the interactive `verbatim chat`."""

from __future__ import annotations

import contextlib
import sys
import textwrap
import uuid
from typing import TextIO

from bot import presenter
from bot.asking import Asker, Notice
from bot.presenter import Presentation
from core import SCOPES, Answer, Pipeline

_MARK = {"answer": ("1;32", "✅"), "refusal": ("1;35", "🚫"), "error": ("1;33", "⚠ "), "language": ("1;34", "🌐")}


class Style:
    """ANSI colours on a terminal, plain text elsewhere."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    def __call__(self, code: str, text: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if self.enabled else text


def render(answer: Answer, color: bool = False, width: int = 88, shown: Presentation | None = None) -> str:
    """An answer as terminal text: quotes with captions, or the refusal in its own style.

    `shown` is the answer's presentation, when the caller has it already.
    """
    s = Style(color)
    shown = shown or presenter.present(answer)
    code, mark = _MARK[shown.style]
    lines = [s(code, f"{mark} {shown.heading}")]
    for part in shown.parts:
        if part.kind == "quote":
            for paragraph in part.text.splitlines() or [""]:
                wrapped = textwrap.wrap(paragraph, width - 6) or [""]
                lines.extend(s("36", f"   │ {piece}") for piece in wrapped)
        elif part.kind == "caption":
            lines.append(s("2", f"     📄 {part.text}"))
        elif part.kind == "note":
            lines.append(s("2;33" if shown.style == "answer" else "2", f"   ({part.text})"))
        elif part.kind == "calculation":
            lines.append(s("1", f"   {part.text}"))
        elif part.kind in ("source", "assumption"):
            text = f"{'📄' if part.kind == 'source' else '↳'} {part.text}"
            wrapped = textwrap.wrap(text, width - 5, initial_indent="     ", subsequent_indent="       ")
            lines.extend(s("2", piece) for piece in wrapped)
        else:
            lines.extend(textwrap.wrap(part.text, width, initial_indent="   ", subsequent_indent="   "))
    if answer.reason == "error" and answer.error:  # the operator at the terminal may see why
        lines.append(s("2", f"   ({answer.error})"))
    return "\n".join(lines)


def chat(pipeline: Pipeline, audience: str, out: TextIO, inp: TextIO | None = None) -> int:
    """An interactive conversation on the same pipeline as the bots; follow-ups keep context."""
    inp = inp or sys.stdin
    color = out.isatty()
    conversation = f"console:{uuid.uuid4().hex}"
    asker = Asker(pipeline, "console")
    print(
        f"Ask about the documents in {pipeline.settings.knowledge_dir} ({audience} audience). "
        "Follow-up questions keep the conversation; '/new' starts another, '/quit' or Ctrl-D leaves.",
        file=out,
    )
    if inp.isatty():
        _line_editing()
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
        question = asker.admit(line)
        if isinstance(question, Notice):
            print(f"   {question.detail}", file=out)  # the operator's own terminal: core's sentence as it is
            continue
        # Not asker.reply: a failure ends the session with its sentence, as every `verbatim` command does.
        reply = asker.answer(question, SCOPES[audience], conversation)
        print(render(reply.answer, color, shown=reply.shown), file=out)
        print(file=out)


def _line_editing() -> None:
    """Arrow keys, history (up/down) and Ctrl-R in input(), as in any shell: importing readline is what turns
    them on. Without it (some minimal Pythons) the keys type escape codes, which clean_question strips."""
    with contextlib.suppress(ImportError):  # depends on how Python was built
        import readline  # noqa: F401
