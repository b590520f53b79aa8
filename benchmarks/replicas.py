"""Two Slack HTTP-mode replicas on one PostgreSQL: a redelivery that lands on the other replica is answered once.

Run: python benchmarks/replicas.py [EVENTS] [REDELIVERIES] [--knowledge DIR]   (default: 200 50, the demo)
Starts PostgreSQL + pgvector (pgserver, the dev extra) in a temporary folder, a fake Slack
Web API on 127.0.0.1, and two `verbatim serve slack` processes in HTTP mode sharing the
database. Events go to the replicas in turn; the first REDELIVERIES are sent again, with
Slack's retry headers, to the *other* replica. Prints lost / answered twice and ack times;
asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.bot.slack.conftest import SECRET, event_body, mention, signed_headers, slack_api  # noqa: E402
from tests.fakes import FakeServer, Recorded, Reply  # noqa: E402

QUESTIONS = ["how much is a walnut worktop?", "warranty on hinges?", "when is the balance due?", "do you make windows?"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_until_up(port: int, process: subprocess.Popen[bytes], limit: float = 300.0) -> None:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"a replica exited with code {process.returncode}")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1.0).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise SystemExit("a replica did not come up")


def main(n: int, redeliver: int, knowledge: Path = ROOT / "knowledge") -> dict[str, int]:
    import pgserver  # the dev extra

    posted: dict[str, int] = {}
    lock = threading.Lock()

    def api(request: Recorded) -> Reply:
        if request.path.endswith("chat.postMessage"):
            with lock:
                posted[request.body["thread_ts"]] = posted.get(request.body["thread_ts"], 0) + 1
        return slack_api(request)

    with tempfile.TemporaryDirectory() as tmp, FakeServer(api) as slack:
        server = pgserver.get_server(Path(tmp) / "pg", cleanup_mode="stop")
        server.psql("CREATE EXTENSION IF NOT EXISTS vector;")
        url = server.get_uri()
        ports = [free_port(), free_port()]
        env = os.environ | {
            "VERBATIM_DATABASE_URL": url,
            "VERBATIM_KNOWLEDGE_DIR": str(knowledge),
            "VERBATIM_DATA_DIR": str(Path(tmp) / "data"),
            "SLACK_MODE": "http",
            "SLACK_BOT_TOKEN": "xoxb-1234-5678-benchmark",
            "SLACK_SIGNING_SECRET": SECRET,
            "SLACK_API_URL": slack.url + "/api/",
            "OMP_NUM_THREADS": "1",
        }
        replicas = []
        for port in ports:
            replicas.append(
                subprocess.Popen(
                    [sys.executable, "-m", "bot.cli", "serve", "slack"],
                    env=env | {"SLACK_PORT": str(port)},
                    cwd=tmp,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
            )
        try:
            for port, process in zip(ports, replicas, strict=True):
                wait_until_up(port, process)
            bodies = []
            for i in range(n):
                ts = f"1700000200.{i:06d}"
                bodies.append((ts, event_body(mention(QUESTIONS[i % len(QUESTIONS)], ts=ts)), i % 2, 0))
            # The redelivery goes to the replica that did not get the first delivery.
            bodies += [(ts, body, 1 - replica, 1) for ts, body, replica, _ in bodies[:redeliver]]
            ack_ms: list[float] = []
            statuses: list[int] = []
            client = httpx.Client(timeout=60.0, limits=httpx.Limits(max_connections=50))

            def send(item: tuple[str, str, int, int]) -> None:
                _, body, replica, retry = item
                headers = signed_headers(body)
                if retry:
                    headers |= {"X-Slack-Retry-Num": "1", "X-Slack-Retry-Reason": "http_timeout"}
                began = time.perf_counter()
                response = client.post(f"http://127.0.0.1:{ports[replica]}/slack/events", content=body, headers=headers)
                ack_ms.append((time.perf_counter() - began) * 1000)
                statuses.append(response.status_code)

            started = time.perf_counter()
            with client, ThreadPoolExecutor(max_workers=50) as pool:
                list(pool.map(send, bodies))
            deadline = time.monotonic() + 300
            while len(posted) < n and time.monotonic() < deadline:
                time.sleep(0.05)
            time.sleep(2.0)  # room for a duplicate to arrive, were there one
            finished = time.perf_counter()
        finally:
            for process in replicas:
                process.terminate()
                process.wait(30)
            server.cleanup()
    twice = sum(1 for count in posted.values() if count > 1)
    print(f"{n} events over two replicas on one PostgreSQL, {redeliver} redelivered to the other replica")
    print(f"  HTTP 200 acks: {statuses.count(200)} of {len(bodies)}; threads answered: {len(posted)}")
    print(f"  lost: {n - len(posted)}; answered twice: {twice}")
    print(f"  ack p50 {np.percentile(ack_ms, 50):.1f} ms, p99 {np.percentile(ack_ms, 99):.1f} ms")
    print(f"  first event → all answered (+2 s watch for duplicates): {(finished - started):.1f} s")
    return {"acked": statuses.count(200), "answered": len(posted), "lost": n - len(posted), "twice": twice}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("events", type=int, nargs="?", default=200)
    parser.add_argument("redeliveries", type=int, nargs="?", default=50)
    parser.add_argument("--knowledge", type=Path, default=ROOT / "knowledge", help="another folder than the demo's")
    args = parser.parse_args()
    main(args.events, args.redeliveries, args.knowledge.resolve())
