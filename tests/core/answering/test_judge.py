"""The answerability judge (core/answering/judge.py) and how the extractive answerer uses it."""

import hashlib
import json
import re
import threading
import time
from dataclasses import replace

import numpy as np
import pytest

from core.answering.answerers import make_answerer
from core.answering.conversation import resolve_follow_up
from core.answering.extractive import ExtractiveAnswerer
from core.answering.figures import read_figures
from core.answering.judge import MODEL_DIR, MODEL_FILE, Judge, candidate_text, shared
from core.answering.llm import LLMAnswerer
from core.answering.pipeline import Pipeline
from core.answering.policy import DEFAULT, MULTILINGUAL, REMOTE, policy_for, second_look_on
from core.answering.ranges import fits_figures, row_holds, stated_quantities
from core.common.answers import Turn
from core.common.errors import ConfigError, JudgeError, VerbatimError
from core.common.settings import Settings, from_env
from tests.conftest import REPO, load_file
from tests.core.conftest import PUBLIC, quotes_of
from tests.fakes import quoting


def test_the_shipped_judge_is_the_model_its_card_and_training_record_name():
    digest = hashlib.sha256(MODEL_FILE.read_bytes()).hexdigest()
    record = json.loads((MODEL_DIR / "training.json").read_text())
    assert record["sha256"] == digest
    assert digest in (MODEL_DIR / "MODEL_CARD.md").read_text()


def test_probabilities_come_back_in_the_candidates_order_and_from_the_cache_unchanged():
    judge = Judge()
    candidates = [
        candidate_text("Care guide", ("Oiled surfaces",), "Re-oil oiled worktops every six months."),
        candidate_text("Warranty", ("Duration",), "All our furniture carries a 5-year warranty."),
        candidate_text(
            "Warranty", ("Duration",), "After the warranty ends we still repair our work at 45 EUR per hour."
        ),
    ]
    first = judge.score("How long is the warranty?", candidates)
    assert first.shape == (3,) and np.all((first >= 0) & (first <= 1))
    reversed_order = judge.score("How long is the warranty?", candidates[::-1])
    assert np.allclose(reversed_order[::-1], first)
    assert judge.score("How long is the warranty?", []).shape == (0,)


class _TwoInputSession:
    """An onnxruntime session stand-in for a judge graph that reads no token types (e5's export)."""

    def __init__(self) -> None:
        self.feeds: list[dict] = []

    def get_inputs(self):
        return [type("Input", (), {"name": name})() for name in ("input_ids", "attention_mask")]

    def run(self, _outputs, feed):
        self.feeds.append(feed)
        return [feed["attention_mask"].sum(axis=1, keepdims=True).astype(np.float32) - 4.0]


def test_a_judge_in_e5_s_layout_reads_each_pair_unpadded_and_feeds_only_the_inputs_its_graph_takes(tmp_path):
    from tokenizers import Tokenizer, models, pre_tokenizers, processors

    vocab = {"<s>": 0, "<pad>": 1, "</s>": 2, "<unk>": 3, "how": 4, "long": 5, "warranty": 6, "two": 7, "years": 8}
    tokenizer = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>", pair="<s> $A </s> </s> $B </s>", special_tokens=[("<s>", 0), ("</s>", 2)]
    )
    tokenizer.save(str(tmp_path / "tokenizer.json"))
    judge = Judge(tmp_path / "judge.onnx")
    judge._tokenizer = Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    judge._session = session = _TwoInputSession()

    probabilities = judge.score("how long", ["two years", "warranty two years"])

    short, long = session.feeds
    assert set(short) == set(long) == {"input_ids", "attention_mask"}
    # One pair a call, as long as it is: no <pad> (id 1) for a batch partner's sake.
    assert short["input_ids"].tolist() == [[0, 4, 5, 2, 2, 7, 8, 2]]
    assert long["input_ids"].shape == (1, 9) and long["attention_mask"].all()
    assert probabilities[1] > probabilities[0]


def test_a_pair_is_rated_the_same_alone_and_among_others():
    # The int8 model scales each call's activations by the whole batch: batched, a pair's probability moved with
    # what it was asked with (by up to 0.42), so whether a quote was shown could too.
    question = "How much is a spiral staircase?"
    candidates = [
        candidate_text("Price list", ("Staircases",), "Straight staircase in oak, 12 steps: 4,200 EUR."),
        candidate_text("Price list", ("Staircases", "Spiral"), "Spiral staircases are made to order."),
        candidate_text("Terms", ("Delivery", "Zones"), "Zone B, 15 to 50 km: 85 EUR, unloading at the kerb included."),
    ]
    together = Judge(threads=2).score(question, candidates)  # two pairs at a time, each alone
    alone = [Judge().score(question, [c])[0] for c in candidates]
    assert together.tolist() == alone


def test_a_candidate_given_twice_in_one_call_is_read_once():
    judge = Judge()
    read: list[int] = []
    run = judge._run
    judge._run = lambda question, texts: read.append(len(texts)) or run(question, texts)  # type: ignore[method-assign]
    same = candidate_text("Warranty", ("Periods",), "Joinery carries a five year warranty.")
    first, second = judge.score("How long is the warranty?", [same, same])
    assert read == [1] and first == second


def test_the_judge_rates_an_answer_above_text_on_another_topic():
    judge = shared()
    answer, care, hours = judge.score(
        "How long is the warranty?",
        [
            candidate_text("Bike shop terms", ("Warranty",), "New frames carry a 5-year warranty against defects."),
            candidate_text("Care guide", ("Oiled surfaces",), "Re-oil oiled worktops every six months."),
            candidate_text("Bike shop", ("Opening hours",), "We are open Monday to Friday from 9 to 18."),
        ],
    )
    # The multilingual judge rates this lone sentence 0.31, under the veto's threshold on its own (MODEL_CARD.md,
    # "Limits"): what it must do is rank the answer clearly above text on another topic.
    assert answer > care + 0.1 and answer > hours + 0.1
    out_of_domain = judge.score(
        "What is the capital of France?", [candidate_text("Price list", ("Worktops",), "Oak: 310 EUR.")]
    )
    assert out_of_domain[0] < DEFAULT.judge_threshold


class StubJudge:
    """A judge whose verdict the test sets: every candidate gets `probability`."""

    def __init__(self, probability: float) -> None:
        self.probability = probability
        self.asked: list[tuple[str, list[str]]] = []

    def score(self, question, candidates):
        self.asked.append((question, list(candidates)))
        return np.full(len(candidates), self.probability, dtype=np.float32)


def _answerer(knowledge, probability):
    judge = StubJudge(probability)
    return ExtractiveAnswerer(knowledge.embedder, judge=judge, policy=replace(DEFAULT, judge_threshold=0.25)), judge


def test_the_judge_vetoes_what_similarity_would_have_quoted(knowledge):
    hits = knowledge.retrieve(
        "How much is a walnut worktop?", PUBLIC, policy_for(knowledge.settings).min_similarity
    ).hits
    accepting, judge = _answerer(knowledge, 0.9)
    assert accepting.answer("How much is a walnut worktop?", hits).found
    # It read the best candidates by similarity, each under its document and section.
    question, candidates = judge.asked[0]
    assert question == "How much is a walnut worktop?" and 0 < len(candidates) <= DEFAULT.judged
    assert all(" › " in c for c in candidates)
    vetoing, _ = _answerer(knowledge, 0.1)
    assert not vetoing.answer("How much is a walnut worktop?", hits).found


def test_a_checked_calculation_is_not_vetoed(knowledge):
    question = "How much is 3 m of oak worktop with delivery 30 km away?"
    hits = knowledge.retrieve(question, PUBLIC, policy_for(knowledge.settings).min_similarity).hits
    draft = _answerer(knowledge, 0.0)[0].answer(question, hits)
    assert draft.found and draft.calculations


class PartJudge(StubJudge):
    """Accepts one candidate of one question only (the last similarity proposes for a part), or none."""

    def __init__(self, accepted_question: str) -> None:
        super().__init__(0.0)
        self.accepted_question = accepted_question

    def score(self, question, candidates):
        self.asked.append((question, list(candidates)))
        out = np.full(len(candidates), 0.05, dtype=np.float32)
        if question == self.accepted_question and candidates:
            out[-1] = 0.9
        return out


def test_each_part_of_a_compound_question_is_judged_on_its_own(knowledge):
    question = "can I have glass in a front and what does it cost"
    hits = knowledge.retrieve(question, PUBLIC, policy_for(knowledge.settings).min_similarity).hits
    judge = PartJudge("what does it cost")
    answerer = _sweep_answerer()(knowledge.embedder, judge, replace(DEFAULT, judge_threshold=0.25))
    draft = answerer.answer(question, hits)
    # The whole was rated 0.05, but one part is answered: the question is, and the part's best quote is shown.
    assert {q for q, _ in judge.asked} == {question, "can I have glass in a front", "what does it cost"}
    assert draft.found
    # The one sentence the judge accepted for the part is quoted, though similarity ranked it last of those judged.
    accepted = next(c for q, c in judge.asked if q == "what does it cost")[-1]
    shown = {
        candidate_text(hits[c.fragment - 1].fragment.title, hits[c.fragment - 1].fragment.section, c.quote)
        for c in draft.claims
    }
    assert accepted in shown
    # Judged as a whole only, the same question is refused; and no part accepted refuses it too.
    answerer.judge_parts = False
    assert not answerer.answer(question, hits).found
    nobody = ExtractiveAnswerer(
        knowledge.embedder, judge=PartJudge("something else"), policy=replace(DEFAULT, judge_threshold=0.25)
    )
    assert not nobody.answer(question, hits).found


def test_a_clause_of_words_of_asking_alone_is_no_part_to_judge(knowledge):
    # "vous louez des vélos ? combien ?": "combien" asks about nothing of its own; judged as a part, it cost a
    # judge call per candidate and could accept what the whole question does not ask.
    question = "How much is a walnut worktop? combien ?"
    hits = knowledge.retrieve(question, PUBLIC, policy_for(knowledge.settings).min_similarity).hits
    answerer, judge = _answerer(knowledge, 0.9)
    answerer.answer(question, hits)
    assert [q for q, _ in judge.asked] == [question]
    compound = "How much is a walnut worktop? and how heavy is it ?"
    answerer.answer(compound, hits)
    assert "how heavy is it" in {q for q, _ in judge.asked}  # a clause that names something is still a part


class SurePick(StubJudge):
    """Rates every candidate `probability`, but the last it is given (similarity's lowest judged) `pick`."""

    def __init__(self, probability: float, pick: float = 0.95) -> None:
        super().__init__(probability)
        self.pick = pick

    def score(self, question, candidates):
        out = super().score(question, candidates)
        if len(out):
            out[-1] = self.pick
        return out


def _shown(hits, draft):
    return [
        candidate_text(hits[c.fragment - 1].fragment.title, hits[c.fragment - 1].fragment.section, c.quote)
        for c in draft.claims
    ]


@pytest.mark.parametrize("others, place", [(0.9, 1), (0.6, 0)])
def test_the_judge_s_sure_pick_is_shown_after_similarity_s_first_or_before_it_when_rated_clearly_above(
    knowledge, others, place
):
    question = "How much is a walnut worktop?"
    hits = knowledge.retrieve(question, PUBLIC, policy_for(knowledge.settings).min_similarity).hits
    plain = ExtractiveAnswerer(
        knowledge.embedder, judge=StubJudge(others), policy=replace(DEFAULT, judge_threshold=0.25)
    ).answer(question, hits)
    judge = SurePick(others)
    draft = ExtractiveAnswerer(knowledge.embedder, judge=judge, policy=replace(DEFAULT, judge_threshold=0.25)).answer(
        question, hits
    )
    pick = judge.asked[0][1][-1]
    assert pick not in _shown(hits, plain)[:2]
    shown = _shown(hits, draft)
    # Similarity's first rated 0.9 stays first and the pick (0.95) comes second; rated 0.6, the pick goes first.
    assert shown[place] == pick and shown[1 - place] == _shown(hits, plain)[0]
    # A best candidate the judge is not sure of (0.8) is not added.
    unsure = ExtractiveAnswerer(
        knowledge.embedder, judge=SurePick(0.6, 0.8), policy=replace(DEFAULT, judge_threshold=0.25)
    )
    assert _shown(hits, unsure.answer(question, hits)) == _shown(hits, plain)


def _second_look(settings, knowledge, probability, second_floor):
    # A floor no hit reaches, so every question is refused at first and only the second look can answer.
    knowledge.settings = replace(knowledge.settings, min_similarity=0.95, second_look_floor=second_floor)
    judge = StubJudge(probability)
    return Pipeline(
        settings,
        knowledge,
        ExtractiveAnswerer(knowledge.embedder, judge=judge, policy=replace(DEFAULT, judge_threshold=0.25)),
    )


def test_a_refused_question_gets_a_second_look_below_the_floor_where_the_judge_must_be_surer(settings, knowledge):
    question = "How much is a walnut worktop?"
    sure = _second_look(settings, knowledge, 0.95, 0.2).answer(question, PUBLIC)
    assert sure.answered and any("walnut" in q.text.lower() for q in quotes_of(sure))
    assert all(h.score < 0.95 for h in sure.retrieved) and "second_look" in sure.timings_ms
    # A verdict that clears the usual threshold (0.25) but not the second look's (0.9) leaves the refusal as it was.
    unsure = _second_look(settings, knowledge, 0.5, 0.2).answer(question, PUBLIC)
    assert unsure.kind == "refused" and unsure.reason == "no_match" and not unsure.retrieved
    # A second-look floor at or above the floor turns it off.
    off = _second_look(settings, knowledge, 0.95, 0.95).answer(question, PUBLIC)
    assert off.kind == "refused" and "second_look" not in off.timings_ms


def test_the_second_look_answers_from_a_fragment_just_under_the_floor(extractive):
    # The care guide's fragment is less similar to the question than the floor (0.40) as a whole; the judge is sure.
    answer = extractive.answer("how much is the care kit oil?", PUBLIC)
    assert "second_look" in answer.timings_ms and answer.answered
    assert "29 EUR" in quotes_of(answer)[0].text


class BrokenJudge(StubJudge):
    def score(self, question, candidates):
        raise VerbatimError("The judge's model file can't be read.")


def test_a_second_look_that_fails_leaves_the_refusal_as_it_was(settings, knowledge):
    pipeline = _second_look(settings, knowledge, 0.95, 0.2)
    pipeline.answerer.judge = BrokenJudge(0.0)
    answer = pipeline.answer("How much is a walnut worktop?", PUBLIC)
    assert answer.kind == "refused" and answer.reason == "no_match" and not answer.error


def test_the_second_look_vetoes_a_calculation_the_judge_is_not_sure_of(settings, knowledge):
    # Above the floor a checked calculation is never vetoed; below it, code has checked the sums but not the item.
    question = "How much is 3 m of oak worktop with delivery 30 km away?"
    unsure = _second_look(settings, knowledge, 0.5, 0.2).answer(question, PUBLIC)
    assert unsure.kind == "refused" and "second_look" in unsure.timings_ms
    sure = _second_look(settings, knowledge, 0.95, 0.2).answer(question, PUBLIC)
    assert sure.answered and sure.calculations


def test_the_second_look_has_each_embedders_own_floor_and_is_off_for_a_remote_one():
    assert policy_for(from_env({})).second_look_floor == DEFAULT.second_look_floor == 0.25
    # The multilingual embedder's cosines sit on another scale: its own floor, since the judge reads its languages.
    multilingual = policy_for(from_env({"VERBATIM_EMBEDDER": "multilingual"}))
    assert multilingual.second_look_floor == MULTILINGUAL.second_look_floor == 0.80
    assert policy_for(Settings().with_multilingual()) == MULTILINGUAL
    chosen = from_env({"VERBATIM_SECOND_LOOK_FLOOR": "0.7"}).with_multilingual()
    assert policy_for(chosen).second_look_floor == 0.7
    # Off for a remote embedder, whose cosines it was never measured on.
    remote = {
        "VERBATIM_EMBEDDER": "remote",
        "VERBATIM_EMBEDDING_BASE_URL": "http://e/v1",
        "VERBATIM_EMBEDDING_MODEL": "e",
    }
    assert policy_for(from_env(remote)) == REMOTE and not second_look_on(REMOTE)


def _sweep_answerer():
    """benchmarks/_sweep_answerer.py's SweepAnswerer: the extractive answerer with the knobs only benchmarks turn."""
    return load_file(REPO / "benchmarks" / "_sweep_answerer.py").SweepAnswerer


def _fragment_vetted(knowledge, probability):
    fragment = StubJudge(probability)
    answerer = _sweep_answerer()(knowledge.embedder, StubJudge(0.9), replace(DEFAULT, judge_threshold=0.25))
    answerer.fragment_judge, answerer.fragment_threshold = fragment, 0.5
    return answerer, fragment


def test_the_fragment_judge_reads_whole_fragments_and_refuses_when_none_answers(knowledge):
    question = "How much is a walnut worktop?"
    hits = knowledge.retrieve(question, PUBLIC, policy_for(knowledge.settings).min_similarity).hits
    accepting, fragment = _fragment_vetted(knowledge, 0.9)
    assert accepting.answer(question, hits).found
    asked, texts = fragment.asked[0]
    # Each fragment the best candidates stand in, once, read whole under its document and section.
    assert asked == question and 0 < len(texts) <= DEFAULT.judged and len(set(texts)) == len(texts)
    whole = {candidate_text(h.fragment.title, h.fragment.section, h.fragment.text) for h in hits}
    assert set(texts) <= whole
    refusing, _ = _fragment_vetted(knowledge, 0.2)
    assert not refusing.answer(question, hits).found


def test_the_fragment_judge_does_not_veto_a_checked_calculation(knowledge):
    question = "How much is 3 m of oak worktop with delivery 30 km away?"
    draft = _fragment_vetted(knowledge, 0.0)[0].answer(
        question, knowledge.retrieve(question, PUBLIC, policy_for(knowledge.settings).min_similarity).hits
    )
    assert draft.found and draft.calculations


def test_the_veto_can_read_the_judge_mixed_with_similarity(knowledge):
    # benchmarks/judge_sweep.py --mix: the veto's score is (1 - mix) × the judge + mix × similarity's score.
    question = "How much is a walnut worktop?"
    hits = knowledge.retrieve(question, PUBLIC, policy_for(knowledge.settings).min_similarity).hits

    def vetted(mix, threshold):
        answerer = _sweep_answerer()(knowledge.embedder, StubJudge(0.1), replace(DEFAULT, judge_threshold=threshold))
        answerer.judge_mix = mix
        return answerer.answer(question, hits).found

    assert not vetted(0.0, 0.25)  # the judge alone: 0.1 is under 0.25
    assert vetted(0.5, 0.25)  # half of a walnut price's similarity clears it
    assert not vetted(0.5, 0.9)  # and under a high threshold the mix refuses too


def test_a_candidate_reads_as_its_document_and_section_then_the_sentence():
    assert candidate_text("Price list", ("Worktops",), "Oak: 310 EUR.") == "Price list › Worktops: Oak: 310 EUR."
    assert candidate_text("", (), "Oak: 310 EUR.") == "Oak: 310 EUR."


@pytest.mark.parametrize(
    ("question", "sentence", "fits"),
    [
        ("delivery fee 40 km away", "Zone A, up to 15 km: 40 EUR", False),
        ("delivery fee 40 km away", "Zone B, 15 to 50 km: 65 EUR", True),
        ("delivery fee 40 km away", "Zone C, over 50 km: 1.20 EUR per km", False),
        ("how many hinges for a 120 cm door", "Front height: 90 to 160 cm; Hinges per front: 3", True),
        ("how many hinges for a 120 cm door", "Front height: up to 90 cm; Hinges per front: 2", False),
        ("how much does the 180 cm table weigh", "Dining table, 180 × 90 cm: 68 kg", True),
        ("how much does the 180 cm table weigh", "Dining table, 220 × 100 cm: 92 kg", False),
        ("delivery fee 40 km away", "Delivery is free for orders over 6,000 EUR.", None),
        ("how much is delivery", "Zone A, up to 15 km: 40 EUR", None),
    ],
)
def test_figures_are_matched_by_unit_and_range(question, sentence, fits):
    quantities = [r for r in read_figures(question) if r.unit.is_quantity]
    assert fits_figures(quantities, sentence) is fits


@pytest.mark.parametrize(
    ("previous", "follow_up", "resolved"),
    [
        ("How much is a solid oak worktop?", "and how heavy is a 3 m one?", "How heavy is a 3 m solid oak worktop?"),
        ("How much is a walnut worktop?", "and how heavy is it?", "How heavy is the walnut worktop?"),
        (
            "How much is a solid oak worktop?",
            "and how much is delivery for that?",
            "How much is delivery for the solid oak worktop?",
        ),
        # "what about…" another item of the same kind asks the same question about it.
        ("What is the warranty on hinges?", "and what about the finish?", "What is the warranty on finish?"),
        # "what about…" something else stays joined: the answerer moves the question to the new topic.
        (
            "How much is a solid oak worktop?",
            "and what about delivery?",
            "How much is a solid oak worktop? and what about delivery?",
        ),
    ],
)
def test_a_follow_up_becomes_one_question_about_what_it_refers_to(previous, follow_up, resolved):
    joined = f"{previous} {follow_up}"
    assert resolve_follow_up(follow_up, previous, joined) == resolved


def test_judge_settings_are_read_and_checked():
    assert from_env({}).judge is True
    assert from_env({"VERBATIM_JUDGE": "off"}).judge is False
    assert from_env({"VERBATIM_JUDGE_THRESHOLD": "0.7"}).judge_threshold == 0.7
    with pytest.raises(ConfigError, match="VERBATIM_JUDGE must be one of on, off"):
        from_env({"VERBATIM_JUDGE": "maybe"})
    with pytest.raises(ConfigError, match="VERBATIM_JUDGE_THRESHOLD must be between"):
        from_env({"VERBATIM_JUDGE_THRESHOLD": "2"})


def test_judge_off_gives_the_similarity_answerer_of_before(fake_embedder):
    answerer = make_answerer(Settings(judge=False), DEFAULT, fake_embedder)
    assert isinstance(answerer, ExtractiveAnswerer) and answerer.judge is None
    assert make_answerer(Settings(), DEFAULT, fake_embedder).judge is shared()  # type: ignore[attr-defined]


def test_a_follow_up_moves_to_its_new_topic(extractive):
    history = [Turn("What is the warranty on hinges?", "Hinges, drawer runners and handles: 2 years.")]
    answer = extractive.answer("and what about the finish?", PUBLIC, history)
    assert answer.answered
    assert all("finish" in (q.text + " ".join(q.section)).lower() for q in quotes_of(answer))


def test_a_move_to_another_topic_is_judged_joined_and_about_the_new_topic(extractive, monkeypatch):
    judge = extractive.answerer.judge
    asked: list[str] = []
    score = judge.score
    monkeypatch.setattr(judge, "score", lambda question, texts: asked.append(question) or score(question, texts))
    history = [Turn("How much is a solid oak worktop?", "Solid oak worktop, 38 mm: 310 EUR per running metre.")]
    extractive.answer("and what about delivery?", PUBLIC, history)
    assert {"How much is a solid oak worktop delivery", "How much is a delivery"} <= set(asked)


def test_a_follow_up_the_documents_cover_is_answered(extractive):
    history = [Turn("How much is a solid oak worktop?", "Solid oak worktop, 38 mm: 310 EUR per running metre.")]
    answer = extractive.answer("and how heavy is a 3 m one?", PUBLIC, history)
    assert answer.standalone_question == "How heavy is a 3 m solid oak worktop?"
    assert any("kg" in q.text for q in quotes_of(answer))


@pytest.fixture
def second_opinion(settings, knowledge, fake_server):
    answerer = LLMAnswerer(fake_server.url + "/v1", "test-model", timeout=10.0, base_delay=0.01, judge=shared())
    return Pipeline(settings, knowledge, answerer)


def test_the_judge_as_a_second_opinion_drops_the_llm_s_near_miss(second_opinion, fake_server):
    fake_server.handler = quoting("2 years from delivery", "45 EUR per hour")
    answer = second_opinion.answer("How long is the warranty on hinges?", PUBLIC)
    shown = [q.text for q in quotes_of(answer)]
    assert answer.answered and any("2 years" in text for text in shown)
    assert not any("45 EUR per hour" in text for text in shown)


def test_an_llm_answer_made_only_of_near_misses_is_refused_by_the_second_opinion(second_opinion, fake_server):
    fake_server.handler = quoting("45 EUR per hour")
    answer = second_opinion.answer("How long is the warranty on hinges?", PUBLIC)
    assert (answer.kind, answer.reason) == ("refused", "not_found")
    assert answer.model_calls == 1


@pytest.mark.parametrize(
    ("question", "sentence"),
    [
        # Running text: another figure in the unit may be about something else, so it decides nothing.
        (
            "how far in advance for 2 weeks of holiday",
            "Leave of 10 days must be requested at least 6 weeks in advance.",
        ),
        ("can I book 1st class for a 5h trip", "1st class is allowed for journeys longer than 4 hours one way."),
    ],
)
def test_figures_in_running_text_decide_nothing(question, sentence):
    quantities = [r for r in read_figures(question) if r.unit.is_quantity]
    assert fits_figures(quantities, sentence) is not False


def test_a_question_that_fills_the_judge_s_window_is_judged_not_crashed():
    long_question = "I am planning a kitchen with an island and tall cupboards, " * 12 + "how much is an oak worktop?"
    scores = shared().score(long_question, [candidate_text("Price list", ("Worktops",), "Oak worktop: 310 EUR.")])
    assert scores.shape == (1,) and 0 <= scores[0] <= 1


def test_a_compound_question_with_how_about_is_not_a_follow_up(extractive):
    answer = extractive.answer("How much is a solid oak worktop, and how about delivery?", PUBLIC)
    assert any("310 EUR" in q.text for q in quotes_of(answer))


def test_a_row_holding_one_of_several_asked_values_still_fits():
    quantities = [r for r in read_figures("How much is delivery for 10 km? and for 40 km?") if r.unit.is_quantity]
    assert fits_figures(quantities, "Zone A, up to 15 km: 40 EUR") is True
    assert fits_figures(quantities, "Zone C, 50 to 150 km: 140 EUR") is False


def test_a_row_holds_a_stated_quantity_only_inside_its_range():
    asked = stated_quantities("How much is delivery 30 km away?")
    assert row_holds(asked, "Zone B, 15 to 50 km: 85 EUR.")
    assert not row_holds(asked, "Zone A, up to 15 km: 40 EUR.")
    assert row_holds(stated_quantities("delivery 200 km away"), "Beyond 150 km: priced on request.")
    # Not a row: running text is not indexed by its figures.
    assert not row_holds(asked, "We deliver 15 to 50 km from the workshop on Tuesdays.")
    assert not row_holds([], "Zone B, 15 to 50 km: 85 EUR.")


@pytest.mark.parametrize(
    ("question", "row", "fits"),
    [
        ("powerflush for 14 radiators price", "Job: Powerflush, up to 10 radiators; Price: £480", False),
        ("powerflush for 8 radiators price", "Job: Powerflush, up to 10 radiators; Price: £480", True),
        ("commission on a 150 guest wedding", "Event size: 100 to 299 guests; Commission: 3%", True),
        ("commission on a 50 guest wedding", "Event size: 100 to 299 guests; Commission: 3%", False),
        # Another noun, or a count no range bounds, decides nothing.
        ("a room for 30 people, price?", "Room: Harbour, up to 12 guests; Price: £90", None),
        ("si j'annule 15 jours avant", "Annulation: jusqu'à 30 jours avant; Frais: 0 EUR", None),
    ],
)
def test_a_count_of_a_named_thing_is_held_by_a_rows_range_of_the_same_thing(question, row, fits):
    asked = stated_quantities(question)
    assert fits_figures(asked, row) is fits
    assert row_holds(asked, row) is bool(fits)


def test_the_llms_second_opinion_keeps_its_own_bar_unless_the_judge_threshold_is_set():
    llm = {"VERBATIM_ANSWERER": "llm", "VERBATIM_LLM_BASE_URL": "http://m/v1", "VERBATIM_LLM_MODEL": "m"}
    embedder = object()
    plain = from_env(llm)
    assert make_answerer(plain, policy_for(plain), embedder).judge_threshold == 0.25  # type: ignore[arg-type, attr-defined]
    chosen = from_env({**llm, "VERBATIM_JUDGE_THRESHOLD": "0.5"})
    assert make_answerer(chosen, policy_for(chosen), embedder).judge_threshold == 0.5  # type: ignore[arg-type, attr-defined]


def test_a_judge_without_its_model_raises_its_own_error_naming_the_file(tmp_path):
    missing = tmp_path / "judge.onnx"
    with pytest.raises(JudgeError, match=f"The answerability judge {re.escape(str(missing))} is missing"):
        Judge(missing, tokenizer_path=MODEL_DIR / "tokenizer.json").score("how long is the warranty?", ["Two years."])


def test_a_preloaded_judge_loads_once_on_its_own_thread_and_a_failed_preload_still_raises_when_asked(tmp_path):
    judge = Judge()
    judge.preload()
    judge.preload()  # once: the second finds the first under way
    assert [t.name for t in threading.enumerate()].count("judge-load") <= 1
    for _ in range(600):  # loaded with no question asked
        if judge._session is not None:
            break
        time.sleep(0.05)
    assert judge._session is not None, "the preload loaded the model on its own"
    rated = judge.score("How long is the warranty?", ["Warranty › Periods: Joinery carries a five year warranty."])
    assert rated.shape == (1,)
    missing = Judge(tmp_path / "judge.onnx", tokenizer_path=MODEL_DIR / "tokenizer.json")
    missing.preload()
    with pytest.raises(JudgeError, match="is missing"):
        missing.score("how long is the warranty?", ["Two years."])
