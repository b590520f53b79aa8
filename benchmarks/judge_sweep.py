"""The answers themselves under each way of using the judges, on every gold set at once.

Run: python benchmarks/judge_sweep.py                               # the three English gold sets
     python benchmarks/judge_sweep.py --sets valid-en,valid-de,valid-fr,valid-es   # where a point is chosen
     python benchmarks/judge_sweep.py --sets demo,policies --fragment-model var/fragment-judge/fragment-judge.onnx
     python benchmarks/judge_sweep.py --model var/new-judge/judge.onnx --sentence 0.25,0.4 --floor 0.35,0.40
     python benchmarks/judge_sweep.py --fragment off --sets demo,heldout --second-floor off,0.25 --second-threshold 0.9
     python benchmarks/judge_sweep.py --sets QUESTIONS.jsonl:KNOWLEDGE_DIR --limit 3   # any set; its first questions

Each set is indexed once and every question asked through the real pipeline (`Pipeline.answer`, as
`verbatim eval` asks it) once per row of the grid: the sentence judge's threshold, the fragment-level
judge's threshold (`off`: not asked), similarity's own two, the retrieval floor
(`VERBATIM_MIN_SIMILARITY`) and the found-threshold (`VERBATIM_FOUND_THRESHOLD`), and the second look's
floor and judge threshold for refused questions (`VERBATIM_SECOND_LOOK_FLOOR`, `…_THRESHOLD`). `--model` puts another
sentence-judge export in the shipped one's place, so a retrained judge is compared through the same
answers. The judges cache the pairs they have read, so a row after the first costs retrieval and
similarity only. A row is worth keeping only when it moves more than one set; the point is one row that
serves them all.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from _sweep_answerer import SweepAnswerer  # noqa: E402

from core.answering import judge as judge_module  # noqa: E402
from core.answering.pipeline import Pipeline  # noqa: E402
from core.answering.policy import LIMITS  # noqa: E402
from core.common.settings import Settings  # noqa: E402
from core.measuring.evaluation import Report, asked, judge, load_questions  # noqa: E402
from core.retrieval.knowledge import KnowledgeBase  # noqa: E402

SETS = {
    "demo": (ROOT / "evals" / "demo.jsonl", ROOT / "knowledge"),
    "policies": (ROOT / "evals" / "policies.jsonl", ROOT / "evals" / "policies" / "knowledge"),
    "clapnq": (ROOT.parent / "shared/evals/clapnq/questions.jsonl", ROOT.parent / "shared/evals/clapnq/knowledge"),
    # The synthetic businesses no judge trains on: made by `python scripts/heldout_eval.py var/heldout`.
    "heldout": (ROOT / "var" / "heldout" / "questions.jsonl", ROOT / "var" / "heldout" / "knowledge"),
    "de": (ROOT / "evals" / "de" / "questions.jsonl", ROOT / "evals" / "de" / "knowledge"),
    "fr": (ROOT / "evals" / "fr" / "questions.jsonl", ROOT / "evals" / "fr" / "knowledge"),
}


# sentence, fragment, floor, found (None: default), mix, each part of a compound question judged on its own,
# the second look's floor (None: default; `off` is given as 1.0) and its judge threshold (None: default)
Row = tuple[float, float | None, float | None, float | None, float, bool, float | None, float | None]


def rows_for(
    parts: list[tuple[Path, Path]],
    grid: list[Row],
    sentence: judge_module.Judge | None,
    fragment: judge_module.Judge | None,
    limit: int | None = None,
) -> list[dict]:
    """Each grid row's metrics on a set, its parts (a language's businesses) pooled question by question; `limit`:
    the first questions of each part only."""
    reports = [Report() for _ in grid]
    for questions_file, knowledge in parts:
        for report, outcomes in zip(
            reports, _outcomes(questions_file, knowledge, grid, sentence, fragment, limit), strict=True
        ):
            report.outcomes.extend(outcomes)
    out = []
    for report in reports:
        m = report.metrics()
        out.append(
            {
                "correct": m["correct_rate"],
                "refused": m["refusal_rate"],
                "first": m["first_quote_correct"],
                "ood": m["out_of_domain_refusal_rate"],
            }
        )
    return out


def _outcomes(
    questions_file: Path,
    knowledge: Path,
    grid: list[Row],
    sentence: judge_module.Judge | None,
    fragment: judge_module.Judge | None,
    limit: int | None,
) -> list[list]:
    questions = load_questions(questions_file)[:limit]
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        settings = replace(Settings(), knowledge_dir=knowledge, data_dir=Path(tmp))
        kb = KnowledgeBase(settings)
        pipeline = Pipeline(kb.settings, kb)
        try:
            kb.sync()
            base = pipeline.policy
            answerer = SweepAnswerer(kb.embedder, sentence or judge_module.shared(), base)
            pipeline.answerer = answerer
            for sentence_threshold, fragment_threshold, floor, found_threshold, mix, parts, second, surer in grid:
                pipeline.policy = answerer.policy = replace(
                    base,
                    min_similarity=base.min_similarity if floor is None else floor,
                    second_look_floor=base.second_look_floor if second is None else second,
                    second_look_threshold=base.second_look_threshold if surer is None else surer,
                    found_threshold=base.found_threshold if found_threshold is None else found_threshold,
                    judge_threshold=sentence_threshold,
                )
                answerer.judge_mix = mix
                answerer.judge_parts = parts
                answerer.fragment_judge = fragment if fragment_threshold is not None else None
                answerer.fragment_threshold = fragment_threshold or 0.0
                out.append([judge(gold, answer) for gold, answer in asked(pipeline, questions)])
        finally:
            pipeline.close()
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sets", default="demo,policies,clapnq", help="set names, or QUESTIONS.jsonl:KNOWLEDGE_DIR")
    parser.add_argument("--limit", type=int, help="the first N questions of each set only")
    parser.add_argument("--fragment-model", type=Path, default=ROOT / "var" / "fragment-judge" / "fragment-judge.onnx")
    parser.add_argument("--model", type=Path, default=None, help="a sentence-judge export in the shipped one's place")
    parser.add_argument("--sentence", default="0.25", help="sentence-judge thresholds, comma-separated")
    parser.add_argument("--floor", default="default", help="retrieval floors ('default': the setting's)")
    parser.add_argument("--found", default="default", help="similarity found-thresholds ('default': the setting's)")
    parser.add_argument(
        "--fragment", default="off,0.1,0.2,0.3,0.4,0.5,0.6,0.7", help="fragment-judge thresholds ('off': not asked)"
    )
    parser.add_argument(
        "--mix", default="0", help="similarity's share in the veto's score, comma-separated (0: the judge alone)"
    )
    parser.add_argument(
        "--second-floor", default="default", help="the second look's floors ('default': the setting's; 'off')"
    )
    parser.add_argument(
        "--second-threshold", default="default", help="the second look's judge thresholds ('default': the setting's)"
    )
    parser.add_argument(
        "--parts", default="on", help="judge each part of a compound question on its own: on, off or on,off"
    )
    args = parser.parse_args()
    fragment = None
    if args.fragment_model.exists():
        fragment = judge_module.Judge(
            args.fragment_model,
            max_tokens=LIMITS.judge_fragment_tokens,
            tokenizer_path=judge_module.TOKENIZER_FILE,
        )
    sentence = judge_module.Judge(args.model) if args.model else None

    def values(text: str, off: str) -> list[float | None]:
        return [None if v == off else float(v) for v in text.split(",")]

    grid: list[Row] = [
        (float(s), f, floor, found, float(mix), parts == "on", second, surer)
        for parts in args.parts.split(",")
        for mix in args.mix.split(",")
        for s in args.sentence.split(",")
        for f in values(args.fragment, "off")
        if f is None or fragment is not None
        for floor in values(args.floor, "default")
        for found in values(args.found, "default")
        for second in values(args.second_floor.replace("off", "1"), "default")  # a floor of 1 finds nothing more
        for surer in values(args.second_threshold, "default")
    ]
    names = args.sets.split(",")
    sets = {name: [pair] for name, pair in SETS.items()}
    sets |= {name: [(Path(name.split(":", 1)[0]), Path(name.split(":", 1)[1]))] for name in names if ":" in name}
    with tempfile.TemporaryDirectory(prefix="verbatim-valid-") as tmp:
        if any(n.startswith(("valid-", "businesses-")) for n in names):
            import quality  # benchmarks/quality.py, beside this one: its business and validation sets

            sets |= quality.business_sets() | quality.validation_sets(Path(tmp))
        unknown = [n for n in names if n not in sets]
        if unknown:
            parser.error(f"unknown sets {', '.join(unknown)}; known: {', '.join(sorted(sets))}")
        results = {name: rows_for(sets[name], grid, sentence, fragment, args.limit) for name in names}

    def shown(value: float | None, none: str) -> str:
        return none if value is None else f"{value:.2f}"

    print(
        f"{'parts':>5} {'mix':>5} {'sentence':>8} {'fragment':>8} {'floor':>7} {'found':>7} {'second':>7} "
        + f"{'surer':>7}  "
        + "  ".join(f"{n + ' correct/refused/first':>34}" for n in names)
    )
    for i, (s, f, floor, found, mix, parts, second, surer) in enumerate(grid):
        cells = [
            f"{results[n][i]['correct']:>9.1%} {results[n][i]['refused']:>7.1%} {results[n][i]['first']:>7.1%}"
            f" ood {results[n][i]['ood']:.0%}"
            for n in names
        ]
        where = f"{'on' if parts else 'off':>5} {mix:>5.2f} {s:>8.2f} {shown(f, 'off'):>8} "
        where += f"{shown(floor, 'default'):>7} "
        where += f"{shown(found, 'default'):>7} {'off' if second == 1.0 else shown(second, 'default'):>7} "
        where += f"{shown(surer, 'default'):>7}  "
        print(where + "  ".join(f"{c:>34}" for c in cells), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
