"""Room on the index's disk: a sync checks that what it will write fits before it writes it.

A resync that fills the disk leaves the index in use and the run log unable to write, and every question
then fails. So a sync estimates what the documents it will read take once indexed (their text, the vectors of
their fragments and answerable blocks, SQLite's rows and pages, with a margin) and stops before it changes
anything when that would leave less than RESERVE_BYTES free; then it checks again before each batch it
writes, from the batch's own text (a PDF's text is only guessed from its size; a batch's is known). A store
whose disk is not this machine's (PostgreSQL) is not checked.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from core.common.errors import DiskFull
from core.common.text import mb
from core.store import IndexStore, KnownDocument

# Kept free for the index in use and the run log: thousands of answers logged, and SQLite's own journal.
RESERVE_BYTES = 32_000_000
DEFAULT_DIMENSION = 384  # all-MiniLM-L6-v2 and multilingual-e5-small, until the index knows its own
# Measured on 300 short Markdown documents (258 KB of text, 446 fragments, 3,151 answerable blocks, 384-dim
# vectors): the index grew 8.5 MB, 33 bytes per byte of text. The blocks' vectors are most of it.
BLOCK_CHARS = 80  # text per answerable block, each with a stored vector
FRAGMENT_CHARS = 600  # text per fragment, with its vector, its text and what is embedded
ROW_BYTES = 150  # a row's key, hash, index entry and share of a page
MARGIN = 1.5
# A file's text as a share of its size: all of it in plain formats; a guess for the others (markup, zip
# archives, PDF streams), which the check before each batch corrects.
TEXT_SUFFIXES = frozenset({".md", ".markdown", ".txt", ".csv"})
OTHER_TEXT_SHARE = 0.25


def bytes_per_char(dimension: int) -> float:
    """What one character of a document's text takes in the index, with the margin."""
    vector = 4 * dimension + ROW_BYTES
    return MARGIN * (vector / BLOCK_CHARS + (vector + 2 * FRAGMENT_CHARS) / FRAGMENT_CHARS)


def text_chars(file: Path, size: int) -> int:
    """A guess at the characters of text in a file of `size` bytes, before it is read."""
    return size if file.suffix.lower() in TEXT_SUFFIXES else int(size * OTHER_TEXT_SHARE)


class Room:
    """The index's disk as one sync sees it: whether the text it is about to index fits there."""

    def __init__(self, index: IndexStore) -> None:
        self.index = index
        self.per_char = bytes_per_char(index.dimension() or DEFAULT_DIMENSION)

    def check_folder(self, folder: Path, files: Iterable[Path], known: Mapping[str, KnownDocument]) -> None:
        """Before a sync changes anything: DiskFull when the new and resized files would not fit."""
        todo: list[tuple[Path, int]] = []
        for file in files:
            try:
                size = file.stat().st_size
            except OSError:
                continue  # gone or unreadable: the sync says so for that file
            previous = known.get(file.relative_to(folder).as_posix())
            if previous is None or previous.size != size:  # a same-size edit is left to the check of its batch
                todo.append((file, size))
        if todo:
            count = f"{len(todo):,} new or changed document{'s' if len(todo) != 1 else ''}"
            self.check(sum(text_chars(f, s) for f, s in todo), f"the knowledge folder's {count}")

    def check(self, chars: int, what: str) -> None:
        """DiskFull, before anything is written, when indexing `chars` characters of text would leave less than
        RESERVE_BYTES free on the index's disk."""
        disk = self.index.disk()
        if disk is None or chars <= 0:
            return
        needed = int(chars * self.per_char)
        if disk.free - needed >= RESERVE_BYTES:
            return
        spare = max(disk.free - RESERVE_BYTES, 0)
        raise DiskFull(
            f"Indexing stopped before it filled the disk: {what} would take about {mb(needed)} in {disk.where}, and "
            f"{mb(spare)} is free there beyond the {mb(RESERVE_BYTES)} kept for the index in use and the run log. "
            "Free some space; until then questions are answered from the documents indexed before."
        )
