"""Fakes the tests share: the deterministic embedder from `core.measuring.fakes`, and a scripted HTTP
server on 127.0.0.1."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs

import numpy as np

from core.measuring.fakes import WordEmbedder

# The deterministic bag-of-words embedder `verbatim check` uses too.
FakeEmbedder = WordEmbedder


@dataclass
class Reply:
    """One scripted HTTP reply.

    `delay` holds it back that long: a slow server that does answer. `hang` holds it back until the
    server closes: a server that never answers, to provoke a client timeout whatever the machine's load.
    """

    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    hang: bool = False


@dataclass
class Recorded:
    path: str
    headers: dict[str, str]
    body: Any


# A hanging reply is released when its server closes; this bounds it only if a server is never closed.
HANG_LIMIT = 60.0


class FakeServer:
    """A real HTTP server on 127.0.0.1 whose replies come from a script or a handler function."""

    def __init__(self, handler: Callable[[Recorded], Reply] | None = None) -> None:
        self.requests: list[Recorded] = []
        self.script: list[Reply] = []
        self.handler = handler
        self.closing = threading.Event()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def _serve(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b""
                body: Any
                if "form-urlencoded" in (self.headers.get("content-type") or ""):
                    body = {k: v[0] for k, v in parse_qs(raw.decode()).items()}
                else:
                    try:
                        body = json.loads(raw) if raw else None
                    except ValueError:
                        body = raw.decode("utf-8", "replace")
                record = Recorded(self.path.split("?")[0], {k.lower(): v for k, v in self.headers.items()}, body)
                outer.requests.append(record)
                if outer.script:
                    reply = outer.script.pop(0)
                elif outer.handler:
                    reply = outer.handler(record)
                else:
                    reply = Reply(404, {"error": "nothing scripted"})
                if reply.hang:
                    outer.closing.wait(HANG_LIMIT)
                elif reply.delay:
                    threading.Event().wait(reply.delay)  # not time.sleep: tests patch that
                data = reply.body if isinstance(reply.body, bytes) else json.dumps(reply.body).encode()
                try:
                    self.send_response(reply.status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(data)))
                    for key, value in reply.headers.items():
                        self.send_header(key, value)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            do_POST = _serve  # noqa: N815
            do_GET = _serve  # noqa: N815

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)

    def __enter__(self) -> FakeServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.closing.set()
        self.server.shutdown()
        self.server.server_close()


_BLOCK = re.compile(r"^\[(\d+)\] (.+?)\n(.*?)(?=\n\n\[\d+\] |\n\nQuestion: )", re.DOTALL | re.MULTILINE)


def prompt_fragments(request: Recorded) -> dict[int, str]:
    """The numbered fragments an answer request showed the model: {n: text}."""
    user = request.body["messages"][-1]["content"]
    return {int(m.group(1)): m.group(3) for m in _BLOCK.finditer(user)}


def chat_reply(content: str | dict[str, Any], status: int = 200, **kwargs: Any) -> Reply:
    """A chat-completions reply whose message content is `content` (a dict is sent as JSON text)."""
    text = content if isinstance(content, str) else json.dumps(content)
    return Reply(status, {"choices": [{"message": {"role": "assistant", "content": text}}]}, **kwargs)


def quoting(*needles: str, found: bool = True) -> Callable[[Recorded], Reply]:
    """A fake model that quotes, for each needle, the sentence of a shown fragment holding it."""

    def handler(request: Recorded) -> Reply:
        if "standalone question" in request.body["messages"][0]["content"]:
            return chat_reply({"question": request.body["messages"][-1]["content"].rsplit(":", 1)[-1].strip()})
        statements = []
        for needle in needles:
            for number, text in prompt_fragments(request).items():
                for line in text.splitlines():
                    if needle in line:
                        quote = line.lstrip("- ").strip()
                        statements.append({"text": f"About {needle}.", "fragment": number, "quote": quote})
                        break
                else:
                    continue
                break
        return chat_reply({"found": found and bool(statements), "statements": statements})

    return handler


HANDBOOK_WORDS = [
    "oak",
    "walnut",
    "beech",
    "ash",
    "pine",
    "worktop",
    "front",
    "door",
    "drawer",
    "hinge",
    "delivery",
    "carry",
    "floor",
    "price",
    "weight",
    "warranty",
    "fitting",
    "glue",
]


def mixed_handbook(documents: int, sections: int, words: int, seed: int) -> dict[str, str]:
    """Documents of random furniture words, public and internal in turn, one fragment per section; each
    section ends in its own token (`item3x2`), so no two fragments are the same text."""
    rng = np.random.default_rng(seed)
    files = {}
    for number in range(documents):
        audience = "public" if number % 2 == 0 else "internal"
        parts = [
            f"## Part {s}\n\n" + " ".join(rng.choice(HANDBOOK_WORDS, size=words)).capitalize() + f" item{number}x{s}.\n"
            for s in range(sections)
        ]
        files[f"doc{number}.md"] = f"---\ntitle: Doc {number}\naudience: {audience}\n---\n" + "\n".join(parts)
    return files


def fill_disk(monkeypatch: Any, *file_names: str) -> None:
    """From now on, SQLite files named `file_names` can't grow: a full disk, as SQLite itself reports it.

    Each new connection to one of them gets `PRAGMA max_page_count` at its present size, so the next
    write that needs a page fails with SQLite's own SQLITE_FULL ("database or disk is full"), from the
    same place in SQLite a full disk fails it; no temporary file system is needed.
    """
    import sqlite3
    from pathlib import Path

    connect = sqlite3.connect

    def connect_to_full_disk(database: Any, *args: Any, **kwargs: Any) -> sqlite3.Connection:
        db = connect(database, *args, **kwargs)
        if Path(str(database)).name in file_names:
            pages = db.execute("PRAGMA page_count").fetchone()[0]
            db.execute(f"PRAGMA max_page_count = {max(int(pages), 1)}")
        return db

    monkeypatch.setattr(sqlite3, "connect", connect_to_full_disk)


class FullDiskConnection:
    """An open SQLite connection whose disk has just filled up: reads work, every write fails the way
    SQLite fails it (sqlite3.OperationalError "database or disk is full"). Put it in place of a store's
    connection (`store.runlog.db`) to fill the disk under a running bot."""

    WRITES = ("INSERT", "UPDATE", "DELETE", "REPLACE", "CREATE", "DROP", "ALTER")

    def __init__(self, db: Any) -> None:
        self._db = db

    def execute(self, sql: str, *args: Any) -> Any:
        if sql.lstrip().upper().startswith(self.WRITES):
            import sqlite3

            raise sqlite3.OperationalError("database or disk is full")
        return self._db.execute(sql, *args)

    def __enter__(self) -> FullDiskConnection:
        self._db.__enter__()
        return self

    def __exit__(self, *exc: Any) -> Any:
        return self._db.__exit__(*exc)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._db, name)
