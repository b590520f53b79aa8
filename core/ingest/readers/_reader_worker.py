"""A reader's child process: a document's bytes on stdin, what the reader found as JSON on stdout.

Run by `core.ingest.readers.sandbox` as `python -I _reader_worker.py MODULE FUNCTION MEMORY_BYTES CPU_SECONDS`,
never imported. It caps its own address space and CPU time before it imports the reader or reads the
file, so a document that needs more (a page nested 200,000 deep, a lying zip) ends only this process.
It holds no index, no settings and no secrets: only the reader and the file.

Output: {"title": str | null, "meta": {str: str}, "sections": [[[heading, ...], text, page | null], ...]},
or {"error": reason} for a document the reader refused.
"""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path

# The folder that holds the `core` package this file belongs to: the child reads with the parent's own code.
ROOT = Path(__file__).resolve().parents[3]


def main() -> int:
    module, function, memory, cpu = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    sys.path.insert(0, str(ROOT))
    from core.ingest.readers._pdf_worker import limit  # the PDF worker's own caps, before the reader is imported

    limit(memory, cpu)
    from core.common.errors import DocumentError

    read = getattr(importlib.import_module(f"core.ingest.readers.{module}"), function)
    data = sys.stdin.buffer.read()
    try:
        parsed = read(data)
    except DocumentError as exc:
        found: dict[str, object] = {"error": str(exc)}
    else:
        found = {
            "title": parsed.title,
            "meta": parsed.meta,
            "sections": [[list(s.path), s.text, s.page] for s in parsed.sections],
        }
    sys.stdout.write(json.dumps(found))
    return 0


if __name__ == "__main__":
    sys.exit(main())
