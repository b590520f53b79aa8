"""A renamed file is one update: its new name goes in and its old one out in one transaction, its vectors reused,
so a question finds it under one name or the other at every moment, never under neither and never twice."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.ingest import sync
from core.ingest.folder import VANISHED
from core.store import INDEX_FILE
from core.store.sqlite import SQLiteIndex

PRICES = "---\ntitle: Prices\naudience: public\n---\n## Fronts\n\nOak fronts cost 185 EUR per m².\n"
WARRANTY = "---\ntitle: Warranty\naudience: public\n---\n## Periods\n\nJoinery carries a five year warranty.\n"


def searchable(index: SQLiteIndex) -> list[str]:
    """The documents a question would find the oak fronts' price in now, as a reader loads them."""
    return sorted(f.document for _, f in index.load().each() if "Oak fronts" in f.text)


def watching(index: SQLiteIndex, monkeypatch) -> list[list[str]]:
    """What a reader would find after every write that changes what is searched."""
    seen: list[list[str]] = []
    for name in ("commit", "remove", "fail", "mark_indexing", "abort"):
        real = getattr(index, name)

        def write(*args, _real=real, **kwargs):
            _real(*args, **kwargs)
            seen.append(searchable(index))

        monkeypatch.setattr(index, name, write)
    return seen


@pytest.fixture
def indexed(tmp_path, write_kb, fake_embedder) -> tuple[Path, SQLiteIndex]:
    """A folder of the price list and the warranty, and its index after one sync."""
    kb = write_kb({"prices.md": PRICES, "warranty.md": WARRANTY})
    index = SQLiteIndex(tmp_path / "data" / INDEX_FILE)
    sync(kb, index, fake_embedder)
    return kb, index


def test_a_renamed_file_is_one_update_found_under_one_name_at_every_moment(indexed, fake_embedder, monkeypatch):
    kb, index = indexed
    calls = fake_embedder.calls
    seen = watching(index, monkeypatch)
    (kb / "prices.md").rename(kb / "price-list.md")
    report = sync(kb, index, fake_embedder)
    assert (report.added, report.updated, report.removed) == (0, 1, 0)
    assert seen and all(len(found) == 1 for found in seen), f"never under neither name, never twice: {seen}"
    assert seen[-1] == ["price-list.md"]
    assert fake_embedder.calls == calls, "its vectors are reused"
    states = {r.path: r.state for r in index.register()}
    assert (states["prices.md"], states["price-list.md"]) == ("removed", "indexed")
    # And back again: the old name's register row is taken up again.
    (kb / "price-list.md").rename(kb / "prices.md")
    report = sync(kb, index, fake_embedder)
    assert (report.added, report.updated, report.removed) == (0, 1, 0) and searchable(index) == ["prices.md"]


def test_a_file_renamed_while_the_sync_reads_the_folder_keeps_its_indexed_version(indexed, fake_embedder, monkeypatch):
    kb, index = indexed
    from core.ingest import syncing

    listed = syncing.list_folder

    def listed_then_renamed(folder: Path):
        listing = listed(folder)
        (kb / "prices.md").rename(kb / "price-list.md")  # after the listing, before the file is read
        return listing

    with monkeypatch.context() as patch:
        patch.setattr(syncing, "list_folder", listed_then_renamed)
        report = sync(kb, index, fake_embedder)
    assert report.failed == {"prices.md": VANISHED}
    assert searchable(index) == ["prices.md"], "still answered from its indexed version"
    assert index.known()["prices.md"].state == "indexed"
    report = sync(kb, index, fake_embedder)  # the next sync takes the new name in, as one update
    assert (report.added, report.updated, report.removed, report.failed) == (0, 1, 0, {})
    assert searchable(index) == ["price-list.md"]
