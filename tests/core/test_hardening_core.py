"""Hardening (issue 11): two processes on one data folder never leak or serve stale documents;
a statement's figures must stand in its own quotes."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import pytest

from core.answering.figures import unquoted
from core.answering.quotes import verify
from core.common.answers import Claim, Draft
from core.common.settings import Settings
from core.measuring.fakes import WordEmbedder
from core.measuring.selfcheck import OAK, QUESTION, Bench, run_checks
from core.retrieval.knowledge import SCOPES, KnowledgeBase

REPO = Path(__file__).resolve().parents[2]
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


# --- item 2: a statement's figures must be in its own quotes ----------------------------------


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    return Bench(tmp_path_factory.mktemp("figures"))


def test_a_statement_beside_a_genuine_quote_that_says_more_than_it_is_dropped_and_counted(bench):
    claims = (
        Claim("Oak fronts cost €185 per square metre.", 1, OAK),
        Claim("Everything is free.", 1, OAK),
        Claim("Oak fronts cost 158 EUR per m².", 1, OAK),
        Claim("Oak fronts cost 185 EUR, with 20% off in May.", 1, OAK),
    )
    statements, discarded = verify(claims, bench.hits(QUESTION))
    assert [s.text for s in statements] == ["Oak fronts cost €185 per square metre."]
    assert discarded == 3


def test_an_answer_whose_every_statement_invents_a_figure_is_refused(bench):
    pipeline, _ = bench.pipeline(Draft(True, (Claim("Everything is free.", 1, OAK),)))
    answer = pipeline.answer(QUESTION, SCOPES["public"])
    assert (answer.kind, answer.reason, answer.discarded) == ("refused", "unverified", 1)


def test_a_statement_that_restates_its_quote_always_passes(bench):
    statements, discarded = verify((Claim(OAK, 1, OAK), Claim("", 1, OAK)), bench.hits(QUESTION))
    assert len(statements) == 1 and discarded == 0


@pytest.mark.parametrize(
    ("statement", "quote"),
    [
        ("The worktop costs 1200 EUR.", "The worktop costs 1,200 EUR."),
        ("The worktop costs 1,200 EUR.", "The worktop costs 1 200 EUR."),
        ("The worktop costs €1200.", "The worktop costs 1\u202f200 EUR."),
        ("Delivery costs €40.", "Delivery costs 40 EUR."),
        ("Delivery costs 40.00 EUR.", "Delivery costs EUR 40."),
        ("The warranty lasts 5 years.", "Joinery carries a five year warranty."),
        ("The warranty lasts twenty-five years.", "25 years of warranty"),
        ("Staff may give 5% off.", "up to 5 percent discount"),
        ("Prices hold until 1 March 2025.", "valid until 2025-03-01"),
        ("A 2.5 kg hinge.", "a 2,5 kg hinge"),
        ("Carried to the 3rd floor for 12 EUR.", "to the third floor cost 12 EUR per floor"),
        ("Oak costs 185 EUR per m2.", "Oak fronts cost 185 EUR per m²."),
        ("Delivery is free within 15 km.", "Delivery within 15 km is free of charge."),
        ("One of our fronts is oak.", "Oak fronts cost 185 EUR per m²."),
    ],
)
def test_figures_are_compared_by_value_not_spelling(statement, quote):
    assert unquoted(statement, [quote]) == []


@pytest.mark.parametrize(
    ("statement", "quote", "missing"),
    [
        ("Everything is free.", "Oak fronts cost 185 EUR per m².", ["free"]),
        ("Oak fronts cost 158 EUR.", "Oak fronts cost 185 EUR per m².", ["158"]),
        ("Staff may give 5% off.", "Returns within 5 days.", ["5%"]),
        ("Prices hold until 1 April 2025.", "valid until 2025-03-01", ["april"]),
        ("The worktop costs 12,000 EUR.", "The worktop costs 1,200 EUR.", ["12,000"]),
        ("Delivery takes three weeks.", "Delivery takes two weeks.", ["three"]),
    ],
)
def test_a_figure_missing_from_the_quote_is_named(statement, quote, missing):
    assert unquoted(statement, [quote]) == missing


def test_verbatim_check_has_the_figure_barrier():
    results = {r.name: r for r in run_checks()}
    check = results["statement with an unquoted figure is dropped"]
    assert check.ok, check.detail
