"""A running knowledge base re-reads its folder beside the questions: none waits for it, and one that fails is
tried again later and later, said once in the log and kept in the store for `status`."""

from __future__ import annotations

import logging
import threading

from bot.presenter.reports import status_text
from core.common.questions import SCOPES
from core.common.settings import Settings
from core.measuring.report import admin_status
from core.retrieval.knowledge import KnowledgeBase
from tests.fakes import FakeEmbedder

WAIT = 60.0  # reached only when a test fails
PRICES = "---\ntitle: Prices\naudience: public\n---\n## Fronts\n\nOak fronts cost 185 EUR per m².\n"
WORKTOPS = "---\ntitle: Worktops\naudience: public\n---\n## Walnut\n\nWalnut worktops are oiled twice.\n"


class GatedEmbedder(FakeEmbedder):
    """Holds every call that embeds a walnut document until `gate` opens; a question's call goes through."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = threading.Event()
        self.held = threading.Event()

    def embed(self, texts):
        if any("Walnut" in t for t in texts):
            self.held.set()
            assert self.gate.wait(WAIT)
        return super().embed(texts)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def documents(kb: KnowledgeBase, question: str = "oak fronts cost") -> list[str]:
    return [h.fragment.document for h in kb.retrieve(question, SCOPES["public"], floor=0.3).hits]


def test_a_question_is_answered_while_the_resync_it_started_runs(tmp_path, write_kb):
    folder = write_kb({"prices.md": PRICES})
    embedder = GatedEmbedder()
    kb = KnowledgeBase(Settings(knowledge_dir=folder, data_dir=tmp_path / "data", resync_seconds=0.5), embedder)
    kb.indexer.clock = clock = Clock()
    kb.sync()
    write_kb({"worktops.md": WORKTOPS})
    clock.now += 1  # the resync is due: the next question finds it so
    found: list[list[str]] = []
    asking = threading.Thread(target=lambda: found.append(documents(kb)), daemon=True)
    asking.start()
    assert embedder.held.wait(WAIT), "the resync started, and is embedding the new document"
    asking.join(WAIT)
    assert found == [["prices.md"]] and not embedder.gate.is_set(), "answered while the resync ran"
    embedder.gate.set()
    kb.indexer.wait_for_resync()
    assert documents(kb, "walnut worktops oiled") == ["worktops.md"], "the new generation, as soon as it is done"
    kb.close()


def test_a_failed_resync_is_tried_again_later_and_later_and_said_once(tmp_path, write_kb, caplog):
    folder = write_kb({"prices.md": PRICES})
    settings = Settings(knowledge_dir=folder, data_dir=tmp_path / "data", resync_seconds=0.5)
    kb = KnowledgeBase(settings, FakeEmbedder())
    kb.indexer.clock = clock = Clock()
    kb.sync()
    tries: list[float] = []
    real = kb.indexer.sync

    def counted(*args, **kwargs):
        tries.append(clock.now)
        return real(*args, **kwargs)

    kb.indexer.sync = counted  # type: ignore[method-assign]
    away = folder.rename(tmp_path / "unmounted")  # a share not mounted
    started = clock.now
    with caplog.at_level(logging.DEBUG, logger="core.retrieval.knowledge"):
        for step in (1.0, 0.5, 0.5, 1.9, 0.1, 3.9, 0.1, 7.9):
            clock.now += step
            assert documents(kb) == ["prices.md"], "answered from the index in use"
            kb.indexer.wait_for_resync()
    assert [t - started for t in tries] == [1.0, 2.0, 4.0, 8.0], "1, 2, then 4 s apart: not at every question"
    said = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(said) == 1 and "does not exist" in said[0].getMessage(), "said once"
    problem = kb.store.index.sync_problem()
    assert problem == f"The knowledge folder {folder} does not exist."
    status = admin_status(kb)
    assert status.sync_problem == problem
    assert f"The last sync failed: {problem}" in status_text(status, 0.0).splitlines()
    away.rename(folder)
    clock.now += 16.0
    documents(kb)
    kb.indexer.wait_for_resync()
    assert kb.store.index.sync_problem() is None and kb.indexer.failures == 0
    assert "The last sync failed" not in status_text(admin_status(kb), 0.0)
    kb.close()


def test_the_cli_status_says_why_the_last_sync_failed(tmp_path, write_kb, monkeypatch):
    import io
    import shutil
    from collections import namedtuple

    from bot.cli import EXIT_DISK_FULL, main
    from core.ingest.space import RESERVE_BYTES

    owned = PRICES.replace("audience: public", "audience: public\nowner: Sales")
    folder = write_kb({"prices.md": owned})
    args = ["--knowledge", str(folder), "--data", str(tmp_path / "data")]
    assert main(["index", *args], out=io.StringIO()) == 0
    write_kb({"worktops.md": WORKTOPS.replace("audience: public", "audience: public\nowner: Sales") * 50})
    with monkeypatch.context() as full:
        usage = namedtuple("usage", "total used free")(10**9, 10**9 - RESERVE_BYTES, RESERVE_BYTES)
        full.setattr(shutil, "disk_usage", lambda path: usage)
        assert main(["index", *args], out=io.StringIO()) == EXIT_DISK_FULL
    out = io.StringIO()
    assert main(["status", *args], out=out) == 1
    assert "sync failed  Indexing stopped before it filled the disk: the knowledge folder's 1 new" in out.getvalue()
    assert main(["index", *args], out=io.StringIO()) == 0
    assert main(["status", *args], out=(out := io.StringIO())) == 0, out.getvalue()
