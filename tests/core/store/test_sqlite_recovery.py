"""The store under a running bot (issue 11): a deleted data folder loses no run-log row and the
index comes back; an index file overwritten, truncated or replaced is noticed and rebuilt."""

from __future__ import annotations

import logging
import os
import shutil
from pathlib import Path

import pytest

from core.common.answers import Answer
from core.common.errors import IndexCorrupt
from core.common.questions import SCOPES
from core.common.settings import Settings
from core.common.values import LogRecord
from core.retrieval.knowledge import KnowledgeBase
from core.store import INDEX_FILE, open_store
from core.store.sqlite import SQLiteIndex
from tests.fakes import FakeEmbedder

PRICES = "---\ntitle: Prices\naudience: public\n---\n## Fronts\n\nOak fronts cost 185 EUR per m².\n"
WARRANTY = "---\ntitle: Warranty\naudience: public\n---\n## Periods\n\nJoinery carries a five year warranty.\n"


def answer(n: int) -> LogRecord:
    return Answer(f"answer-{n}", f"question {n}", "refused", "no_match", (), 0, (), {}, "extractive").to_record()


def test_run_log_rows_written_after_the_data_folder_was_deleted_are_kept(tmp_path, caplog):
    data = tmp_path / "data"
    store = open_store(data)
    store.runlog.record(answer(1), "telegram", "chat:1")
    shutil.rmtree(data)
    with caplog.at_level(logging.WARNING, logger="core.store.sqlite"):
        store.runlog.record(answer(2), "telegram", "chat:1")
    assert "was deleted or replaced while running" in caplog.text
    assert store.state.first_time("telegram-update:9")
    store.runlog.record(answer(3), "telegram", "chat:1")
    store.close()
    again = open_store(data)
    assert [e.id for e in again.runlog.tail(10)] == ["answer-2", "answer-3"]
    assert not again.state.first_time("telegram-update:9")
    again.close()


def test_after_the_folder_is_deleted_two_stores_write_into_the_same_new_run_log(tmp_path):
    data = tmp_path / "data"
    slack, telegram = open_store(data), open_store(data)
    shutil.rmtree(data)
    slack.runlog.record(answer(1), "slack", None)
    telegram.runlog.record(answer(2), "telegram", None)
    slack.runlog.record(answer(3), "slack", None)
    slack.close()
    telegram.close()
    again = open_store(data)
    assert sorted(e.id for e in again.runlog.tail(10)) == ["answer-1", "answer-2", "answer-3"]
    again.close()


def knowledge_base(tmp_path: Path, write_kb) -> KnowledgeBase:
    kb_dir = write_kb({"prices.md": PRICES, "warranty.md": WARRANTY})
    # Resync on every question: the test waits on no clock.
    settings = Settings(knowledge_dir=kb_dir, data_dir=tmp_path / "data", resync_seconds=1e-9)
    kb = KnowledgeBase(settings, FakeEmbedder())
    kb.sync()
    return kb


def documents(kb: KnowledgeBase) -> set[str]:
    return {h.fragment.document for h in kb.retrieve("oak fronts warranty", SCOPES["public"], floor=-1.0).hits}


def test_the_index_comes_back_when_the_data_folder_is_deleted(tmp_path, write_kb):
    kb = knowledge_base(tmp_path, write_kb)
    shutil.rmtree(tmp_path / "data")
    assert documents(kb) == {"prices.md", "warranty.md"}
    kb.indexer.wait_for_resync()  # it runs beside the question
    assert kb.notice and "was deleted" in kb.notice
    fresh = SQLiteIndex(tmp_path / "data" / INDEX_FILE)
    assert set(fresh.known()) == {"prices.md", "warranty.md"}
    kb.close()


def truncate(path: Path) -> None:
    os.truncate(path, 0)


def overwrite(path: Path) -> None:
    with path.open("r+b") as handle:
        handle.write(b"not a database any more " * 200)


def replace(path: Path) -> None:
    other = path.with_name("other")
    other.write_bytes(b"garbage" * 1000)
    os.replace(other, path)


@pytest.mark.parametrize("damage", [truncate, overwrite, replace])
def test_an_index_file_damaged_under_a_running_bot_is_noticed_and_rebuilt(tmp_path, write_kb, damage):
    kb = knowledge_base(tmp_path, write_kb)
    path = tmp_path / "data" / INDEX_FILE
    assert documents(kb) == {"prices.md", "warranty.md"}
    kb.indexer.wait_for_resync()  # the checkpoint below goes past the store's lock
    # As a bot that ran a while: its pages are in the file itself, not only in the -wal.
    kb.store.index.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # type: ignore[attr-defined]
    damage(path)
    assert documents(kb) == {"prices.md", "warranty.md"}, "answers go on"
    kb.indexer.wait_for_resync()
    assert kb.notice and "the index is rebuilt from the documents" in kb.notice
    fresh = SQLiteIndex(path)
    assert set(fresh.known()) == {"prices.md", "warranty.md"} and len(fresh.load().fragments) == 2
    if damage is not replace:
        assert list(path.parent.glob(f"{INDEX_FILE}.corrupt-*")), "the damaged file is kept aside"
    kb.close()


def test_an_unreadable_index_answers_from_the_loaded_documents_and_resyncs(tmp_path, write_kb, monkeypatch):
    kb = knowledge_base(tmp_path, write_kb)
    # Resync only once an hour: only the failed read can make the next question resync.
    kb.settings = Settings(knowledge_dir=kb.settings.knowledge_dir, data_dir=kb.settings.data_dir, resync_seconds=3600)
    assert documents(kb) == {"prices.md", "warranty.md"}
    synced = kb.last_sync

    def unreadable() -> int:
        raise IndexCorrupt("The index file is damaged (database disk image is malformed).")

    with monkeypatch.context() as patch:
        patch.setattr(kb.store.index, "generation", unreadable)
        assert documents(kb) == {"prices.md", "warranty.md"}, "answers go on from the documents loaded"
    assert kb.last_sync == synced, "no resync yet: the failed read happened during this question"
    assert documents(kb) == {"prices.md", "warranty.md"}
    kb.indexer.wait_for_resync()
    assert kb.last_sync is not None and synced is not None and kb.last_sync > synced, "the next question resyncs"
    kb.close()
