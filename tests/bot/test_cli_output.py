"""What `verbatim` logs, prints and exits with: -v, an escaped run log, exit codes, one notice, placeholders."""

import io
import os
import shutil

import pytest

from bot.cli import main, printable
from tests.conftest import DEMO_KB, REPO
from tests.fakes import FakeServer


def run(argv, capsys):
    out = io.StringIO()
    code = main(argv, out=out)
    return code, out.getvalue(), capsys.readouterr().err


@pytest.fixture
def kb_args(tmp_path, seed_index):
    return ["--knowledge", str(DEMO_KB), "--data", str(seed_index(tmp_path / "d"))]


# --- -v logs what happens -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        (["index"], "synced in"),
        (["search", "how much is a walnut worktop?"], "retrieved"),
        (["ask", "how much is a walnut worktop?"], "answered by the extractive answerer"),
    ],
)
def test_verbose_logs_each_command_to_stderr(kb_args, capsys, command, expected):
    code, _, err = run(["-v", *command, *kb_args], capsys)
    assert code == 0 and " INFO " in err and expected in err
    code, _, quiet = run([*command, *kb_args], capsys)
    assert " INFO " not in quiet


# --- the run log cannot drive the terminal --------------------------------------------------------


def test_the_run_log_shows_control_characters_escaped(tmp_path, kb_args, capsys):
    question = "\x1b[2J\x1b[31mhow much is a walnut worktop?\x07 \u202eevil"
    run(["ask", question, *kb_args], capsys)
    code, out, _ = run(["log", "--data", str(tmp_path / "d")], capsys)
    assert code == 0
    assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out
    # Terminal codes never reach the log (clean_question drops them); what is left is shown escaped.
    assert "Q: how much is a walnut worktop? \\u202eevil" in out


def test_printable_keeps_ordinary_text():
    assert printable("Größe 3 m² — 👍 ok") == "Größe 3 m² — 👍 ok"
    assert printable("a\tb\nc\x9bd") == "a\\tb\\nc\\x9bd"


# --- index's exit code ----------------------------------------------------------------------------


def test_index_exits_1_and_names_the_documents_that_failed(tmp_path, write_kb, capsys):
    folder = write_kb({"good.md": "# Good\n\nOak is sturdy.\n", "broken.md": b"# Broken\n\n\xff\xfe not text\n"})
    code, out, err = run(["index", "--knowledge", str(folder), "--data", str(tmp_path / "d")], capsys)
    assert code == 1
    assert "failed 1" in out and "failed: broken.md" in out
    assert "1 document(s) could not be indexed: broken.md" in err
    assert err.count("broken.md") == 1, "the report names it; core's log line would say it a third time"
    (folder / "broken.md").write_text("# Fixed\n\nNow it is text.\n", encoding="utf-8")
    code, out, _ = run(["index", "--knowledge", str(folder), "--data", str(tmp_path / "d")], capsys)
    assert code == 0 and "failed 0" in out


# --- a damaged index: one notice, no pile of damaged files ----------------------------------------


def test_a_damaged_index_is_announced_once_and_only_its_latest_copy_kept(tmp_path, write_kb, capsys):
    folder = write_kb({"good.md": "# Good\n\nOak is sturdy.\n"})
    data = tmp_path / "d"
    data.mkdir()
    for suffix in ("", "-wal", "-shm"):  # left by an earlier rebuild
        (data / f"index.sqlite3.corrupt-20000101-000000{suffix}").write_bytes(b"old")
    (data / "index.sqlite3").write_bytes(b"garbage" * 1000)
    (data / "index.sqlite3-wal").write_bytes(b"wal")
    (data / "index.sqlite3-shm").write_bytes(b"shm")
    code, out, err = run(["index", "--knowledge", str(folder), "--data", str(data)], capsys)
    assert code == 0 and "added 1" in out
    assert err.count("is damaged") == 1 and err.count("\n") == 1, err
    aside = sorted(p.name for p in data.iterdir() if ".corrupt-" in p.name)
    latest = aside[0]
    assert "20000101" not in latest, "the older damaged copy is gone"
    assert set(aside) <= {latest, f"{latest}-wal"}, "at most the latest copy and its -wal; never a -shm"


# --- serve with the placeholders of .env.example --------------------------------------------------


@pytest.fixture
def env_example(tmp_path):
    """`cp .env.example .env` in the working folder; the variables it loads are removed afterwards."""
    shutil.copyfile(REPO / ".env.example", tmp_path / ".env")
    saved = dict(os.environ)
    yield
    os.environ.clear()
    os.environ.update(saved)


@pytest.mark.parametrize(
    ("surface", "api_variable", "sentence"),
    [
        ("slack", "SLACK_API_URL", "verbatim: SLACK_BOT_TOKEN is not set"),
        ("telegram", "TELEGRAM_API_BASE_URL", "verbatim: TELEGRAM_BOT_TOKEN is not set"),
    ],
)
def test_serve_with_the_example_env_stops_in_one_sentence_before_any_network_call(
    env_example, monkeypatch, capsys, surface, api_variable, sentence
):
    with FakeServer() as api:
        monkeypatch.setenv(api_variable, api.url + "/api/")
        code, _, err = run(["serve", surface], capsys)
    assert code == 2 and err.startswith(sentence) and err.count("\n") == 1
    assert api.requests == []


def test_the_app_token_placeholder_is_named_once_the_bot_token_is_real(env_example, monkeypatch, capsys):
    # A .env copied from an earlier .env.example, whose Slack tokens were placeholders, not comments.
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-1-2-real")
    monkeypatch.setenv("SLACK_APP_TOKEN", "xapp-")
    code, _, err = run(["serve", "slack"], capsys)
    assert code == 2 and err.startswith("verbatim: SLACK_APP_TOKEN is still the xapp- placeholder")
