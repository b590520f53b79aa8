"""The answerability judge on its own: accuracy, AUC and latency per pair, on the training script's
validation split and on each gold set, beside today's similarity score.

Run: python benchmarks/judge.py                        # validation split + the three gold sets
     python benchmarks/judge.py --sets demo            # one set (demo, policies, clapnq, heldout)
     python benchmarks/judge.py --model PATH.onnx      # another export (its tokenizer.json beside it)
     python benchmarks/judge.py --fragment-model PATH  # a fragment-level export too (default: var/fragment-judge/)
     python benchmarks/judge.py --sets QUESTIONS.jsonl:KNOWLEDGE_DIR --limit 3   # any gold set; its first questions

For a gold set, each question is retrieved as the product retrieves it (default floor), its candidate
sentences are ranked by the extractive score, and each scorer gives the question the score of its best
candidate among the policy's top `judged` ("bare": the judge reading the sentence alone, without its document and
section, to measure what that context is worth). Then, per scorer:
- AUC: answerable questions against those that must be refused;
- the threshold that set needs to refuse its target share of must-refuse questions, and what share of
  answerable questions still clears it. The spread of those thresholds across sets is the point: a scorer
  whose needed threshold moves from set to set can't have one default.
The validation split needs `.venv-train` (it reads the training data as scripts/train_judge.py does).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from core.answering import judge as judge_module  # noqa: E402
from core.answering.extractive import ExtractiveAnswerer  # noqa: E402
from core.answering.judge import Judge, candidate_text  # noqa: E402
from core.answering.policy import DEFAULT, LIMITS, policy_for  # noqa: E402
from core.common.language import detect  # noqa: E402
from core.common.questions import SCOPES  # noqa: E402
from core.common.settings import Settings  # noqa: E402
from core.measuring.evaluation import load_questions  # noqa: E402
from core.retrieval.knowledge import KnowledgeBase  # noqa: E402

CLAPNQ = ROOT.parent / "shared" / "evals" / "clapnq"
SETS = {
    "demo": (ROOT / "evals" / "demo.jsonl", ROOT / "knowledge", 0.97),
    "policies": (ROOT / "evals" / "policies.jsonl", ROOT / "evals" / "policies" / "knowledge", 0.85),
    "clapnq": (
        ROOT.parent / "shared/evals/clapnq/questions.jsonl",
        ROOT.parent / "shared/evals/clapnq/knowledge",
        0.70,
    ),
    # The synthetic businesses no judge trains on: made by `python scripts/heldout_eval.py var/heldout`.
    "heldout": (ROOT / "var" / "heldout" / "questions.jsonl", ROOT / "var" / "heldout" / "knowledge", 0.85),
}


def auc(scores: np.ndarray, labels: np.ndarray) -> float:
    """The chance that a random positive outscores a random negative (ties count half)."""
    pos, neg = scores[labels == 1], scores[labels == 0]
    if not len(pos) or not len(neg):
        return float("nan")
    greater = (pos[:, None] > neg[None, :]).sum() + 0.5 * (pos[:, None] == neg[None, :]).sum()
    return float(greater / (len(pos) * len(neg)))


def needed(scores: np.ndarray, labels: np.ndarray, refuse: float) -> tuple[float, float]:
    """The lowest threshold that refuses `refuse` of the negatives, and the share of positives at or over it."""
    negatives = np.sort(scores[labels == 0])
    if not len(negatives):
        return float("nan"), float("nan")
    k = int(np.ceil(refuse * len(negatives))) - 1
    threshold = float(np.nextafter(negatives[k], np.inf))
    return threshold, float((scores[labels == 1] >= threshold).mean())


def validation(judge: Judge, form: str = "sentence") -> None:
    spec = importlib.util.spec_from_file_location("train_judge", ROOT / "scripts" / "train_judge.py")
    assert spec and spec.loader
    train_judge = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(train_judge)
    _, val, _ = train_judge.fragment_examples() if form == "fragment" else train_judge.examples()
    started = time.perf_counter()
    scores = np.array([judge.score(q, [c])[0] for q, c, _ in val])
    per_pair = (time.perf_counter() - started) / len(val) * 1000
    labels = np.array([y for _, _, y in val])
    accuracy = float(((scores >= 0.5) == (labels == 1)).mean())
    recall = float((scores[labels == 1] >= 0.5).mean())
    print(
        f"{form} validation split: {len(val)} pairs ({labels.sum()} answering)  AUC {auc(scores, labels):.3f}  "
        f"accuracy@0.5 {accuracy:.1%}  recall@0.5 {recall:.1%}  {per_pair:.1f} ms per pair (one at a time)"
    )


def gold_set(
    name: str, judge: Judge, fragment: Judge | None = None, limit: int | None = None
) -> dict[str, tuple[float, float, float]]:
    if ":" in name:  # a gold set given by its files, held to the policies' share of refusals
        questions_file, knowledge = map(Path, name.split(":", 1))
        refuse = SETS["policies"][2]
    else:
        questions_file, knowledge, refuse = SETS[name]
    questions = load_questions(questions_file)[:limit]
    with tempfile.TemporaryDirectory() as tmp:
        settings = replace(Settings(), knowledge_dir=knowledge, data_dir=Path(tmp))
        kb = KnowledgeBase(settings)
        kb.sync()
        policy = policy_for(kb.settings)
        answerer = ExtractiveAnswerer(kb.embedder, policy=policy)
        rows: dict[str, list[float]] = {"similarity": [], "judge": [], "mix": [], "bare": []}
        if fragment is not None:
            rows |= {"fragment": [], "both": [], "mean": []}
        labels = []
        pairs, judge_ms = 0, 0.0
        for gold in questions:
            hits = kb.retrieve(gold.question, SCOPES[gold.audience], policy.min_similarity).hits
            labels.append(1 if gold.expect == "answer" else 0)
            ranking = answerer._score([gold.question], hits, detect(gold.question))[0][: policy.judged] if hits else []
            if not ranking:
                for scores in rows.values():
                    scores.append(-1.0)
                continue
            texts = [candidate_text(hits[n - 1].fragment.title, hits[n - 1].fragment.section, s) for _, n, s in ranking]
            started = time.perf_counter()
            probabilities = judge._run(gold.question, texts)
            judge_ms += (time.perf_counter() - started) * 1000
            pairs += len(texts)
            similarity = np.array([v for v, _, _ in ranking])
            rows["similarity"].append(float(similarity.max()))
            rows["judge"].append(float(probabilities.max()))
            # Half the probability, half the similarity clipped to 0..1, for the best candidate by that mix.
            rows["mix"].append(float(np.max(0.5 * probabilities + 0.5 * np.clip(similarity, 0, 1))))
            rows["bare"].append(float(judge._run(gold.question, [s for _, _, s in ranking]).max()))
            if fragment is not None:
                # The fragments the best candidates stand in, read whole. "both": the lower of the two judges;
                # "mean": their mean.
                read = [hits[n - 1].fragment for n in dict.fromkeys(n for _, n, _ in ranking)]
                whole = fragment._run(gold.question, [candidate_text(f.title, f.section, f.text) for f in read])
                rows["fragment"].append(float(whole.max()))
                rows["both"].append(min(float(whole.max()), float(probabilities.max())))
                rows["mean"].append((float(whole.max()) + float(probabilities.max())) / 2)
        kb.close()
    y = np.array(labels)
    print(
        f"{name}: {len(y)} questions ({y.sum()} answerable); judge {judge_ms / max(1, pairs):.2f} ms per pair "
        f"in batches of up to {DEFAULT.judged}"
    )
    out = {}
    for scorer, values in rows.items():
        scores = np.array(values)
        threshold, kept = needed(scores, y, refuse)
        out[scorer] = (auc(scores, y), threshold, kept)
        print(
            f"  {scorer:<11} AUC {out[scorer][0]:.3f}   refusing {refuse:.0%} needs threshold {threshold:.3f}, "
            f"which keeps {kept:.1%} of answerable"
        )
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sets", default="validation,demo,policies,clapnq")
    parser.add_argument("--model", type=Path, default=None)
    parser.add_argument("--fragment-model", type=Path, default=ROOT / "var" / "fragment-judge" / "fragment-judge.onnx")
    parser.add_argument("--limit", type=int, help="the first N questions of each gold set only")
    args = parser.parse_args()
    if args.model:
        judge_module.TOKENIZER_FILE = args.model.parent / "tokenizer.json"
        judge = Judge(args.model)
    else:
        judge = judge_module.shared()
    print(f"judge {judge.id}")
    fragment = None
    if args.fragment_model.exists():
        fragment = Judge(
            args.fragment_model,
            max_tokens=LIMITS.judge_fragment_tokens,
            tokenizer_path=judge_module.TOKENIZER_FILE,
        )
        print(f"fragment judge {fragment.id}")
    results = {}
    for name in args.sets.split(","):
        if name == "validation":
            validation(judge)
            if fragment is not None:
                validation(fragment, "fragment")
        else:
            results[name] = gold_set(name, judge, fragment, args.limit)
    if len(results) > 1:
        print("threshold each set needs, per scorer (spread = max - min):")
        for scorer in next(iter(results.values())):
            needs = {name: r[scorer][1] for name, r in results.items()}
            spread = max(needs.values()) - min(needs.values())
            print(f"  {scorer:<11} " + "  ".join(f"{n} {t:.3f}" for n, t in needs.items()) + f"   spread {spread:.3f}")
    print(json.dumps({n: {s: list(v) for s, v in r.items()} for n, r in results.items()}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
