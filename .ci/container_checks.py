"""The host side of .ci/container's checks: what an answer quoted, and what the Slack replicas did.

Standard library only (it runs with the machine's python3, before any venv). Each subcommand exits non-zero,
with one line that says why, when what it checks is not so.

  quotes ANSWER.json KNOWLEDGE EXPECT        the answer quotes its documents word for word, EXPECT among them
  wait-http URL SECONDS                      until URL answers 200; prints how long that took
  slack-event URL SECRET EVENT_ID CHANNEL TEXT [RETRY]   a signed app_mention, as Slack sends it
  wait-post API CHANNEL EXPECT SECONDS       until the fake Web API has a chat.postMessage to CHANNEL with EXPECT
  posts API CHANNEL                          how many chat.postMessage calls went to CHANNEL
"""

from __future__ import annotations

import hashlib
import hmac
import json
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any


def fail(why: str) -> None:
    sys.exit(f"container check failed: {why}")


def quotes(answer_file: str, knowledge: str, expect: str) -> None:
    answer = json.loads(Path(answer_file).read_text(encoding="utf-8"))
    if answer.get("kind") != "answered":
        fail(f"the answer is {answer.get('kind')!r} ({answer.get('reason')}), not 'answered'")
    found = [quote for statement in answer["statements"] for quote in statement["quotes"]]
    if not found:
        fail("the answer quotes nothing")
    for quote in found:
        document = Path(knowledge) / quote["document"]
        if document.suffix in (".md", ".txt") and quote["text"] not in document.read_text(encoding="utf-8"):
            fail(f"{quote['text']!r} is not in {quote['document']} word for word")
        print(f"  quoted: {quote['text']}  [{quote['caption']}]")
    if not any(expect in quote["text"] for quote in found):
        fail(f"no quote says {expect!r}")


def _get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=5) as response:
        return json.loads(response.read())


def wait_http(url: str, seconds: str) -> None:
    start = time.monotonic()
    deadline = start + float(seconds)
    while time.monotonic() < deadline:
        try:
            _get(url)
        except (OSError, ValueError):
            time.sleep(0.2)
            continue
        print(f"{time.monotonic() - start:.1f}")
        return
    fail(f"{url} did not answer within {seconds} s")


def slack_event(url: str, secret: str, event_id: str, channel: str, text: str, retry: str = "") -> None:
    ts = "1700000000.000100"
    event = {"type": "app_mention", "user": "U1", "text": f"<@UBOT> {text}", "ts": ts, "channel": channel}
    body = json.dumps(
        {
            "token": "legacy",
            "team_id": "T1",
            "api_app_id": "A1",
            "type": "event_callback",
            "event_id": event_id,
            "event_time": 1700000000,
            "event": {**event, "event_ts": ts},
            "authorizations": [{"team_id": "T1", "user_id": "UBOT", "is_bot": True}],
        }
    )
    stamp = str(int(time.time()))
    signature = "v0=" + hmac.new(secret.encode(), f"v0:{stamp}:{body}".encode(), hashlib.sha256).hexdigest()
    headers = {"Content-Type": "application/json", "X-Slack-Request-Timestamp": stamp, "X-Slack-Signature": signature}
    if retry:
        headers |= {"X-Slack-Retry-Num": retry, "X-Slack-Retry-Reason": "http_timeout"}
    request = urllib.request.Request(url, data=body.encode(), headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            status = response.status
    except urllib.error.HTTPError as exc:
        status = exc.code
    if status != 200:
        fail(f"{url} answered a signed event with HTTP {status}")


def _posts(api: str, channel: str) -> list[dict[str, Any]]:
    calls = _get(api.rstrip("/") + "/calls")["calls"]
    return [c["body"] for c in calls if c["method"] == "chat.postMessage" and c["body"].get("channel") == channel]


def wait_post(api: str, channel: str, expect: str, seconds: str) -> None:
    deadline = time.monotonic() + float(seconds)
    while time.monotonic() < deadline:
        for post in _posts(api, channel):
            if expect in post.get("text", ""):
                print(f"  {channel}: {post['text'].splitlines()[0][:100]}")
                return
        time.sleep(0.2)
    texts = [post.get("text", "")[:100] for post in _posts(api, channel)]
    fail(f"no answer to {channel} says {expect!r} within {seconds} s (posted: {texts})")


def posts(api: str, channel: str) -> None:
    print(len(_posts(api, channel)))


COMMANDS = {
    "quotes": quotes,
    "wait-http": wait_http,
    "slack-event": slack_event,
    "wait-post": wait_post,
    "posts": posts,
}

if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in COMMANDS:
        sys.exit(__doc__)
    COMMANDS[sys.argv[1]](*sys.argv[2:])
