"""A sync that would fill the disk stops before it writes: the index in use and the run log keep their room.

The disk's free space is what `shutil.disk_usage` says; these tests make it say little (a real small disk is
in tests/bot/telegram/test_serving_resync.py, on a tmpfs where one can be mounted)."""

from __future__ import annotations

import shutil
from collections import namedtuple

import pytest

from core.common.errors import DiskFull
from core.ingest import sync
from core.ingest.space import RESERVE_BYTES, Room, bytes_per_char
from core.store import INDEX_FILE
from core.store.sqlite import SQLiteIndex
from tests.fakes import FakeEmbedder

PRICES = "---\ntitle: Prices\naudience: public\n---\n## Fronts\n\nOak fronts cost 185 EUR per m².\n"
Usage = namedtuple("Usage", "total used free")


def walnut(n: int, words: int = 3000) -> str:
    """A document of about 6 characters a word."""
    return f"# Worktop {n}\n\n" + " ".join(f"Walnut{i % 97} oiled" for i in range(words // 2)) + ".\n"


def free_space(monkeypatch, free: int) -> None:
    monkeypatch.setattr(shutil, "disk_usage", lambda path: Usage(10 * free, 9 * free, free))


def test_a_sync_that_would_fill_the_disk_stops_before_it_writes_anything(tmp_path, write_kb, monkeypatch):
    kb = write_kb({"prices.md": PRICES})
    index = SQLiteIndex(tmp_path / "data" / INDEX_FILE)
    embedder = FakeEmbedder(384)
    sync(kb, index, embedder)
    before, generation, calls = index.known(), index.generation(), embedder.calls
    write_kb({f"worktop-{n}.md": walnut(n) for n in range(5)})  # ~100 KB of text: ~4 MB indexed
    free_space(monkeypatch, RESERVE_BYTES + 1_000_000)
    with pytest.raises(DiskFull) as stopped:
        sync(kb, index, embedder)
    said = str(stopped.value)
    assert said.startswith(
        "Indexing stopped before it filled the disk: the knowledge folder's 5 new or changed documents"
    )
    assert "1.0 MB is free there beyond the 32.0 MB kept for the index in use and the run log" in said
    assert "\n" not in said
    assert (index.known(), index.generation(), embedder.calls) == (before, generation, calls), "nothing written"
    free_space(monkeypatch, RESERVE_BYTES + 100_000_000)
    assert sync(kb, index, embedder).added == 5


def test_a_batch_that_would_not_fit_stops_and_the_indexed_version_stays(tmp_path, write_kb, monkeypatch):
    kb = write_kb({"prices.md": PRICES, "worktops.md": walnut(1, 20_000)})
    index = SQLiteIndex(tmp_path / "data" / INDEX_FILE)
    embedder = FakeEmbedder(384)
    sync(kb, index, embedder)
    edited = walnut(1, 20_000).replace("Worktop 1", "Worktop 2")  # the same size: only its batches can tell
    (kb / "worktops.md").write_text(edited, encoding="utf-8")
    free_space(monkeypatch, RESERVE_BYTES + 1_000_000)
    with pytest.raises(DiskFull, match=r"the next \d+ fragments \(of worktops\.md\) would take about"):
        sync(kb, index, embedder)
    assert {d.state for d in index.known().values()} == {"indexed"}, "nothing left half-indexed"
    titles = {f.title for _, f in index.load().each() if f.document == "worktops.md"}
    assert titles == {"Worktop 1"}, "the version indexed before is still searched"


def test_the_estimate_covers_what_indexing_takes(tmp_path, write_kb):
    """What a sync is allowed to write must be no less than what it writes (measured: 33 bytes a character)."""
    kb = write_kb({f"worktop-{n}.md": walnut(n, 600) for n in range(40)})
    data = tmp_path / "data"
    index = SQLiteIndex(data / INDEX_FILE)
    empty = sum(p.stat().st_size for p in data.iterdir())
    sync(kb, index, FakeEmbedder(384))
    grown = sum(p.stat().st_size for p in data.iterdir()) - empty
    chars = sum(len(walnut(n, 600)) for n in range(40))
    assert grown <= chars * bytes_per_char(384) <= 4 * grown


def test_a_store_on_another_machine_is_not_checked(tmp_path):
    class Remote:
        def disk(self):
            return None

        def dimension(self):
            return None

    Room(Remote()).check(10**12, "a trillion characters")  # type: ignore[arg-type]
