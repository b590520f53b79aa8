"""`verbatim status | sweep | log | report`: what the data folder holds, the run log and the gap report."""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TextIO

from bot.cli.shared import folder_options, printable
from bot.presenter import reports
from core import (
    Attention,
    KnowledgeBase,
    Settings,
    VerbatimError,
    build_report,
    open_store,
    parse_span,
    read_register,
    skipped_summary,
    sweep_data,
)

log = logging.getLogger("verbatim")


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
        given = [f"{n} {value}" for n, value in ((entry.up, "up"), (entry.down, "down")) if n]
        extra = f", feedback {', '.join(given)}" if given else ""
        discarded = f", {entry.discarded} discarded" if entry.discarded else ""
        head = f"{entry.at}  {entry.surface:<8} {verdict}{discarded}, {entry.answerer}, {entry.total_ms:.0f} ms{extra}"
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
        if not args.json:
            return 0  # the file is the report; the terminal gets the one line
    if args.json:
        json.dump(report.to_json(), out, ensure_ascii=False, indent=2)
        out.write("\n")
        return 0
    for line in reports.report_summary(report).splitlines():
        print(printable(line), file=out)
    if report.gaps:
        print(f"\n{reports.REPORT_SECTIONS['gaps']}:", file=out)
        for gap in report.gaps[:20]:
            print(f"  • {printable(reports.gap_line(gap))}", file=out)
    if report.disliked:
        print(f"\n{reports.REPORT_SECTIONS['disliked']}:", file=out)
        for answer in report.disliked[:10]:
            print(f"  • {printable(reports.disliked_line(answer))}", file=out)
    if report.documents_never:
        never = ", ".join(u.name for u in report.documents_never)
        print(f"\n{reports.REPORT_SECTIONS['documents_never']}: {printable(never)}", file=out)
    if report.slowest:
        print(f"\n{reports.REPORT_SECTIONS['slowest']}:", file=out)
        for slow in report.slowest[:5]:
            print(f"  • {printable(reports.slow_line(slow))}", file=out)
    if report.instructions:
        print(f"\n{reports.REPORT_SECTIONS['instructions']} ({reports.INSTRUCTIONS_NOTE}):", file=out)
        for item in report.instructions:
            print(f"  • {printable(reports.instruction_line(item))}", file=out)
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


def _attention_line(item: Attention, surfaces: str) -> str:
    if item.kind == "failed":
        return f"failed       {item.document}: {item.detail}"
    if item.kind == "past_review":
        return f"past review  {item.document}: was due for review on {item.detail}"
    if item.kind == "no_owner":
        return f"no owner     {item.document}: set `owner:` in its metadata"
    if item.kind == "bad_metadata":
        return f"metadata     {item.document}: {item.detail}"
    if item.kind == "sync_failed":
        return f"sync failed  {item.detail}"
    if item.kind == "public_lacks":
        return f"staff only   {reports.public_lacks_line(item.detail, item.documents, surfaces)}"
    return f"no public    the folder has no indexed public document, but {item.detail} answers the public"


def cmd_status(args: argparse.Namespace, settings: Settings, out: TextIO) -> int:
    """The register as it stands (no sync); exit 0 when nothing needs attention, 1 when something does."""
    surfaces = public_surfaces()
    status = read_register(settings, surfaces)
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
    if status.skipped:
        print(printable(skipped_summary(list(status.skipped))), file=out)
    if status.attention:
        print("\nNeeds attention:", file=out)
        for item in status.attention:
            print(f"  {printable(_attention_line(item, ', '.join(surfaces)))}", file=out)
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


def add_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """status, sweep, log, report."""
    status = commands.add_parser("status", help="the provenance register, and what needs attention")
    status.add_argument("--json", action="store_true", help="print the register as JSON")
    folder_options(status)
    status.set_defaults(run=cmd_status)

    sweep_ = commands.add_parser("sweep", help="list what nothing in the data folder refers to")
    sweep_.add_argument("--apply", action="store_true", help="remove it")
    sweep_.add_argument("--json", action="store_true", help="print what was found as JSON")
    folder_options(sweep_)
    sweep_.set_defaults(run=cmd_sweep)

    log_ = commands.add_parser("log", help="show recent run-log entries")
    log_.add_argument("--tail", type=int, default=10, metavar="N")
    folder_options(log_)
    log_.set_defaults(run=cmd_log)

    report = commands.add_parser("report", help="what the knowledge base is missing: the gap report")
    report.add_argument("--since", default="30d", metavar="SPAN", help="how far back: 30d, 2w, 12h (default: 30d)")
    report.add_argument("--html", metavar="FILE", help="write the report as one HTML file; only --json prints it too")
    report.add_argument("--json", action="store_true", help="print the report object as JSON")
    folder_options(report)
    report.set_defaults(run=cmd_report)
