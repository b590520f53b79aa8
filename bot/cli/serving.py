"""`verbatim index | search | ask | chat | check | doctor | serve`: the index, and the front ends that answer
from it."""

from __future__ import annotations

import argparse
import json
import logging
import sys
from typing import TextIO

from bot.cli.shared import folder_options, printable, progress_bar
from bot.console import chat, render
from core import (
    KnowledgeBase,
    KnowledgeError,
    Pipeline,
    Settings,
    Store,
    SyncReport,
    VerbatimError,
    clean_question,
    existing_store,
    policy_for,
    run_checks,
    scope_of,
    skipped_summary,
)

log = logging.getLogger("verbatim")


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
    if report.languages:
        listed = ", ".join(f"{code or 'unknown'} {n}" for code, n in report.languages.items())
        print(f"documents in: {listed}", file=out)
    if report.skipped:
        print(printable(skipped_summary(report.skipped)), file=out)


def open_knowledge(settings: Settings, out: TextIO, report: str = "changes") -> KnowledgeBase:
    """Open the index and bring it up to date with the folder; `report` is always, changes or never."""
    kb, _ = _synced(settings, out, report)
    return kb


def _existing(settings: Settings, index: bool) -> Store | None:
    """The store to open: None to have one opened (or created); raises, creating nothing, when the knowledge folder
    is missing and there is nothing to answer from (`index` always: it has nothing to index)."""
    folder = settings.knowledge_dir
    if folder.is_dir():
        return None
    store = None if index else existing_store(settings.data_dir, settings.database_url, settings.database_wait)
    if store is None:
        what = "is not a folder" if folder.exists() else "does not exist"
        raise KnowledgeError(
            f"The knowledge folder {folder} {what}: give the folder that holds your documents with --knowledge "
            f"(or VERBATIM_KNOWLEDGE_DIR); nothing was written to {settings.data_dir}."
        )
    return store  # an intact index: questions are answered from it (a share not mounted, say)


def _synced(settings: Settings, out: TextIO, report: str, replace: bool = False) -> tuple[KnowledgeBase, SyncReport]:
    # A damaged index's notice is logged (WARNING) where it happens, in core; printing it too showed it twice.
    log.info("opening the index in %s for %s", settings.data_dir, settings.knowledge_dir)
    kb = KnowledgeBase(settings, store=_existing(settings, index=report == "always"))
    ingest = logging.getLogger("core.ingest")
    level = ingest.level
    if report != "never" and not log.isEnabledFor(logging.INFO):
        # The report printed below names each failed document and why; core's WARNING said it once more.
        ingest.setLevel(logging.ERROR)
    bar = progress_bar(sys.stderr)
    try:
        result = kb.sync(bar, replace=replace)
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
        if kb.settings.embedder != settings.embedder:  # VERBATIM_EMBEDDER was unset: the documents chose
            print(
                "embedding with multilingual (multilingual-e5-small), chosen for documents not in English; "
                "VERBATIM_EMBEDDER=local keeps MiniLM",
                file=out,
            )
        elif advice := kb.embedder_advice():
            print(advice, file=out)
    return kb, result


def cmd_index(args: argparse.Namespace, settings: Settings, out: TextIO) -> int:
    """Exit 0 when every document is indexed, 1 when any failed (the report names them), 3 when the index
    could not be written for a full disk (one sentence; what was indexed before is intact)."""
    kb, result = _synced(settings, out, report="always", replace=args.replace)
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
    floor = policy_for(kb.settings).min_similarity
    retrieval = kb.retrieve(question, scope_of(args.audience), floor)
    log.info(
        "retrieved %d fragments for the %s audience (embedding %.1f ms, search %.2f ms)",
        len(retrieval.hits),
        args.audience,
        retrieval.embed_ms,
        retrieval.search_ms,
    )
    if not retrieval.hits:
        print(f"No fragment scores above the similarity floor ({floor:.2f}).", file=out)
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
    return 1 if answer.reason == "error" else 0  # answering failed (a model server down): scripts must see it


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


def cmd_doctor(args: argparse.Namespace, settings: Settings | None, out: TextIO) -> int:
    """The configuration as the bots would read it; exit 1 when anything would stop them or go unanswered."""
    import os

    from bot.doctor import diagnose, env_file_line

    found = diagnose(os.environ)
    print(env_file_line(), file=out)
    for part in found.parts:
        print(f"  {part}", file=out)
    if not found.findings:
        print("No problems found (Slack and Telegram check the tokens themselves when a bot starts).", file=out)
        return 0
    print(f"\n{len(found.findings)} problem(s):", file=out)
    for finding in found.findings:
        print(f"  ✗ {printable(finding.sentence)}", file=out)
    return 1


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


def add_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """index, search, ask, chat, check, doctor, serve."""
    index = commands.add_parser(
        "index",
        help="index the knowledge folder (only what changed)",
        epilog="exit codes: 0 every document indexed, 1 a document failed (named), 2 could not run, 3 the disk is full",
    )
    folder_options(index)
    index.add_argument(
        "--replace",
        action="store_true",
        help="let this folder's documents replace the index's, even when that removes more than half of them "
        "or the index is another folder's",
    )
    index.set_defaults(run=cmd_index)

    search = commands.add_parser("search", help="show the fragments a question retrieves")
    search.add_argument("question")
    search.add_argument("--audience", choices=("public", "internal"), default="internal")
    folder_options(search)
    search.set_defaults(run=cmd_search)

    ask = commands.add_parser("ask", help="answer one question with verified quotes")
    ask.add_argument("question")
    ask.add_argument("--audience", choices=("public", "internal"), default="internal")
    ask.add_argument("--json", action="store_true", help="print the answer object as JSON")
    folder_options(ask)
    ask.set_defaults(run=cmd_ask)

    chat_ = commands.add_parser("chat", help="an interactive conversation in the terminal")
    chat_.add_argument("--audience", choices=("public", "internal"), default="internal")
    folder_options(chat_)
    chat_.set_defaults(run=cmd_chat)

    check = commands.add_parser("check", help="self-check the anti-invention mechanics (offline, no model)")
    check.set_defaults(run=cmd_check)

    doctor = commands.add_parser("doctor", help="check the configuration (.env): tokens, ports, webhook, model")
    # Its own reading of the settings: a malformed one is a finding to list, not a stop before the command.
    doctor.set_defaults(run=cmd_doctor, own_settings=True)

    serve = commands.add_parser("serve", help="run a chat bot: slack or telegram")
    serve.add_argument("surface", choices=("slack", "telegram"))
    folder_options(serve)
    serve.set_defaults(run=cmd_serve)
