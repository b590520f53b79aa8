"""A fake Slack Web API for the compose check (.ci/container): the replicas' SLACK_API_URL points here.

POST /api/<method> answers as Slack would (auth.test names the bot, chat.* return a ts) and records the call;
GET /calls returns every recorded call as JSON, so the check can see what each replica posted. Standard
library only: it runs in the test base image.
"""

from __future__ import annotations

import itertools
import json
import signal
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl

PORT = 3009
_calls: list[dict[str, Any]] = []
_lock = threading.Lock()
_ts = itertools.count(1)


def _reply(method: str) -> dict[str, Any]:
    if method == "auth.test":
        return {"ok": True, "user_id": "UBOT", "bot_id": "BBOT", "team_id": "T1", "team": "CI", "user": "verbatim"}
    if method.startswith("chat."):
        return {"ok": True, "channel": "C1", "ts": f"1800000000.{next(_ts):06d}", "message_ts": "1"}
    return {"ok": True}


def _fields(body: bytes, content_type: str) -> dict[str, Any]:
    text = body.decode("utf-8", "replace")
    if "json" in content_type:
        try:
            parsed = json.loads(text or "{}")
        except ValueError:
            return {"_raw": text}
        return parsed if isinstance(parsed, dict) else {"_raw": text}
    return dict(parse_qsl(text))


class Handler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        method = self.path.rstrip("/").rsplit("/", 1)[-1]
        with _lock:
            _calls.append({"method": method, "body": _fields(body, self.headers.get("Content-Type", ""))})
        self._send(_reply(method))

    def do_GET(self) -> None:
        with _lock:
            self._send({"calls": list(_calls)} if self.path == "/calls" else {"ok": True})

    def _send(self, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        print(f"fake Slack: {format % args}", flush=True)


if __name__ == "__main__":
    # As PID 1 in its container, Python would ignore SIGTERM: `compose down` would wait, then kill it.
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(0))
    print(f"fake Slack Web API on port {PORT}", flush=True)
    ThreadingHTTPServer(("0.0.0.0", PORT), Handler).serve_forever()
