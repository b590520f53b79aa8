"""`verbatim eval | calibrate`: answer quality measured on a question file, and the thresholds swept."""

from __future__ import annotations

import argparse
import json
from dataclasses import replace
from pathlib import Path
from typing import TextIO

from core import (
    Outcome,
    Settings,
    VerbatimError,
    calibration_grid,
    evaluate,
    load_questions,
    recommend,
)


def cmd_eval(args: argparse.Namespace, settings: Settings, out: TextIO) -> int:
    if args.answerer:
        settings = replace(settings, answerer=args.answerer)
        if args.answerer == "llm" and not (settings.llm_base_url and settings.llm_model):
            raise VerbatimError("--answerer llm needs VERBATIM_LLM_BASE_URL and VERBATIM_LLM_MODEL to be set.")
    questions = load_questions(Path(args.questions))
    print(f"Evaluating {len(questions)} questions on {settings.knowledge_dir} ({settings.answerer} answerer)", file=out)

    def show(outcome: Outcome) -> None:
        answer = outcome.answer
        detail = answer.reason or ", ".join(dict.fromkeys(q.caption for s in answer.statements for q in s.quotes))
        print(f"{'ok  ' if outcome.ok else 'MISS'} {outcome.gold.id:<28} {outcome.verdict:<24} {detail}", file=out)

    report = evaluate(questions, settings, progress=show)
    metrics = report.metrics()
    latency = metrics["latency_ms"].get("total", {"p50": 0.0, "p95": 0.0})
    print(file=out)
    print(
        f"retrieval hit@5        {metrics['hit_at_5']:.1%} of {metrics['answerable']} answerable "
        f"({metrics['hit_at_5_before_floor']:.1%} before the floor)",
        file=out,
    )
    print(
        f"answered               {metrics['answered_rate']:.1%}   correct {metrics['correct_rate']:.1%}   "
        f"false refusals {metrics['false_refusals']}",
        file=out,
    )
    print(
        f"first quote correct    {metrics['first_quote_correct']:.1%}   quotes per answer "
        f"{metrics['quotes_per_answer']:.2f}",
        file=out,
    )
    if metrics["calculations"]:
        print(
            f"calculations right     {metrics['calculation_right_rate']:.1%} of {metrics['calculations']} "
            "expecting a result",
            file=out,
        )
    reasons = ", ".join(f"{k} {v}" for k, v in sorted(metrics["refusal_reasons"].items()))
    print(
        f"refused (must refuse)  {metrics['refusal_rate']:.1%} of {metrics['must_refuse']} ({reasons}); "
        f"out of domain {metrics['out_of_domain_refusal_rate']:.1%}",
        file=out,
    )
    print(
        f"unverified quotes shown {metrics['unverified_quotes_shown']}   claims discarded "
        f"{metrics['claims_discarded']}   model calls {metrics['model_calls']}   "
        f"latency p50 {latency['p50']:.1f} ms, p95 {latency['p95']:.1f} ms",
        file=out,
    )
    print(f"total time             {report.seconds:.1f} s for {metrics['questions']} questions", file=out)
    if args.json:
        Path(args.json).write_text(json.dumps(report.to_json(), ensure_ascii=False, indent=2), encoding="utf-8")
        print(f"Wrote {args.json}", file=out)
    return 0


def cmd_calibrate(args: argparse.Namespace, settings: Settings, out: TextIO) -> int:
    questions = load_questions(Path(args.questions))
    # Wide enough that the recommendation does not sit at a corner of the grid for the demo or the policies set.
    floors = [round(0.10 + 0.05 * i, 2) for i in range(13)]  # 0.10 … 0.70
    if settings.judge:
        # The judge's threshold is a probability: one default for every knowledge base, swept here to check it.
        thresholds = [round(0.05 * i, 2) for i in range(1, 20)]  # 0.05 … 0.95
        axis, variable, column = "judge thresholds", "VERBATIM_JUDGE_THRESHOLD", "judge"
    else:
        thresholds = [round(0.30 + 0.05 * i, 2) for i in range(14)]  # 0.30 … 0.95
        axis, variable, column = "found-thresholds", "VERBATIM_FOUND_THRESHOLD", "found"
    print(
        f"Sweeping {len(floors)} floors x {len(thresholds)} {axis} over {len(questions)} questions "
        f"on {settings.knowledge_dir}",
        file=out,
    )
    print(f"{'floor':>6} {column:>6} {'answered':>9} {'correct':>8} {'refused':>8} {'ood refused':>12}", file=out)
    rows = list(calibration_grid(questions, settings, floors, thresholds))
    for row in rows:
        print(
            f"{row.floor:6.2f} {row.threshold:6.2f} {row.answered:9.1%} {row.correct:8.1%} {row.refused:8.1%} "
            f"{row.out_of_domain_refused:12.1%}",
            file=out,
        )
    best = recommend(rows)
    print(file=out)
    print(
        f"Recommended: VERBATIM_MIN_SIMILARITY={best.floor:.2f} {variable}={best.threshold:.2f} "
        f"(correct {best.correct:.1%}, refused {best.refused:.1%}, out of domain refused "
        f"{best.out_of_domain_refused:.1%})",
        file=out,
    )
    return 0


def add_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """eval, calibrate."""
    evaluate = commands.add_parser("eval", help="measure answer quality on a question file")
    evaluate.add_argument("questions", metavar="QUESTIONS.jsonl")
    evaluate.add_argument("--answerer", choices=("extractive", "llm"))
    evaluate.add_argument("--json", metavar="OUT", help="write per-question results and metrics as JSON")
    evaluate.add_argument("--knowledge", metavar="DIR", help="the documents folder (default: the demo KB)")
    evaluate.set_defaults(run=cmd_eval)

    calibrate = commands.add_parser("calibrate", help="sweep the similarity floor and found-threshold")
    calibrate.add_argument("questions", metavar="QUESTIONS.jsonl")
    calibrate.add_argument("--knowledge", metavar="DIR", help="the documents folder (default: the demo KB)")
    calibrate.set_defaults(run=cmd_calibrate)
