"""Readers of formats whose parsing can blow up run in a child process, under a time and memory limit.

HTML (a page of 200,000 unclosed `<p>` is valid, and costs its parser memory in proportion), Word and
Excel files (zip archives read by lxml, which is C) are parsed by `_reader_worker.py` in a child
process, as PDFs are by theirs: a document that needs more than the limits, or crashes the parser,
fails alone with a reason, and the process that holds the index and the bot never runs out of memory.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from core.common.errors import DocumentError
from core.common.values import Section
from core.ingest.documents import Parsed

TIME_LIMIT = 60.0  # seconds of wall-clock time for one file, at least (10 s per MB above 6 MB)
MEMORY_LIMIT = 1024 << 20  # bytes of address space for the child, at least (200 times the file above 5 MB)
# One thread for any numeric library the readers' imports bring: each thread's stack counts against the limit.
_ONE_THREAD = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
WORKER = Path(__file__).with_name("_reader_worker.py")
_SIGXCPU = getattr(signal, "SIGXCPU", 24)


def isolated(module: str, function: str, kind: str) -> Callable[[bytes], Parsed]:
    """The reader `core.ingest.readers.<module>.<function>`, run in a child process; `kind` names the format
    in a failure ("the HTML reader stopped…")."""

    def read(data: bytes) -> Parsed:
        # A big document may need more than the floor: a 10 MB HTML page measured 25 s and 577 MiB.
        time_limit = max(TIME_LIMIT, 10.0 * len(data) / (1 << 20))
        memory_limit = max(MEMORY_LIMIT, 200 * len(data))
        return run(module, function, kind, data, time_limit, memory_limit)

    return read


def run(
    module: str, function: str, kind: str, data: bytes, time_limit: float = TIME_LIMIT, memory_limit: int = MEMORY_LIMIT
) -> Parsed:
    found = child([str(WORKER), module, function], kind, data, time_limit, memory_limit)
    sections = tuple(Section(tuple(path), text, page) for path, text, page in found["sections"])
    return Parsed(found["title"], {str(k): str(v) for k, v in found["meta"].items()}, sections)


def child(worker: list[str], kind: str, data: bytes, time_limit: float, memory_limit: int) -> dict[str, Any]:
    """Run `python -I WORKER… MEMORY CPU` on `data` and return the JSON it prints; DocumentError with the reason
    when it fails, crashes, runs out of memory or time, or reports `{"error": reason}`. Shared by every reader
    that parses in a child process (PDF's worker and `_reader_worker.py`)."""
    cpu_limit = int(time_limit) + 2  # a backstop in case the wall clock is not enforced (the parent stalls)
    command = [sys.executable, "-I", *worker, str(memory_limit), str(cpu_limit)]
    too_long = f"reading the {kind} took longer than {time_limit:g} s (damaged or hostile file?)"
    try:
        env = {**os.environ, **_ONE_THREAD}
        done = subprocess.run(command, input=data, capture_output=True, timeout=time_limit, check=False, env=env)
    except subprocess.TimeoutExpired:
        raise DocumentError(too_long) from None  # subprocess.run killed the child first
    except OSError as exc:
        raise DocumentError(f"the {kind} reader could not be started ({exc.strerror})") from exc
    if done.returncode == -_SIGXCPU:
        raise DocumentError(too_long)
    if done.returncode != 0:
        raise DocumentError(_failure(kind, done.returncode, done.stderr, memory_limit))
    try:
        found = json.loads(done.stdout)
    except json.JSONDecodeError:
        raise DocumentError(f"the {kind} reader returned nothing usable (damaged or hostile file?)") from None
    if "error" in found:
        raise DocumentError(str(found["error"]))
    return dict(found)


def _failure(kind: str, returncode: int, stderr: bytes, memory_limit: int) -> str:
    last = (stderr.decode("utf-8", "replace").strip().splitlines() or [""])[-1]
    limit = f"the {memory_limit >> 20} MiB memory limit"
    if returncode < 0:
        # SIGSEGV or SIGABRT when a C parser gives up (often on running out of memory), SIGKILL from outside.
        return f"the {kind} reader stopped on signal {-returncode} (damaged or hostile file, or more than {limit})"
    if "MemoryError" in last:
        return f"reading the {kind} needs more than {limit}"
    if "RecursionError" in last:
        return f"the {kind} is nested too deeply to read"
    if "ModuleNotFoundError" in last and (missing := re.search(r"No module named '([\w-]+)", last)):
        return f"{kind} support is not installed (pip install {missing.group(1)})"
    return f"the {kind} reader failed ({last[:200] or f'exit status {returncode}'})"
