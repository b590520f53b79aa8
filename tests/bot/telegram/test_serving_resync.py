"""A real serving process (`verbatim serve telegram`) re-reading its folder while it answers.

The bot runs as the Procfile runs it, against the fake Bot API and a fake embedding server in this process
(bag-of-words vectors: instant, and the embedding calls can be held at will). A question never waits for a
resync, a renamed file is answered throughout, and a resync that would fill the data disk (a small tmpfs, where
one can be mounted) stops before it does while every question is answered and logged.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from core.measuring.fakes import WordEmbedder
from tests.bot.telegram.conftest import TOKEN, WAIT, FakeBotAPI, private_message
from tests.fakes import FakeServer, Recorded, Reply

REPO = Path(__file__).resolve().parents[3]
PRICES = "---\ntitle: Prices\naudience: public\n---\n## Fronts\n\nOak fronts cost 185 EUR per m².\n"
OAK = "How much are oak fronts?"


def walnut(n: int, paragraphs: int) -> str:
    """A public document whose every paragraph says something of walnut worktops."""
    body = "\n\n".join(f"Walnut worktop {n}-{i} is oiled twice and costs {500 + i} EUR." for i in range(paragraphs))
    return f"---\ntitle: Worktops {n}\naudience: public\n---\n## Walnut\n\n{body}\n"


class Embeddings:
    """An OpenAI-compatible /embeddings endpoint; while `gate` is closed, a call with a walnut text waits."""

    def __init__(self) -> None:
        self.words = WordEmbedder(384)
        self.gate = threading.Event()
        self.gate.set()
        self.held = threading.Event()
        self.server = FakeServer(self.handle)

    def handle(self, request: Recorded) -> Reply:
        texts = request.body["input"]
        if not self.gate.is_set() and any("Walnut" in t for t in texts):
            self.held.set()
            self.gate.wait(WAIT)
        vectors = self.words.embed(texts)
        return Reply(200, {"data": [{"index": i, "embedding": v.tolist()} for i, v in enumerate(vectors)]})


class ServingBot:
    """`verbatim serve telegram` in a process of its own; `ask` sends a private message and waits for the reply."""

    def __init__(self, api: FakeBotAPI, embeddings: Embeddings, folder: Path, data: Path, workdir: Path) -> None:
        self.api = api
        env = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "TELEGRAM_", "VERBATIM_"))}
        env.update(
            TELEGRAM_BOT_TOKEN=TOKEN,
            TELEGRAM_API_BASE_URL=api.base_url,
            TELEGRAM_QUESTIONS_PER_MINUTE="1000",
            TELEGRAM_ADMIN_USERS="7",
            VERBATIM_EMBEDDER="remote",
            VERBATIM_EMBEDDING_BASE_URL=embeddings.server.url,
            VERBATIM_EMBEDDING_MODEL="words",
            VERBATIM_RESYNC_SECONDS="0.2",
            PYTHONPATH=str(REPO),
        )
        self.log = workdir / "serve.log"
        command = [
            sys.executable,
            "-m",
            "bot.cli",
            "serve",
            "telegram",
            "--knowledge",
            str(folder),
            "--data",
            str(data),
        ]
        with self.log.open("w") as log:
            self.process = subprocess.Popen(command, cwd=workdir, env=env, stdout=log, stderr=subprocess.STDOUT)
        self._wait(lambda: self.api.calls("getUpdates"), "the bot to poll")

    def ask(self, text: str) -> tuple[str, float]:
        """The reply's text and how long it took; a text starting with / is a command."""
        before = len(self.api.calls("sendMessage"))
        started = time.monotonic()
        command = [{"type": "bot_command", "offset": 0, "length": len(text.split()[0])}] if text[0] == "/" else []
        self.api.updates.append([private_message(text, **({"entities": command} if command else {}))])
        self._wait(lambda: len(self.api.calls("sendMessage")) > before, f"a reply to {text!r}")
        return str(self.api.calls("sendMessage")[before].body.get("text", "")), time.monotonic() - started

    def said(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(WAIT)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()

    def _wait(self, condition: Any, what: str) -> None:
        deadline = time.monotonic() + WAIT
        while not condition():
            assert self.process.poll() is None, f"the bot stopped: {self.said()[-2000:]}"
            assert time.monotonic() < deadline, f"waited {WAIT:.0f} s for {what}"
            threading.Event().wait(0.02)


def states(data: Path) -> dict[str, str]:
    """The register's states, as another process reads them."""
    with sqlite3.connect(f"file:{data / 'index.sqlite3'}?mode=ro", uri=True) as db:
        return dict(db.execute("SELECT path, state FROM documents").fetchall())


@pytest.fixture
def serving(tmp_path: Path) -> Iterator[Any]:
    api, embeddings = FakeBotAPI(), Embeddings()
    started: list[ServingBot] = []

    def start(folder: Path, data: Path) -> ServingBot:
        started.append(ServingBot(api, embeddings, folder, data, tmp_path))
        return started[-1]

    with api.server, embeddings.server:
        start.embeddings = embeddings  # type: ignore[attr-defined]
        yield start
        embeddings.gate.set()
        for bot in started:
            bot.stop()


def test_a_question_never_waits_for_the_resync_and_a_renamed_file_is_answered_throughout(tmp_path, serving):
    folder, data = tmp_path / "kb", tmp_path / "data"
    folder.mkdir()
    (folder / "prices.md").write_text(PRICES, encoding="utf-8")
    bot, embeddings = serving(folder, data), serving.embeddings
    assert "185 EUR" in bot.ask(OAK)[0]
    # A document of 300 fragments, listed before the price list: the resync embeds its first batch, and is held
    # there, before it reads the price list.
    embeddings.gate.clear()
    (folder / "a-worktops.md").write_text(walnut(0, 300), encoding="utf-8")
    waits = []
    while not embeddings.held.is_set():  # the question that finds the resync due starts it, and is answered
        reply, seconds = bot.ask(OAK)
        assert "185 EUR" in reply, reply
        waits.append(seconds)
    (folder / "prices.md").rename(folder / "price-list.md")  # listed by the resync under way, renamed since
    reply, seconds = bot.ask(OAK)
    assert "185 EUR" in reply and not embeddings.gate.is_set(), "answered while the resync is held"
    embeddings.gate.set()
    while states(data).get("price-list.md") != "indexed":
        reply, seconds = bot.ask(OAK)
        assert "185 EUR" in reply, f"refused while the file was renamed: {reply}"
    assert states(data)["prices.md"] == "removed"
    assert "Walnut worktop 0-7" in bot.ask("Is walnut worktop 0-7 oiled?")[0]
    assert "link that leads nowhere" not in bot.said()


def _mount_tmpfs(where: Path, size: str) -> None:
    where.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"a tmpfs can't be mounted here ({done.stderr.decode().strip()}); tests/core/ingest/test_space.py")


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    disk = tmp_path / "disk"
    _mount_tmpfs(disk, "48m")
    try:
        yield disk
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)


def test_a_resync_that_would_fill_the_disk_stops_and_every_question_is_answered(tmp_path, small_disk, serving):
    folder, data = tmp_path / "kb", small_disk / "data"
    folder.mkdir()
    (folder / "prices.md").write_text(PRICES, encoding="utf-8")
    bot = serving(folder, data)
    assert "185 EUR" in bot.ask(OAK)[0]
    ballast = small_disk / "ballast"
    with ballast.open("wb") as handle:  # the disk nearly full: 2 MB left, less than the reserve
        os.posix_fallocate(handle.fileno(), 0, shutil.disk_usage(small_disk).free - 2_000_000)
    for n in range(5):  # ~20 KB of text each: ~3 MB once indexed
        (folder / f"worktops-{n}.md").write_text(walnut(n, 300), encoding="utf-8")
    for _ in range(8):
        reply, _ = bot.ask(OAK)
        assert "185 EUR" in reply, reply
    free = shutil.disk_usage(small_disk).free
    assert free > 1_500_000, f"the resync wrote nothing; the run log took a few rows: {free:,} bytes free"
    said = bot.said()
    assert said.count("re-reading the knowledge folder failed") == 1, "said once, not at every try"
    assert "Indexing stopped before it filled the disk" in said and "DiskFull" not in said
    status, _ = bot.ask("/verbatim status")
    assert "The last sync failed: Indexing stopped before it filled the disk" in status
    ballast.unlink()  # space freed: the next try, a little later, indexes them
    deadline = time.monotonic() + WAIT
    while "Walnut worktop 3-7" not in bot.ask("Is walnut worktop 3-7 oiled?")[0]:
        assert time.monotonic() < deadline, "the folder was never read again"
    assert "The last sync failed" not in bot.ask("/verbatim status")[0]
