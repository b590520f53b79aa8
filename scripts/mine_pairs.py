"""Mine the judge's hard pairs: what the product's retrieval puts before the judge for the training businesses.

Run: python scripts/mine_pairs.py var/mined.jsonl                  # every training business
     python scripts/mine_pairs.py var/mined.jsonl --limit 5        # the first 5 questions of each (a smoke test)

`train_judge.py --businesses` pairs each question with its labelled blocks and the blocks that share most words
with it. At run time the judge reads something else: similarity's best candidates for the question, as
`core/answering/extractive.py` scores and filters them (`_score`, `_fitting`), read as the judge reads them
(`extractive.judged_text`). This indexes each training business (never a validation one, never `evals/`) with
the product's defaults, asks each of its questions that follows no other, and writes similarity's 8 best
candidates for it, one JSON line each:

    {"business", "language", "question", "candidate", "label", "p", "similarity"}

`label` is the gold's: 1 when the candidate comes from a document the question names and holds every phrase of its
label, 0 otherwise (every candidate of a near miss is 0). `p` is the shipped judge's probability, `similarity` the
hit's cosine. The product's answers are not read; the labels are the writers'. `train_judge.py --mined FILE`
trains on the lines `--keep` selects: every positive, and the negatives the shipped judge rates `--hard` or
more (its mistakes and near-mistakes), plus each question's best negative by similarity.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import quality  # noqa: E402

from core import SCOPES, KnowledgeBase, Pipeline, from_env  # noqa: E402
from core.answering import extractive  # noqa: E402
from core.common.language import detect  # noqa: E402
from core.measuring.evaluation import load_questions  # noqa: E402

CANDIDATES = 8


def mine(out: Path, limit: int | None, hard: float) -> dict[str, int]:
    counts = {"questions": 0, "pairs": 0, "kept": 0, "kept_positive": 0}
    with tempfile.TemporaryDirectory() as tmp, out.open("w", encoding="utf-8") as sink:
        sets = quality.validation_sets(Path(tmp), held_out=False)
        for name, parts in sorted(sets.items()):
            language = name.split("-", 1)[1]
            for questions, knowledge in parts:
                business = knowledge.parent.name
                settings = replace(from_env(), knowledge_dir=knowledge, data_dir=Path(tmp) / business)
                kb = KnowledgeBase(settings)
                pipeline = Pipeline(kb.settings, kb)
                kb.sync()
                answerer = pipeline.answerer
                assert isinstance(answerer, extractive.ExtractiveAnswerer) and answerer.judge is not None
                floor = min(pipeline.policy.min_similarity, pipeline.policy.second_look_floor)
                for gold in [g for g in load_questions(questions) if not g.follows][:limit]:
                    counts["questions"] += 1
                    hits = kb.retrieve(gold.question, SCOPES[gold.audience], floor).hits
                    if not hits:
                        continue
                    scored = answerer._score([gold.question], hits, detect(gold.question))[0]
                    ranking = extractive._fitting(extractive.stated_quantities(gold.question), scored)[:CANDIDATES]
                    texts = [extractive.judged_text(hits, number, bare) for _, number, bare in ranking]
                    probabilities = answerer.judge.score(gold.question, texts)
                    negatives = 0
                    for (_, number, bare), text, p in zip(ranking, texts, probabilities, strict=True):
                        hit = hits[number - 1]
                        label = int(
                            gold.expect == "answer"
                            and hit.fragment.document in gold.documents
                            and all(n.lower() in bare.lower() for n in gold.quote_contains)
                        )
                        keep = bool(label or p >= hard or negatives == 0)
                        negatives += not label
                        row = {
                            "business": business,
                            "language": language,
                            "question": gold.question,
                            "candidate": text,
                            "label": label,
                            "p": round(float(p), 4),
                            "similarity": round(hit.score, 4),
                            "keep": keep,
                        }
                        sink.write(json.dumps(row, ensure_ascii=False) + "\n")
                        counts["pairs"] += 1
                        counts["kept"] += keep
                        counts["kept_positive"] += keep and label
                pipeline.close()
                sink.flush()
                print(business, counts, flush=True)
    return counts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=Path)
    parser.add_argument("--limit", type=int, help="the first N questions of each business only")
    parser.add_argument("--hard", type=float, default=0.3, help="keep the negatives the shipped judge rates this")
    args = parser.parse_args()
    print(json.dumps(mine(args.out, args.limit, args.hard)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
