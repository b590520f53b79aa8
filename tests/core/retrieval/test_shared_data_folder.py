"""Two processes on one data folder: neither leaks nor serves documents the index no longer holds."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

from core.common.questions import SCOPES
from core.common.settings import Settings
from core.measuring.fakes import WordEmbedder
from core.retrieval.knowledge import KnowledgeBase

REPO = Path(__file__).resolve().parents[3]
PRICES = "---\ntitle: Price list\naudience: {audience}\n---\n## Fronts\n\nOak fronts cost 185 EUR per m².\n"
WARRANTY = "---\ntitle: Warranty\naudience: public\n---\n## Periods\n\nOak fronts carry a five year warranty.\n"
OTHER = "---\ntitle: Care\naudience: public\n---\n## Oil\n\nOil oak fronts twice a year.\n"

# The other process: a second bot (or `verbatim index`) re-indexing the shared data folder.
REINDEX = """
import sys
from pathlib import Path
from core.measuring.fakes import WordEmbedder
from core.retrieval.knowledge import KnowledgeBase
from core.common.settings import Settings
kb = KnowledgeBase(Settings(knowledge_dir=Path(sys.argv[1]), data_dir=Path(sys.argv[2])), WordEmbedder(64, "shared"))
report = kb.sync()
print(report.updated, report.removed)
kb.close()
"""


def reindex_in_another_process(knowledge: Path, data: Path) -> str:
    done = subprocess.run(
        [sys.executable, "-c", REINDEX, str(knowledge), str(data)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return done.stdout.strip()


class Server:
    """This process's bot: keeps answering public questions in a thread, noting when each search started."""

    def __init__(self, kb: KnowledgeBase) -> None:
        self.kb = kb
        self.phase = 0
        self.seen: list[tuple[int, set[str]]] = []  # (phase when the search started, documents of its hits)
        self.progress = threading.Condition()
        self.stop = threading.Event()
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._serve, daemon=True)

    def _serve(self) -> None:
        try:
            while not self.stop.is_set():
                phase = self.phase
                hits = self.kb.retrieve("oak fronts cost warranty", SCOPES["public"], floor=-1.0).hits
                with self.progress:
                    self.seen.append((phase, {h.fragment.document for h in hits}))
                    self.progress.notify_all()
        except BaseException as exc:  # surfaced by the test
            self.error = exc
            with self.progress:
                self.progress.notify_all()

    def searches_in(self, phase: int, count: int = 3) -> list[set[str]]:
        """Wait until `count` searches started in `phase` (or the server failed)."""
        self.phase = phase
        with self.progress:
            self.progress.wait_for(
                lambda: self.error is not None or sum(p == phase for p, _ in self.seen) >= count, timeout=60
            )
        assert self.error is None, self.error
        return [docs for p, docs in self.seen if p == phase]


def test_two_processes_on_one_data_folder_never_answer_from_what_the_index_no_longer_allows(tmp_path):
    knowledge = tmp_path / "kb"
    knowledge.mkdir()
    (knowledge / "price-list.md").write_text(PRICES.format(audience="public"), encoding="utf-8")
    (knowledge / "warranty.md").write_text(WARRANTY, encoding="utf-8")
    (knowledge / "care.md").write_text(OTHER, encoding="utf-8")
    data = tmp_path / "data"
    # This process never re-reads the folder itself (resync off): only the store's generation can tell it.
    settings = Settings(knowledge_dir=knowledge, data_dir=data, resync_seconds=0)
    kb = KnowledgeBase(settings, WordEmbedder(64, "shared"))
    kb.sync()
    server = Server(kb)
    server.thread.start()
    try:
        assert all("price-list.md" in docs for docs in server.searches_in(0))

        (knowledge / "price-list.md").write_text(PRICES.format(audience="internal"), encoding="utf-8")
        assert reindex_in_another_process(knowledge, data) == "1 0"
        after_audience = server.searches_in(1)
        assert all("price-list.md" not in docs for docs in after_audience), "an internal document reached customers"
        staff = kb.retrieve("oak fronts cost", SCOPES["internal"], floor=-1.0).hits
        assert "price-list.md" in {h.fragment.document for h in staff}, "staff still read it"

        (knowledge / "warranty.md").unlink()
        assert reindex_in_another_process(knowledge, data) == "0 1"
        after_delete = server.searches_in(2)
        assert all("warranty.md" not in docs for docs in after_delete), "a deleted document was quoted"
        assert all("care.md" in docs for docs in after_delete)
    finally:
        server.stop.set()
        server.thread.join(timeout=60)
        kb.close()
