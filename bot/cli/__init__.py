"""The `verbatim` command: index, search, and the other front ends' entry points."""

from __future__ import annotations

import argparse
import difflib
import errno
import logging
import os
import sys
from collections.abc import Sequence
from typing import TextIO

from bot.cli import quality, records, serving
from bot.cli.records import public_surfaces
from bot.cli.shared import printable
from core import DiskFull, VerbatimError, from_env, load_env_file

__all__ = ["build_parser", "main", "printable", "public_surfaces"]

log = logging.getLogger("verbatim")

# The exit codes every command shares (`verbatim --help` lists them); a command may add its own 1.
EXIT_CODES = """exit codes:
  0    done
  1    done, but something needs attention (index: a document failed; ask: answering failed; ...)
  2    could not run: a setting, a folder or the store is unusable (one sentence on stderr)
  3    could not write: the disk that holds the data folder (or the database's) is full
  130  interrupted"""
EXIT_DISK_FULL = 3


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


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="verbatim",
        description="Answers from your documents, quoted verbatim.",
        epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log what happens to stderr")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for group in (serving, quality, records):  # in this order in `verbatim --help`
        group.add_commands(commands)
    return parser


def _commands(parser: argparse.ArgumentParser) -> list[str]:
    return [
        name for action in parser._actions if isinstance(action, argparse._SubParsersAction) for name in action.choices
    ]


def _check_command(parser: argparse.ArgumentParser, argv: Sequence[str], out: TextIO) -> int | None:
    """No command: the help, exit 2 (nothing was run; a script sees it). A misspelt one: the closest, named."""
    given = next((arg for arg in argv if not arg.startswith("-")), None)
    if given is None and not {"-h", "--help"} & set(argv):
        parser.print_help(out)
        return 2
    commands = _commands(parser)
    if given is not None and given not in commands:
        close = difflib.get_close_matches(given, commands, n=1)
        if close:
            parser.error(f"unknown command {given!r}: did you mean {close[0]!r}? (`verbatim --help` lists them all)")
    return None


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    parser = build_parser()
    argv = sys.argv[1:] if argv is None else list(argv)
    if (code := _check_command(parser, argv, out)) is not None:
        return code
    args = parser.parse_args(argv)
    configure_logging(logging.INFO if args.verbose else logging.WARNING)
    try:
        load_env_file()
        if getattr(args, "own_settings", False):
            return int(args.run(args, None, out))
        settings = from_env().with_paths(getattr(args, "knowledge", None), getattr(args, "data", None))
        return int(args.run(args, settings, out))
    except DiskFull as exc:  # its own code: a script can wait for space and run again, nothing to mend
        log.debug("failed", exc_info=True)
        print(f"verbatim: {exc}", file=sys.stderr)
        return EXIT_DISK_FULL
    except VerbatimError as exc:
        log.debug("failed", exc_info=True)
        print(f"verbatim: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        if exc.errno not in (errno.ENOSPC, errno.EDQUOT):
            raise
        log.debug("failed", exc_info=True)
        where = exc.filename or "a file"
        print(f"verbatim: {where} can't be written: the disk is full. Free some space.", file=sys.stderr)
        return EXIT_DISK_FULL
    except KeyboardInterrupt:
        print(file=sys.stderr)
        return 130
    except BrokenPipeError:  # `verbatim status | head`: the reader left; nothing is wrong and nothing to say
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error when Python exits
        return 141
