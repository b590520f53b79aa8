"""The `verbatim` command: index, search, and the other front ends' entry points."""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Callable, Sequence
from typing import TextIO

from core import KnowledgeBase, Settings, VerbatimError, from_env, load_env_file, scope_of
from core.index import SyncReport

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
    from core.knowledge import MAX_QUESTION_CHARS

    question = " ".join(text.split())
    if not question:
        raise VerbatimError("The question is empty: write it in quotes after the command.")
    if len(question) > MAX_QUESTION_CHARS:
        raise VerbatimError(f"The question is {len(question):,} characters long; the limit is {MAX_QUESTION_CHARS:,}.")
    return question


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
