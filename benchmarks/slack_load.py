"""Slack events sent at once to the HTTP-mode server: time to ack and to the posted answer.

Run: python benchmarks/slack_load.py [EVENTS] [REDELIVERIES] [--knowledge DIR]   (default 50 0, the demo)
The first REDELIVERIES events are sent a second time with the same event id and Slack's
X-Slack-Retry-Num header, as Slack does when it thinks an ack timed out: each must still be
answered once. A fake Slack Web API on 127.0.0.1 records chat.postMessage; the extractive
answerer answers. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from _chat import DEMO_QUESTIONS, warm_pipeline  # noqa: E402

from bot.slack import build_app, start_http_server  # noqa: E402
from bot.slack.config import SlackSettings  # noqa: E402
from tests.bot.slack.conftest import SECRET, event_body, mention, signed_headers, slack_api  # noqa: E402
from tests.fakes import FakeServer, Recorded, Reply  # noqa: E402

QUESTIONS = [*DEMO_QUESTIONS, "What is the capital of France?"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("events", type=int, nargs="?", default=50)
    parser.add_argument("redeliveries", type=int, nargs="?", default=0)
    parser.add_argument("--knowledge", type=Path, default=ROOT / "knowledge", help="another folder than the demo's")
    args = parser.parse_args()
    n, redeliver = args.events, args.redeliveries
    load = os.getloadavg()[0]  # the machine is shared: what else ran says how to read the figures
    posted: dict[str, float] = {}
    lock = threading.Lock()

    def api(request: Recorded) -> Reply:
        if request.path.endswith("chat.postMessage"):
            with lock:
                posted[request.body["thread_ts"]] = time.perf_counter()
        return slack_api(request)

    with FakeServer(api) as slack, warm_pipeline(args.knowledge) as pipeline:
        settings = SlackSettings("xoxb-bench", "http", signing_secret=SECRET, api_url=slack.url + "/api/")
        port, stop = start_http_server(build_app(settings, pipeline), 0, "127.0.0.1")
        url = f"http://127.0.0.1:{port}/slack/events"
        bodies = [
            (f"1700000100.{i:06d}", event_body(mention(QUESTIONS[i % len(QUESTIONS)], ts=f"1700000100.{i:06d}")), 0)
            for i in range(n)
        ]
        bodies += [(ts, body, 1) for ts, body, _ in bodies[:redeliver]]
        sent: dict[str, float] = {}
        acked: dict[str, float] = {}
        ack_ms: list[float] = []
        statuses: list[int] = []
        client = httpx.Client(limits=httpx.Limits(max_connections=min(len(bodies), 100)))

        def send(item: tuple[str, str, int]) -> None:
            ts, body, retry = item
            headers = signed_headers(body)
            if retry:
                headers |= {"X-Slack-Retry-Num": str(retry), "X-Slack-Retry-Reason": "http_timeout"}
            began = time.perf_counter()
            sent.setdefault(ts, began)
            response = client.post(url, content=body, headers=headers)
            acked[ts] = time.perf_counter()
            ack_ms.append((acked[ts] - began) * 1000)
            statuses.append(response.status_code)

        started = time.perf_counter()
        with ThreadPoolExecutor(max_workers=min(len(bodies), 100)) as pool:
            list(pool.map(send, bodies))
        deadline = time.monotonic() + 120
        while len(posted) < n and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.5)
        finished = max(posted.values(), default=started)
        stop.set()
        posts = sum(1 for r in slack.requests if r.path.endswith("chat.postMessage"))

    answer_ms = [(posted[t] - sent[t]) * 1000 for t in sent if t in posted]
    print(
        f"{n} events sent at once to the HTTP-mode server, {redeliver} of them redelivered (extractive answerer; "
        f"load average {load:.1f} before it began, {os.cpu_count()} CPUs)"
    )
    print(
        f"  HTTP 200 acks: {statuses.count(200)} of {len(bodies)}; answers posted: {len(posted)} threads, "
        f"{posts} chat.postMessage calls (lost: {n - len(posted)}, duplicated: {posts - len(posted)})"
    )
    print(
        f"  event → ack:    p50 {np.percentile(ack_ms, 50):7.1f} ms  p99 {np.percentile(ack_ms, 99):7.1f} ms  "
        f"max {max(ack_ms):7.1f} ms"
    )
    if answer_ms:
        print(
            f"  event → answer: p50 {np.percentile(answer_ms, 50):7.1f} ms  p95 {np.percentile(answer_ms, 95):7.1f} ms"
            f"  max {max(answer_ms):7.1f} ms"
        )
    print(f"  first event sent → last answer posted: {(finished - started) * 1000:.0f} ms")


if __name__ == "__main__":
    main()
