"""What every `verbatim` command group shares: escaped terminal text, the progress bar, the folder options."""

from __future__ import annotations

import argparse
import unicodedata
from typing import TextIO

from core import (
    FragmentProgress,
)

# Bidirectional overrides and isolates reorder what a terminal shows, so they are escaped like control characters.
_BIDI = frozenset(map(chr, [*range(0x202A, 0x202F), *range(0x2066, 0x206A)]))


def printable(text: str) -> str:
    """Text with control characters shown as escapes (ESC as \\x1b): a stored question cannot drive the terminal."""
    return "".join(
        ch.encode("unicode_escape").decode("ascii") if unicodedata.category(ch) == "Cc" or ch in _BIDI else ch
        for ch in text
    )


class Bar:
    """A one-line progress bar: files done of all; inside a document of more than one batch, its
    fragments, rate and time left."""

    WIDTH = 24

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.file = (0, 0, "")

    def _draw(self, done: int, total: int, name: str, detail: str = "") -> None:
        filled = self.WIDTH * done // max(total, 1)
        self.stream.write(
            f"\r[{'#' * filled}{'.' * (self.WIDTH - filled)}] {done}/{total} {printable(name)[:40]:<40} {detail:<44}"
        )
        self.stream.flush()

    def __call__(self, done: int, total: int, name: str) -> None:
        self.file = (done, total, name)
        self._draw(done, total, name)

    def fragments(self, event: FragmentProgress) -> None:
        if event.done == event.total:
            return  # a small document is done in one step, and the next file redraws the bar anyway
        eta = f", {int(event.eta) // 60}:{int(event.eta) % 60:02d} left" if event.eta is not None else ""
        # Fragments are embedded 256 at a time across documents, so the one at hand may be behind the file
        # last read: name it.
        detail = f"{event.done:,}/{event.total:,} fragments, {event.rate:,.0f}/s{eta}"
        self._draw(self.file[0], self.file[1], event.document, detail)

    def close(self) -> None:
        """Clear the line once the sync is over (the last documents' fragments are embedded after the last
        file is read, so reading it is not the end)."""
        self.stream.write("\r" + " " * (self.WIDTH + 95) + "\r")
        self.stream.flush()


def progress_bar(stream: TextIO) -> Bar | None:
    """A progress bar on a terminal (files, and fragments with a rate inside a big one); nothing when piped."""
    return Bar(stream) if stream.isatty() else None


def folder_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--knowledge", metavar="DIR", help="the documents folder (default: $VERBATIM_KNOWLEDGE_DIR or ./knowledge)"
    )
    parser.add_argument(
        "--data", metavar="DIR", help="where the index and run log live (default: $VERBATIM_DATA_DIR or ./var)"
    )
