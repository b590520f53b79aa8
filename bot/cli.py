"""The `verbatim` command: index, search, and the other front ends' entry points."""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TextIO

from bot import presenter
from bot.console import chat, render
from core import (
    Attention,
    FragmentProgress,
    KnowledgeBase,
    KnowledgeError,
    Outcome,
    Pipeline,
    Settings,
    SyncReport,
    VerbatimError,
    build_report,
    clean_question,
    evaluate,
    from_env,
    load_env_file,
    load_questions,
    open_store,
    parse_span,
    read_register,
    recommend,
    run_checks,
    scope_of,
    sweep,
    sweep_data,
)

log = logging.getLogger("verbatim")


class _StderrHandler(logging.StreamHandler[TextIO]):
    """The one handler `verbatim` installs; found again and replaced when main() runs twice in a process."""


def configure_logging(level: int) -> None:
    """Log lines at `level` and above to stderr (as it is now: a test's captured stream included).

    Not logging.basicConfig: it does nothing once any handler is on the root logger, which is
    how `-v` came to log nothing wherever something else had configured logging first.
    """
    root = logging.getLogger()
    for handler in [h for h in root.handlers if isinstance(h, _StderrHandler)]:
        root.removeHandler(handler)
    handler = _StderrHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root.addHandler(handler)
    root.setLevel(level)


class _Bar:
    """A one-line progress bar: files done of all; inside a document of more than one batch, its
    fragments, rate and time left."""

    WIDTH = 24

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.file = (0, 0, "")

    def _draw(self, done: int, total: int, name: str, detail: str = "") -> None:
        filled = self.WIDTH * done // max(total, 1)
        self.stream.write(
            f"\r[{'#' * filled}{'.' * (self.WIDTH - filled)}] {done}/{total} {printable(name)[:40]:<40} {detail:<44}"
        )
        self.stream.flush()

    def __call__(self, done: int, total: int, name: str) -> None:
        self.file = (done, total, name)
        self._draw(done, total, name)

    def fragments(self, event: FragmentProgress) -> None:
        if event.done == event.total:
            return  # a small document is done in one step, and the next file redraws the bar anyway
        eta = f", {int(event.eta) // 60}:{int(event.eta) % 60:02d} left" if event.eta is not None else ""
        # Fragments are embedded 256 at a time across documents, so the one at hand may be behind the file
        # last read: name it.
        detail = f"{event.done:,}/{event.total:,} fragments, {event.rate:,.0f}/s{eta}"
        self._draw(self.file[0], self.file[1], event.document, detail)

    def close(self) -> None:
        """Clear the line once the sync is over (the last documents' fragments are embedded after the last
        file is read, so reading it is not the end)."""
        self.stream.write("\r" + " " * (self.WIDTH + 95) + "\r")
        self.stream.flush()


def _progress_bar(stream: TextIO) -> _Bar | None:
    """A progress bar on a terminal (files, and fragments with a rate inside a big one); nothing when piped."""
    return _Bar(stream) if stream.isatty() else None


def _print_report(report: SyncReport, out: TextIO) -> None:
    if report.rebuilt:
        print("The embedding model changed, so every document was indexed again.", file=out)
    print(
        f"added {report.added}, updated {report.updated}, unchanged {report.unchanged}, "
        f"removed {report.removed}, failed {len(report.failed)}",
        file=out,
    )
    print(
        f"{report.fragments} fragments, mean {report.mean_chars:.0f} chars, max {report.max_chars} chars "
        f"({report.seconds:.2f} s)",
        file=out,
    )
    if report.search:
        print(report.search, file=out)
    for path, reason in sorted(report.failed.items()):
        print(f"  failed: {printable(path)}: {printable(reason)}", file=out)


def open_knowledge(settings: Settings, out: TextIO, report: str = "changes") -> KnowledgeBase:
    """Open the index and bring it up to date with the folder; `report` is always, changes or never."""
    kb, _ = _synced(settings, out, report)
    return kb


def _synced(settings: Settings, out: TextIO, report: str) -> tuple[KnowledgeBase, SyncReport]:
    # A damaged index's notice is logged (WARNING) where it happens, in core; printing it too showed it twice.
    log.info("opening the index in %s for %s", settings.data_dir, settings.knowledge_dir)
    kb = KnowledgeBase(settings)
    ingest = logging.getLogger("core.ingest")
    level = ingest.level
    if report != "never" and not log.isEnabledFor(logging.INFO):
        # The report printed below names each failed document and why; core's WARNING said it once more.
        ingest.setLevel(logging.ERROR)
    bar = _progress_bar(sys.stderr)
    try:
        result = kb.sync(bar)
    except KnowledgeError as exc:
        # The folder can't be listed (unmounted, permissions): `index` says so and fails, but questions are
        # answered from the intact index, which is left as it was.
        if report == "always" or not (fragments := kb.from_index()):
            kb.close()
            raise
        print(f"verbatim: warning: {exc} Answering from the {fragments} fragments indexed before.", file=sys.stderr)
        result = SyncReport()
    finally:
        ingest.setLevel(level)
        if bar is not None:
            bar.close()
    log.info(
        "synced in %.2f s: added %d, updated %d, unchanged %d, removed %d, failed %d",
        result.seconds,
        result.added,
        result.updated,
        result.unchanged,
        result.removed,
        len(result.failed),
    )
    if report == "always" or (report == "changes" and (result.changed or result.failed)):
        _print_report(result, out)
    return kb, result


def cmd_index(args: argparse.Namespace, settings: Settings, out: TextIO) -> int:
    """Exit 0 when every document is indexed, 1 when any failed (the report names them)."""
    kb, result = _synced(settings, out, report="always")
    kb.close()
    if result.failed:
        failed = sorted(result.failed)
        names = ", ".join(printable(name) for name in failed)
        print(f"verbatim: {len(failed)} document(s) could not be indexed: {names}", file=sys.stderr)
        return 1
    return 0


def cmd_search(args: argparse.Namespace, settings: Settings, out: TextIO) -> int:
    question = _question(args.question)
    kb = open_knowledge(settings, out, report="never")
    retrieval = kb.retrieve(question, scope_of(args.audience))
    log.info(
        "retrieved %d fragments for the %s audience (embedding %.1f ms, search %.2f ms)",
        len(retrieval.hits),
        args.audience,
        retrieval.embed_ms,
        retrieval.search_ms,
    )
    if not retrieval.hits:
        print(f"No fragment scores above the similarity floor ({settings.min_similarity:.2f}).", file=out)
    for rank, hit in enumerate(retrieval.hits, start=1):
        print(f"{rank}. {hit.score:.3f}  {hit.fragment.caption}", file=out)
        for line in hit.fragment.text.splitlines():
            print(f"     {line}", file=out)
    print(f"(embedding {retrieval.embed_ms:.1f} ms, search {retrieval.search_ms:.2f} ms)", file=out)
    kb.close()
    return 0


def _question(text: str) -> str:
    if not text.strip():
        raise VerbatimError("The question is empty: write it in quotes after the command.")
    return clean_question(text)


def open_pipeline(settings: Settings, out: TextIO, report: str = "never") -> Pipeline:
    return Pipeline(settings, knowledge=open_knowledge(settings, out, report))


def cmd_ask(args: argparse.Namespace, settings: Settings, out: TextIO) -> int:
    question = _question(args.question)
    pipeline = open_pipeline(settings, out)
    answer = pipeline.answer(question, scope_of(args.audience), surface="cli")
    log.info(
        "%s%s by the %s answerer in %.0f ms: %d fragments retrieved, quotes shown %d, discarded %d, "
        "model calls %d; run-log id %s",
        answer.kind,
        f" ({answer.reason})" if answer.reason else "",
        answer.answerer,
        answer.timings_ms.get("total", 0.0),
        len(answer.retrieved),
        sum(len(s.quotes) for s in answer.statements),
        answer.discarded,
        answer.model_calls,
        answer.id,
    )
    if args.json:
        json.dump(answer.to_json(), out, ensure_ascii=False, indent=2)
        out.write("\n")
    else:
        print(render(answer, color=out.isatty()), file=out)
    pipeline.close()
    return 0


def cmd_chat(args: argparse.Namespace, settings: Settings, out: TextIO) -> int:
    pipeline = open_pipeline(settings, out, report="changes")
    try:
        return chat(pipeline, args.audience, out)
    finally:
        pipeline.close()


def cmd_check(args: argparse.Namespace, settings: Settings, out: TextIO) -> int:
    results = run_checks()
    for result in results:
        mark = "ok  " if result.ok else "FAIL"
        print(f"{mark} {result.name}" + ("" if result.ok else f": {result.detail}"), file=out)
    passed = sum(r.ok for r in results)
    print(f"{passed} of {len(results)} pass", file=out)
    return 0 if passed == len(results) else 1


def cmd_serve(args: argparse.Namespace, settings: Settings, out: TextIO) -> int:
    """One process per surface (see Procfile); settings are checked before anything connects."""
    logging.getLogger().setLevel(logging.INFO)
    if args.surface == "slack":
        from bot.slack import serve as serve_slack
        from bot.slack import slack_settings

        surface_settings = slack_settings()
        pipeline = open_pipeline(settings, out, report="changes")
        serve_slack(surface_settings, pipeline)
    else:
        from bot.telegram import serve as serve_telegram
        from bot.telegram import telegram_settings

        telegram = telegram_settings()
        pipeline = open_pipeline(settings, out, report="changes")
        serve_telegram(telegram, pipeline)
    return 0


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
    rows = list(sweep(questions, settings, floors, thresholds))
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


def cmd_log(args: argparse.Namespace, settings: Settings, out: TextIO) -> int:
    entries = []
    if settings.database_url or settings.data_dir.is_dir():
        store = open_store(settings.data_dir, settings.database_url, settings.database_wait)
        entries = store.runlog.tail(args.tail)
        store.close()
    if not entries:
        print(f"The run log in {settings.data_dir} is empty: nothing has been asked yet.", file=out)
        return 0
    for entry in entries:
        verdict = "answered" if entry.kind == "answered" else f"refused ({entry.reason})"
        total = entry.timings.get("total", 0.0)
        extra = f", feedback {entry.feedback}" if entry.feedback else ""
        discarded = f", {entry.discarded} discarded" if entry.discarded else ""
        head = f"{entry.at}  {entry.surface:<8} {verdict}{discarded}, {entry.answerer}, {total:.0f} ms{extra}"
        print(printable(head), file=out)
        print(f"    Q: {printable(entry.question)}", file=out)
        for statement in entry.statements:
            for quote in statement["quotes"]:
                text = " ".join(quote["text"].split())[:160]
                print(f"    > {printable(text)}  [{printable(quote['caption'])}]", file=out)
        print(f"    id {printable(entry.id)}", file=out)
    return 0


def cmd_report(args: argparse.Namespace, settings: Settings, out: TextIO) -> int:
    """The gap report over the run log: text, JSON (--json) or a self-contained HTML file (--html)."""
    try:
        days = parse_span(args.since)
    except ValueError:
        raise VerbatimError(f"--since must be a span such as 30d, 2w or 12h, not {args.since!r}.") from None
    if not settings.data_dir.is_dir():
        raise VerbatimError(f"There is no run log in {settings.data_dir}: nothing has been asked yet.")
    kb = KnowledgeBase(settings)  # the index as it stands: a report reads, it does not re-index
    try:
        report = build_report(kb, days)
    finally:
        kb.close()
    if args.html:
        from bot.report_html import render as render_html

        try:
            Path(args.html).write_text(render_html(report), encoding="utf-8")
        except OSError as exc:
            raise VerbatimError(f"Could not write {args.html} ({exc.strerror}).") from exc
        print(f"Wrote {args.html}", file=sys.stderr if args.json else out)
    if args.json:
        json.dump(report.to_json(), out, ensure_ascii=False, indent=2)
        out.write("\n")
        return 0
    for line in presenter.report_summary(report).splitlines():
        print(printable(line), file=out)
    if report.gaps:
        print(f"\n{presenter.REPORT_SECTIONS['gaps']}:", file=out)
        for gap in report.gaps[:20]:
            print(f"  • {printable(presenter.gap_line(gap))}", file=out)
    if report.disliked:
        print(f"\n{presenter.REPORT_SECTIONS['disliked']}:", file=out)
        for answer in report.disliked[:10]:
            print(f"  • {printable(presenter.disliked_line(answer))}", file=out)
    if report.documents_never:
        never = ", ".join(u.name for u in report.documents_never)
        print(f"\n{presenter.REPORT_SECTIONS['documents_never']}: {printable(never)}", file=out)
    if report.slowest:
        print(f"\n{presenter.REPORT_SECTIONS['slowest']}:", file=out)
        for slow in report.slowest[:5]:
            print(f"  • {printable(presenter.slow_line(slow))}", file=out)
    return 0


def public_surfaces(env: Mapping[str, str] | None = None) -> list[str]:
    """The configured surfaces that answer the public, as `verbatim status` names them."""
    env = os.environ if env is None else env

    def get(name: str) -> str:
        return env.get(name, "").strip()

    surfaces = []
    if get("TELEGRAM_BOT_TOKEN") and (get("TELEGRAM_AUDIENCE") or "public").lower() == "public":
        surfaces.append("Telegram (TELEGRAM_BOT_TOKEN is set)")
    if get("SLACK_BOT_TOKEN") and get("SLACK_PUBLIC_CHANNELS"):
        surfaces.append("Slack's public channels (SLACK_PUBLIC_CHANNELS)")
    return surfaces


def _table(rows: list[list[str]], widest: int = 34) -> list[str]:
    """Left-aligned columns, each as wide as its widest cell (longer cells cut with …)."""
    cut = [[cell if len(cell) <= widest else cell[: widest - 1] + "…" for cell in row] for row in rows]
    widths = [max(len(row[i]) for row in cut) for i in range(len(cut[0]))]
    return ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in cut]


def _attention_line(item: Attention) -> str:
    if item.kind == "failed":
        return f"failed       {item.document}: {item.detail}"
    if item.kind == "past_review":
        return f"past review  {item.document}: was due for review on {item.detail}"
    if item.kind == "no_owner":
        return f"no owner     {item.document}: set `owner:` in its metadata"
    if item.kind == "bad_metadata":
        return f"metadata     {item.document}: {item.detail}"
    return f"no public    the folder has no indexed public document, but {item.detail} answers the public"


def cmd_status(args: argparse.Namespace, settings: Settings, out: TextIO) -> int:
    """The register as it stands (no sync); exit 0 when nothing needs attention, 1 when something does."""
    status = read_register(settings, public_surfaces())
    if args.json:
        json.dump(status.to_json(), out, ensure_ascii=False, indent=2)
        out.write("\n")
        return 1 if status.attention else 0
    if not status.documents:
        print(f"The register in {settings.data_dir} is empty: run `verbatim index` first.", file=out)
        return 0
    rows = [["STATE", "DOCUMENT", "TITLE", "OWNER", "AS OF", "REVIEW BY", "FRAGMENTS", "SHA-256", "INDEXED AT (UTC)"]]
    for d in status.documents:
        rows.append(
            [
                d.state,
                printable(d.path),
                printable(d.title) or "–",
                printable(d.owner or "") or "–",
                printable(d.as_of or "") or "–",
                status.review_dates.get(d.path, "–"),
                str(d.fragments) if d.state in ("indexed", "indexing") else "–",
                d.sha256[:12] or "–",
                d.indexed_at or "–",
            ]
        )
    for line in _table(rows):
        print(line, file=out)
    totals = status.totals
    states = ", ".join(f"{totals[state]} {state}" for state in ("indexed", "failed", "removed", "queued", "indexing"))
    print(f"\n{totals['documents']} documents: {states}; {totals['fragments']} fragments searched", file=out)
    if status.search:
        print(f"Search: {status.search}", file=out)
    if status.attention:
        print("\nNeeds attention:", file=out)
        for item in status.attention:
            print(f"  {printable(_attention_line(item))}", file=out)
        return 1
    print("Nothing needs attention.", file=out)
    return 0


def cmd_sweep(args: argparse.Namespace, settings: Settings, out: TextIO) -> int:
    found = sweep_data(settings, apply=args.apply)
    if args.json:
        json.dump(found.to_json(), out, ensure_ascii=False, indent=2)
        out.write("\n")
        return 0
    if found.empty:
        print(f"Nothing to sweep in {found.where}: everything there is referred to.", file=out)
        return 0
    index = found.index
    counts = [
        (index.orphan_fragments, "fragment(s) and their vectors whose document is gone from the register"),
        (index.unindexed_fragments, "fragment(s) kept for a removed or failed document"),
        (index.stale_batches, "fragment(s) staged by an indexing run that another process overtook"),
    ]
    print(("Removed from " if found.applied else "Nothing refers to these in ") + f"{found.where}:", file=out)
    for count, what in counts:
        if count:
            print(f"  {count} {what}", file=out)
    for path in index.removed:
        print(f"  the register row of removed document {printable(path)}", file=out)
    for name in found.corrupt_files:
        print(f"  {printable(name)} (a damaged index set aside)", file=out)
    if not found.applied:
        print("Run `verbatim sweep --apply` to remove them.", file=out)
    return 0


# Bidirectional overrides and isolates reorder what a terminal shows, so they are escaped like control characters.
_BIDI = frozenset(map(chr, [*range(0x202A, 0x202F), *range(0x2066, 0x206A)]))


def printable(text: str) -> str:
    """Text with control characters shown as escapes (ESC as \\x1b): a stored question cannot drive the terminal."""
    return "".join(
        ch.encode("unicode_escape").decode("ascii") if unicodedata.category(ch) == "Cc" or ch in _BIDI else ch
        for ch in text
    )


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--knowledge", metavar="DIR", help="the documents folder (default: $VERBATIM_KNOWLEDGE_DIR or ./knowledge)"
    )
    parser.add_argument(
        "--data", metavar="DIR", help="where the index and run log live (default: $VERBATIM_DATA_DIR or ./var)"
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="verbatim", description="Answers from your documents, quoted verbatim.")
    parser.add_argument("-v", "--verbose", action="store_true", help="log what happens to stderr")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    index = commands.add_parser("index", help="index the knowledge folder (only what changed)")
    _common(index)
    index.set_defaults(run=cmd_index)

    search = commands.add_parser("search", help="show the fragments a question retrieves")
    search.add_argument("question")
    search.add_argument("--audience", choices=("public", "internal"), default="internal")
    _common(search)
    search.set_defaults(run=cmd_search)

    ask = commands.add_parser("ask", help="answer one question with verified quotes")
    ask.add_argument("question")
    ask.add_argument("--audience", choices=("public", "internal"), default="internal")
    ask.add_argument("--json", action="store_true", help="print the answer object as JSON")
    _common(ask)
    ask.set_defaults(run=cmd_ask)

    chat_ = commands.add_parser("chat", help="an interactive conversation in the terminal")
    chat_.add_argument("--audience", choices=("public", "internal"), default="internal")
    _common(chat_)
    chat_.set_defaults(run=cmd_chat)

    check = commands.add_parser("check", help="self-check the anti-invention mechanics (offline, no model)")
    check.set_defaults(run=cmd_check)

    serve = commands.add_parser("serve", help="run a chat bot: slack or telegram")
    serve.add_argument("surface", choices=("slack", "telegram"))
    _common(serve)
    serve.set_defaults(run=cmd_serve)

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

    status = commands.add_parser("status", help="the provenance register, and what needs attention")
    status.add_argument("--json", action="store_true", help="print the register as JSON")
    _common(status)
    status.set_defaults(run=cmd_status)

    sweep_ = commands.add_parser("sweep", help="list what nothing in the data folder refers to")
    sweep_.add_argument("--apply", action="store_true", help="remove it")
    sweep_.add_argument("--json", action="store_true", help="print what was found as JSON")
    _common(sweep_)
    sweep_.set_defaults(run=cmd_sweep)

    log_ = commands.add_parser("log", help="show recent run-log entries")
    log_.add_argument("--tail", type=int, default=10, metavar="N")
    _common(log_)
    log_.set_defaults(run=cmd_log)

    report = commands.add_parser("report", help="what the knowledge base is missing: the gap report")
    report.add_argument("--since", default="30d", metavar="SPAN", help="how far back: 30d, 2w, 12h (default: 30d)")
    report.add_argument("--html", metavar="FILE", help="also write the report as one self-contained HTML file")
    report.add_argument("--json", action="store_true", help="print the report object as JSON")
    _common(report)
    report.set_defaults(run=cmd_report)
    return parser


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    parser = build_parser()
    args = parser.parse_args(argv)
    configure_logging(logging.INFO if args.verbose else logging.WARNING)
    try:
        load_env_file()
        settings = from_env().with_paths(getattr(args, "knowledge", None), getattr(args, "data", None))
        return int(args.run(args, settings, out))
    except VerbatimError as exc:
        log.debug("failed", exc_info=True)
        print(f"verbatim: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
