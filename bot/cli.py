"""The `verbatim` command: index, search, and the other front ends' entry points."""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Callable, Sequence
from typing import TextIO

from bot.console import chat, render
from core import KnowledgeBase, Settings, VerbatimError, from_env, load_env_file, scope_of
from core.index import SyncReport
from core.pipeline import Pipeline, clean_question
from core.runlog import RUNLOG_FILE, RunLog
from core.selfcheck import run_checks

log = logging.getLogger("verbatim")


def _progress_bar(stream: TextIO) -> Callable[[int, int, str], None] | None:
    """A one-line progress bar on a terminal; nothing when output is piped."""
    if not stream.isatty():
        return None

    def show(done: int, total: int, name: str) -> None:
        width = 24
        filled = width * done // max(total, 1)
        stream.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total} {name[:40]:<40}")
        if done == total:
            stream.write("\r" + " " * (width + 50) + "\r")
        stream.flush()

    return show


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
    for path, reason in sorted(report.failed.items()):
        print(f"  failed: {path}: {reason}", file=out)


def open_knowledge(settings: Settings, out: TextIO, quiet: bool = False) -> KnowledgeBase:
    """Open the index and bring it up to date with the folder, saying what happened."""
    kb = KnowledgeBase(settings)
    if kb.notice:
        print(kb.notice, file=sys.stderr)
    report = kb.sync(_progress_bar(sys.stderr))
    if not quiet and (report.changed or report.failed):
        _print_report(report, out)
    return kb


def cmd_index(args: argparse.Namespace, settings: Settings, out: TextIO) -> int:
    kb = KnowledgeBase(settings)
    if kb.notice:
        print(kb.notice, file=sys.stderr)
    report = kb.sync(_progress_bar(sys.stderr))
    _print_report(report, out)
    kb.close()
    return 0


def cmd_search(args: argparse.Namespace, settings: Settings, out: TextIO) -> int:
    question = _question(args.question)
    kb = open_knowledge(settings, out, quiet=True)
    retrieval = kb.retrieve(question, scope_of(args.audience))
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


def open_pipeline(settings: Settings, out: TextIO, quiet: bool = True) -> Pipeline:
    kb = open_knowledge(settings, out, quiet=quiet)
    return Pipeline(settings, knowledge=kb)


def cmd_ask(args: argparse.Namespace, settings: Settings, out: TextIO) -> int:
    question = _question(args.question)
    pipeline = open_pipeline(settings, out)
    answer = pipeline.answer(question, scope_of(args.audience), surface="cli")
    if args.json:
        json.dump(answer.to_json(), out, ensure_ascii=False, indent=2)
        out.write("\n")
    else:
        print(render(answer, color=out.isatty()), file=out)
    pipeline.close()
    return 0


def cmd_chat(args: argparse.Namespace, settings: Settings, out: TextIO) -> int:
    pipeline = open_pipeline(settings, out, quiet=False)
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
        pipeline = open_pipeline(settings, out, quiet=False)
        serve_slack(surface_settings, pipeline)
    else:
        from bot.telegram import serve as serve_telegram
        from bot.telegram import telegram_settings

        telegram = telegram_settings()
        pipeline = open_pipeline(settings, out, quiet=False)
        serve_telegram(telegram, pipeline)
    return 0


def cmd_log(args: argparse.Namespace, settings: Settings, out: TextIO) -> int:
    path = settings.data_dir / RUNLOG_FILE
    if not path.exists():
        print(f"The run log {path} is empty: nothing has been asked yet.", file=out)
        return 0
    runlog = RunLog(path)
    for entry in runlog.tail(args.tail):
        verdict = "answered" if entry.kind == "answered" else f"refused ({entry.reason})"
        total = entry.timings.get("total", 0.0)
        extra = f", feedback {entry.feedback}" if entry.feedback else ""
        discarded = f", {entry.discarded} discarded" if entry.discarded else ""
        print(f"{entry.at}  {entry.surface:<8} {verdict}{discarded}, {entry.answerer}, {total:.0f} ms{extra}", file=out)
        print(f"    Q: {entry.question}", file=out)
        for statement in entry.statements:
            for quote in statement["quotes"]:
                print(f"    > {' '.join(quote['text'].split())[:160]}  [{quote['caption']}]", file=out)
        print(f"    id {entry.id}", file=out)
    runlog.close()
    return 0


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

    log_ = commands.add_parser("log", help="show recent run-log entries")
    log_.add_argument("--tail", type=int, default=10, metavar="N")
    _common(log_)
    log_.set_defaults(run=cmd_log)
    return parser


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
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
