"""`verbatim check`: the anti-invention mechanics, checked offline with no model and no network.

Each check builds what it needs in a temporary folder: a tiny knowledge base, a
deterministic word-hashing embedder and a scripted answerer, then drives the real
pipeline, verifier and index through it.
"""

from __future__ import annotations

import logging
import tempfile
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

from core.answering.arithmetic import Amount, CalculationRefused, evaluate
from core.answering.calculations import check_all
from core.answering.figures import Unit
from core.answering.pipeline import Pipeline
from core.answering.policy import policy_for
from core.answering.quotes import locate, verify
from core.common.answers import Calculation, Claim, Draft, FigureInput, Proposal, StatedInput
from core.common.errors import AnswererError, VerbatimError
from core.common.questions import SCOPES
from core.common.settings import Settings
from core.common.values import Hit
from core.measuring.fakes import ScriptedAnswerer, WordEmbedder
from core.retrieval.knowledge import KnowledgeBase
from core.store import INDEX_FILE, open_store

PRICES = """---
title: Prices
audience: public
---
## Fronts

Oak fronts cost 185 EUR per m². Painted fronts cost 120 EUR per m² – in any colour.

## Delivery

Delivery within 15 km costs 40 EUR. Items over 30 kg carried upstairs cost 12 EUR per floor.
"""
SECRET = """---
title: Discounts
audience: internal
---
## Authority

Sales staff may give up to 5% discount on fronts.
"""
EXTRA = "\n\n".join(f"## Oak {i}\n\nOak fronts note {i} for oak fronts." for i in range(6))


@dataclass(frozen=True)
class CheckResult:
    name: str
    ok: bool
    detail: str = ""


class Bench:
    """A throwaway knowledge base and pipeline for the checks."""

    def __init__(self, root: Path, extra: bool = False) -> None:
        kb = root / "kb"
        kb.mkdir(parents=True, exist_ok=True)
        (kb / "prices.md").write_text(PRICES + (EXTRA if extra else ""), encoding="utf-8")
        (kb / "secret.md").write_text(SECRET, encoding="utf-8")
        if extra:
            (kb / "other.md").write_text("---\naudience: public\n---\n## Oak\n\nOak fronts elsewhere.", "utf-8")
            (kb / "third.md").write_text("---\naudience: public\n---\n## Oak\n\nMore about oak fronts.", "utf-8")
        self.settings = Settings(knowledge_dir=kb, data_dir=root / "data", min_similarity=0.3)
        self.knowledge = KnowledgeBase(self.settings, WordEmbedder(128, "selfcheck"))
        self.knowledge.sync()

    def pipeline(self, draft: Draft | Exception) -> tuple[Pipeline, ScriptedAnswerer]:
        answerer = ScriptedAnswerer(draft)
        return Pipeline(self.settings, self.knowledge, answerer), answerer

    def hits(self, question: str, scope: str = "public") -> list[Hit]:
        return self.knowledge.retrieve(question, SCOPES[scope], policy_for(self.settings).min_similarity).hits


OAK = "Oak fronts cost 185 EUR per m²."
QUESTION = "how much do oak fronts cost per m2"


def _verifies(bench: Bench, quote: str, fragment: int = 1) -> bool:
    statements, _ = verify((Claim("s", fragment, quote),), bench.hits(QUESTION))
    return bool(statements)


def check_verbatim_quote_passes(b: Bench) -> str | None:
    return None if _verifies(b, OAK) else "an exact quote was rejected"


def check_doctored_quote_discarded(b: Bench) -> str | None:
    return "a changed figure passed" if _verifies(b, OAK.replace("185", "158")) else None


def check_stitched_quote_discarded(b: Bench) -> str | None:
    stitched = "Oak fronts cost 185 EUR in any colour."
    return "a quote joined from two places passed" if _verifies(b, stitched) else None


def check_fragment_outside_retrieved_set(b: Bench) -> str | None:
    hits = b.hits(QUESTION)
    statements, discarded = verify((Claim("s", len(hits) + 1, OAK), Claim("s", 0, OAK)), hits)
    return None if not statements and discarded == 2 else "a citation outside the retrieved set passed"


def check_quote_from_the_wrong_fragment(b: Bench) -> str | None:
    hits = b.hits("delivery within 15 km items carried upstairs oak fronts cost")
    fronts = next(i for i, h in enumerate(hits, 1) if "Oak fronts" in h.fragment.text)
    other = next(i for i, h in enumerate(hits, 1) if "Oak fronts" not in h.fragment.text)
    statements, _ = verify((Claim("s", other, OAK), Claim("s", fronts, OAK)), hits)
    return None if len(statements) == 1 else "a quote was accepted from a fragment that does not hold it"


def check_too_short_quote(b: Bench) -> str | None:
    return "a 7-character quote passed" if _verifies(b, "185 EUR") else None


def check_too_long_quote(b: Bench) -> str | None:
    return None if locate("x" * 1201, "x" * 1300) is None and locate("x" * 1200, "x" * 1300) else "length limits"


def check_typographic_variants_pass(b: Bench) -> str | None:
    variant = "Painted fronts cost 120 EUR per m² — in any colour."
    if not _verifies(b, variant):
        return "an em dash for an en dash was rejected"
    if locate("“Oak”  fronts\ncost", 'He said "Oak" fronts cost') is None:
        return "curly quotes or folded whitespace were rejected"
    return None


def check_shown_quote_is_the_documents_text(b: Bench) -> str | None:
    statements, _ = verify((Claim("s", 1, "Painted fronts cost 120 EUR per m² — in any colour."),), b.hits(QUESTION))
    shown = statements[0].quotes[0].text if statements else ""
    return None if "–" in shown and "—" not in shown else f"shown {shown!r} instead of the document's own text"


def check_unquoted_figure_drops_its_statement(b: Bench) -> str | None:
    claims = (
        Claim("Oak fronts cost 185 EUR a square metre.", 1, OAK),
        Claim("Oak fronts cost 158 EUR per m².", 1, OAK),
        Claim("Everything is free.", 1, OAK),
    )
    statements, discarded = verify(claims, b.hits(QUESTION))
    kept = [s.text for s in statements]
    ok = kept == ["Oak fronts cost 185 EUR a square metre."] and discarded == 2
    return None if ok else f"kept {kept} with {discarded} discarded"


DELIVERY = "Delivery within 15 km costs 40 EUR."


def _calculation(b: Bench, *inputs: tuple[str, str]) -> tuple[list[Calculation], int]:
    """Checks the first pair's expression over the named figures: a figure in EUR is quoted, the rest asked."""
    hits = b.hits("oak fronts cost per m2 delivery within 15 km")
    oak = next(i for i, h in enumerate(hits, 1) if "Oak fronts" in h.fragment.text)
    fee = next(i for i, h in enumerate(hits, 1) if "Delivery within" in h.fragment.text)
    claims = (Claim(OAK, oak, OAK), Claim(DELIVERY, fee, DELIVERY))
    sources = tuple(
        (name, StatedInput(figure) if "EUR" not in figure else FigureInput(oak if "185" in figure else fee, figure))
        for name, figure in inputs[1:]
    )
    proposal = Proposal("total", inputs[0][1], sources)
    return check_all((proposal,), claims, hits, "how much are 2 m2 of oak fronts with delivery")


def check_calculation_from_verified_figures(b: Bench) -> str | None:
    done, refused = _calculation(
        b, ("", "area * price + fee"), ("area", "2 m2"), ("price", "185 EUR per m²"), ("fee", "40 EUR")
    )
    ok = not refused and [(c.result, c.unit) for c in done] == [("410.00", "EUR")]
    return None if ok else f"got {[(c.result, c.unit) for c in done]} with {refused} refused"


def check_wrong_input_pointer_is_refused(b: Bench) -> str | None:
    # 158 is not in the oak quote (185 is): the input points at a figure its quote does not hold.
    done, refused = _calculation(b, ("", "area * price"), ("area", "2 m2"), ("price", "158 EUR per m²"))
    return None if not done and refused == 1 else "a figure that is not in its quote was used"


def check_money_times_money_is_refused(b: Bench) -> str | None:
    done, refused = _calculation(b, ("", "price * fee"), ("price", "185 EUR per m²"), ("fee", "40 EUR"))
    try:
        evaluate("a * b", {"a": Amount(Decimal(2), Unit(money="EUR")), "b": Amount(Decimal(3), Unit(money="EUR"))})
    except CalculationRefused:
        return None if not done and refused == 1 else "money × money was computed in an answer"
    return "the evaluator computed money × money"


def check_floor_cuts_distant_matches(b: Bench) -> str | None:
    return None if b.hits("capital of france population") == [] else "an unrelated question retrieved fragments"


def check_per_document_cap(root: Path) -> str | None:
    bench = Bench(root / "cap", extra=True)
    hits = bench.knowledge.retrieve("oak fronts", SCOPES["public"], floor=-1.0).hits
    per_doc = [h.fragment.document for h in hits].count("prices.md")
    return None if len(hits) == 5 and per_doc == 3 else f"{per_doc} of {len(hits)} hits from one document"


def check_no_model_call_below_floor(b: Bench) -> str | None:
    pipeline, answerer = b.pipeline(Draft(True, (Claim("s", 1, OAK),)))
    answer = pipeline.answer("capital of france population", SCOPES["public"])
    if answer.reason != "no_match" or answerer.calls:
        return f"reason {answer.reason}, {answerer.calls} answerer calls"
    return None


def check_found_false_refuses(b: Bench) -> str | None:
    answer = b.pipeline(Draft(False))[0].answer(QUESTION, SCOPES["public"])
    return None if answer.kind == "refused" and answer.reason == "not_found" else f"got {answer.kind}/{answer.reason}"


def check_all_quotes_discarded_refuses(b: Bench) -> str | None:
    draft = Draft(True, (Claim("s", 1, OAK.replace("185", "99")), Claim("s", 9, OAK)))
    answer = b.pipeline(draft)[0].answer(QUESTION, SCOPES["public"])
    ok = answer.reason == "unverified" and answer.discarded == 2 and not answer.statements
    return None if ok else f"got {answer.reason} with {answer.discarded} discarded"


def check_partial_discard_is_counted(b: Bench) -> str | None:
    draft = Draft(True, (Claim("good", 1, OAK), Claim("bad", 1, "Oak fronts are free.")))
    answer = b.pipeline(draft)[0].answer(QUESTION, SCOPES["public"])
    ok = answer.answered and answer.discarded == 1 and [s.text for s in answer.statements] == ["good"]
    return None if ok else f"got {answer.kind} with {answer.discarded} discarded"


def check_audience_filter(b: Bench) -> str | None:
    question = "what discount may sales staff give on fronts"
    public = b.knowledge.retrieve(question, SCOPES["public"], floor=-1.0).hits
    staff = b.hits(question, "internal")
    if any(h.fragment.audience != "public" for h in public):
        return "the public scope retrieved an internal fragment"
    if not staff or staff[0].fragment.document != "secret.md":
        return "the internal scope did not find the internal document"
    return None


def check_answerer_failure_is_a_refusal(b: Bench) -> str | None:
    answer = b.pipeline(AnswererError("the model server is down", 3))[0].answer(QUESTION, SCOPES["public"])
    return None if answer.reason == "error" and answer.model_calls == 3 else f"got {answer.reason}"


def check_every_answer_is_logged_and_reindex_keeps_the_log(b: Bench) -> str | None:
    pipeline, _ = b.pipeline(Draft(True, (Claim("s", 1, OAK),)))
    answer = pipeline.answer(QUESTION, SCOPES["public"], surface="check")
    (b.settings.data_dir / INDEX_FILE).unlink(missing_ok=True)
    rebuilt = KnowledgeBase(b.settings, WordEmbedder(128, "selfcheck"))
    rebuilt.sync()
    rebuilt.close()
    store = open_store(b.settings.data_dir)
    entries = store.runlog.tail(50)
    store.close()
    return None if any(e.id == answer.id for e in entries) else "the answer is not in the run log"


def check_corrupt_index_is_rebuilt(root: Path) -> str | None:
    data = root / "corrupt" / "data"
    data.mkdir(parents=True)
    (data / INDEX_FILE).write_bytes(b"not a database" * 64)
    bench_kb = Bench(root / "corrupt")
    return None if bench_kb.knowledge.notice and bench_kb.hits(QUESTION) else "a damaged index was not rebuilt"


def check_empty_question_is_rejected(b: Bench) -> str | None:
    try:
        b.pipeline(Draft(False))[0].answer("   ", SCOPES["public"])
    except VerbatimError:
        return None
    return "an empty question was accepted"


CHECKS: list[tuple[str, Callable[..., str | None], bool]] = [
    ("verbatim quote passes", check_verbatim_quote_passes, False),
    ("doctored quote is discarded", check_doctored_quote_discarded, False),
    ("stitched quote is discarded", check_stitched_quote_discarded, False),
    ("citation outside the retrieved set is discarded", check_fragment_outside_retrieved_set, False),
    ("quote from the wrong fragment is discarded", check_quote_from_the_wrong_fragment, False),
    ("quote under 8 characters is discarded", check_too_short_quote, False),
    ("quote over 1,200 characters is discarded", check_too_long_quote, False),
    ("typographic variants pass", check_typographic_variants_pass, False),
    ("shown quote is the document's own text", check_shown_quote_is_the_documents_text, False),
    ("statement with an unquoted figure is dropped", check_unquoted_figure_drops_its_statement, False),
    ("calculation from verified figures is computed", check_calculation_from_verified_figures, False),
    ("calculation input not in its quote is refused", check_wrong_input_pointer_is_refused, False),
    ("money × money is refused", check_money_times_money_is_refused, False),
    ("floor cuts distant matches", check_floor_cuts_distant_matches, False),
    ("per-document cap", check_per_document_cap, True),
    ("no answerer call below the floor", check_no_model_call_below_floor, False),
    ("found=false refuses", check_found_false_refuses, False),
    ("all quotes discarded refuses", check_all_quotes_discarded_refuses, False),
    ("partly discarded answer says how many", check_partial_discard_is_counted, False),
    ("audience filter", check_audience_filter, False),
    ("answerer failure is an error refusal", check_answerer_failure_is_a_refusal, False),
    ("run log keeps every answer through a re-index", check_every_answer_is_logged_and_reindex_keeps_the_log, False),
    ("corrupt index is rebuilt", check_corrupt_index_is_rebuilt, True),
    ("empty question is rejected", check_empty_question_is_rejected, False),
]


def run_checks() -> list[CheckResult]:
    """Run every check; one that raises fails with its exception, the rest still run."""
    results: list[CheckResult] = []
    # The checks provoke failures on purpose; their log lines would only alarm the reader.
    logging.disable(logging.CRITICAL)
    try:
        return _run(results)
    finally:
        logging.disable(logging.NOTSET)


def _run(results: list[CheckResult]) -> list[CheckResult]:
    with tempfile.TemporaryDirectory(prefix="verbatim-check-") as tmp:
        root = Path(tmp)
        bench = Bench(root / "main")
        for name, check, wants_root in CHECKS:
            try:
                problem = check(root) if wants_root else check(bench)
            except Exception as exc:  # a crashing check is a failing check, with its reason
                problem = f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=3)}"
            results.append(CheckResult(name, problem is None, problem or ""))
    return results
