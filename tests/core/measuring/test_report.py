"""The gap report, over a run log filled by the real pipeline on the demo knowledge base."""

import json
import time

import numpy as np
import pytest

from core.common.questions import SCOPES
from core.measuring.gaps import recent_gaps, topic
from core.measuring.report import admin_status, build_report, parse_span
from core.vectors.clusters import cluster, medoid

STAFF = SCOPES["internal"]
INSTALMENTS = ["Do you offer instalment plans?", "do you offer instalments?", "can I pay in instalments?"]
PAYPAL = ["can I pay with PayPal?", "is PayPal accepted?"]
GIFT_WRAP = ["do you gift wrap orders?", "is gift wrapping available?", "can you wrap it as a present?"]
ANSWERED = ["how much is a walnut worktop?", "how long is the warranty on hinges?"]


@pytest.fixture
def asked(pipeline):
    """The pipeline after real questions from two surfaces, with a 👎 on one answer."""
    answers = {}
    for i, question in enumerate(INSTALMENTS + PAYPAL + GIFT_WRAP + ANSWERED):
        surface = "telegram" if i % 2 else "slack"
        answers[question] = pipeline.ask(question, STAFF, surface, conversation=f"secret-user-{i}")
    for question in INSTALMENTS + PAYPAL + GIFT_WRAP:
        assert not answers[question].answered, f"the demo documents answered {question!r}; pick another wording"
    for question in ANSWERED:
        assert answers[question].answered, question
    pipeline.feedback(answers[ANSWERED[0]].id, "down", "slack", who="U-SECRET-ADMIN")
    pipeline.feedback(answers[ANSWERED[1]].id, "up", "telegram", who="U-SECRET-OTHER")
    return pipeline


def gap_of(report, question):
    return next(g for g in report.gaps if question in g.examples)


def test_three_ways_to_ask_about_instalments_read_as_one_line(asked):
    report = build_report(asked.knowledge)
    gap = gap_of(report, INSTALMENTS[0])
    assert gap.count == 3 and sorted(gap.examples) == sorted(INSTALMENTS)
    assert gap.question in INSTALMENTS  # the most typical wording, not a made-up one
    assert gap.surfaces == ("slack", "telegram")
    assert report.gaps[0].count == 3  # biggest groups first


def test_different_missing_topics_stay_apart(asked):
    report = build_report(asked.knowledge)
    paypal, wrapping, instalments = (gap_of(report, q[0]) for q in (PAYPAL, GIFT_WRAP, INSTALMENTS))
    assert sorted(paypal.examples) == sorted(PAYPAL)
    assert sorted(wrapping.examples) == sorted(GIFT_WRAP)
    assert len({id(paypal), id(wrapping), id(instalments)}) == 3
    assert sum(g.count for g in report.gaps) == len(INSTALMENTS + PAYPAL + GIFT_WRAP)


def test_each_group_names_the_section_it_came_closest_to(asked):
    report = build_report(asked.knowledge)
    for gap in report.gaps:
        assert gap.closest is not None and gap.closest.heading
        assert -1.0 <= gap.closest.score <= 1.0
    # PayPal is a payment method the documents don't list: the nearest section says where to add it.
    paypal = gap_of(report, PAYPAL[0])
    assert "payment" in paypal.closest.heading.lower()


def test_counts_per_reason_surface_and_day(asked):
    report = build_report(asked.knowledge)
    total = len(INSTALMENTS + PAYPAL + GIFT_WRAP + ANSWERED)
    assert (report.totals.asked, report.totals.answered, report.totals.refused) == (total, 2, total - 2)
    assert sum(report.reasons.values()) == total - 2
    assert set(report.reasons) <= {"no_match", "not_found", "unverified"}
    assert sum(c.asked for c in report.surfaces.values()) == total and set(report.surfaces) == {"slack", "telegram"}
    assert len(report.days) in (31, 32)  # every day of the period, quiet ones included
    assert sum(d.counts.asked for d in report.days) == total


def test_disliked_answers_come_with_the_quotes_they_showed(asked):
    report = build_report(asked.knowledge)
    assert (report.up, report.down) == (1, 1)
    [disliked] = report.disliked
    assert disliked.question == ANSWERED[0] and disliked.down == 1
    assert any("520 EUR" in q.text and q.caption.startswith("Price list › Worktops") for q in disliked.quotes)


def test_documents_and_sections_quoted_most_and_never(asked):
    report = build_report(asked.knowledge)
    quoted = {u.name for u in report.documents_quoted}
    assert "Price list" in quoted and "Warranty" in quoted
    never = {u.name for u in report.documents_never}
    assert never and not never & quoted
    assert "Price list › Worktops" in {u.name for u in report.sections_quoted}
    assert "Price list › Worktops" not in {u.name for u in report.sections_never}


def test_slowest_answers_come_first(asked):
    slowest = build_report(asked.knowledge).slowest
    totals = [s.total_ms for s in slowest]
    assert totals == sorted(totals, reverse=True) and totals[0] > 0


def test_no_user_id_or_conversation_key_reaches_the_report(asked):
    text = json.dumps(build_report(asked.knowledge).to_json(), ensure_ascii=False)
    assert "secret-user" not in text and "U-SECRET" not in text


def test_the_period_excludes_older_questions(asked):
    later = time.time() + 40 * 86_400
    report = build_report(asked.knowledge, days=30, now=later)
    assert report.totals.asked == 0 and report.gaps == ()
    assert recent_gaps(asked.knowledge, now=later) == []


def test_recent_gaps_are_the_biggest_groups(asked):
    gaps = recent_gaps(asked.knowledge, limit=2)
    assert len(gaps) == 2 and gaps[0].count == 3


def test_admin_status_counts_documents_and_this_weeks_questions(asked):
    status = admin_status(asked.knowledge)
    assert status.indexed >= 10 and status.failed == {}
    assert status.last_sync is not None and status.last_sync <= time.time()
    total = len(INSTALMENTS + PAYPAL + GIFT_WRAP + ANSWERED)
    assert status.week.asked == total and status.week.refused == total - 2
    assert status.today.asked == total


def test_errors_and_other_languages_are_not_gaps(pipeline):
    pipeline.ask("Wie viel kostet eine Arbeitsplatte aus Nussbaum?", STAFF, "slack")
    report = build_report(pipeline.knowledge)
    assert report.reasons == {"language": 1} and report.gaps == ()


def test_topic_drops_how_a_question_asks():
    assert topic("Can I pay with PayPal?") == "pay PayPal"
    assert topic("do you?") == "do you?"  # nothing left: the question itself


def test_spans():
    assert parse_span("30d") == 30 and parse_span("2w") == 14 and parse_span("12h") == 0.5
    for bad in ("", "0d", "30", "d", "1y", "-3d"):
        with pytest.raises(ValueError):
            parse_span(bad)


# --- the clustering, against a naive reference ----------------------------------------------------


def naive_average_linkage(vectors, threshold):
    """Merge the most similar pair of groups, averaging every pair of members afresh each time."""
    groups = [[i] for i in range(len(vectors))]
    sim = vectors @ vectors.T
    while len(groups) > 1:
        best, pair = -np.inf, None
        for a in range(len(groups)):
            for b in range(a + 1, len(groups)):
                value = sim[np.ix_(groups[a], groups[b])].mean()
                if value > best:
                    best, pair = value, (a, b)
        if best < threshold:
            break
        a, b = pair
        groups[a] = groups[a] + groups[b]
        del groups[b]
    return sorted(sorted(g) for g in groups)


@pytest.mark.parametrize("seed", range(5))
def test_cluster_agrees_with_the_naive_reference(seed):
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(4, 16))
    vectors = np.repeat(centres, 5, axis=0) + rng.normal(scale=0.6, size=(20, 16))
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    for threshold in (0.2, 0.45, 0.7):
        assert sorted(cluster(vectors, threshold)) == naive_average_linkage(vectors, threshold)


def test_weights_count_as_repeated_questions():
    rng = np.random.default_rng(7)
    vectors = rng.normal(size=(6, 8))
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    weights = np.array([1, 3, 1, 2, 1, 1])
    repeated = np.repeat(vectors, weights, axis=0)
    owner = np.repeat(np.arange(6), weights)
    expected = sorted(sorted(set(owner[g].tolist())) for g in naive_average_linkage(repeated, 0.1))
    assert sorted(cluster(vectors, 0.1, weights)) == expected


def test_medoid_is_the_member_closest_to_the_rest():
    vectors = np.array([[1.0, 0.0], [0.8, 0.6], [0.6, 0.8], [0.0, 1.0]])
    assert medoid(vectors, [0, 1, 2, 3]) in (1, 2)
    assert medoid(vectors, [3]) == 3
