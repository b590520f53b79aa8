import io

import pytest

from bot.cli import main
from core.ingest.folder import find_files
from tests.conftest import DEMO_KB

DEMO_DOCUMENTS = len(find_files(DEMO_KB))  # Markdown, the PDF and the DOCX


def run(argv, capsys):
    out = io.StringIO()
    code = main(argv, out=out)
    return code, out.getvalue(), capsys.readouterr().err


def test_index_prints_counts_then_skips_unchanged(tmp_path, capsys):
    code, out, _ = run(["index", "--knowledge", str(DEMO_KB), "--data", str(tmp_path / "d")], capsys)
    assert code == 0
    assert f"added {DEMO_DOCUMENTS}, updated 0, unchanged 0, removed 0, failed 0" in out
    assert "fragments, mean" in out
    code, out, _ = run(["index", "--knowledge", str(DEMO_KB), "--data", str(tmp_path / "d")], capsys)
    assert f"added 0, updated 0, unchanged {DEMO_DOCUMENTS}" in out


def test_search_prints_captions_and_scores(tmp_path, capsys):
    code, out, _ = run(
        [
            "search",
            "price of an oak worktop per metre",
            "--audience",
            "public",
            "--knowledge",
            str(DEMO_KB),
            "--data",
            str(tmp_path / "d"),
        ],
        capsys,
    )
    assert code == 0
    assert "1. 0." in out and "Price list › Worktops · fragment 3 of 7" in out


def test_empty_question_is_one_sentence_and_non_zero(tmp_path, capsys):
    code, _, err = run(["search", "   ", "--data", str(tmp_path / "d")], capsys)
    assert code == 2 and err.startswith("verbatim: The question is empty") and "Traceback" not in err


def test_overlong_question_is_refused(tmp_path, capsys):
    code, _, err = run(["search", "oak " * 5000, "--data", str(tmp_path / "d")], capsys)
    assert code == 2 and "limit is 2,000" in err


def test_missing_knowledge_folder_is_one_sentence(tmp_path, capsys):
    code, _, err = run(["index", "--knowledge", str(tmp_path / "nope"), "--data", str(tmp_path / "d")], capsys)
    assert code == 2 and "does not exist" in err and "Traceback" not in err


def test_malformed_setting_stops_with_the_variable_name(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("VERBATIM_MIN_SIMILARITY", "high")
    code, _, err = run(["index", "--data", str(tmp_path / "d")], capsys)
    assert code == 2 and "VERBATIM_MIN_SIMILARITY must be a number" in err


def test_corrupt_index_is_rebuilt_with_a_notice(tmp_path, capsys):
    data = tmp_path / "d"
    data.mkdir()
    (data / "index.sqlite3").write_bytes(b"garbage" * 1000)
    code, out, err = run(["index", "--knowledge", str(DEMO_KB), "--data", str(data)], capsys)
    assert code == 0 and "damaged" in err and f"added {DEMO_DOCUMENTS}" in out


@pytest.fixture
def kb_args(tmp_path, seed_index):
    return ["--knowledge", str(DEMO_KB), "--data", str(seed_index(tmp_path / "d"))]


def test_ask_renders_quotes_with_captions(kb_args, capsys):
    code, out, _ = run(["ask", "How much is a walnut worktop?", *kb_args], capsys)
    assert code == 0
    assert "│ Solid walnut worktop, 38 mm: 520 EUR per running metre." in out
    assert "📄 Price list › Worktops · fragment 3 of 7" in out


def test_ask_refusal_looks_different(kb_args, capsys):
    code, out, _ = run(["ask", "What is the capital of France?", *kb_args], capsys)
    assert code == 0 and "🚫 Not in the knowledge base" in out and "│" not in out


def test_ask_json_has_the_contract_fields(kb_args, capsys):
    import json

    code, out, _ = run(["ask", "How much is a walnut worktop?", "--json", "--audience", "public", *kb_args], capsys)
    data = json.loads(out)
    assert code == 0 and data["kind"] == "answered" and data["reason"] is None
    quote = data["statements"][0]["quotes"][0]
    assert (quote["document"], quote["section"], quote["position"], quote["of"]) == ("price-list.md", "Worktops", 3, 7)
    assert "total" in data["timings_ms"] and data["discarded"] == 0


def test_check_prints_n_of_n_pass(capsys):
    code, out, _ = run(["check"], capsys)
    assert code == 0
    last = out.strip().splitlines()[-1]
    passed, _, total = last.removesuffix(" pass").partition(" of ")
    assert passed == total and int(total) >= 14


def test_log_shows_recent_entries(tmp_path, kb_args, capsys):
    run(["ask", "How much is a walnut worktop?", *kb_args], capsys)
    code, out, _ = run(["log", "--tail", "5", "--data", str(tmp_path / "d")], capsys)
    assert code == 0 and "Q: How much is a walnut worktop?" in out and "answered, extractive" in out


def test_chat_answers_follow_ups_and_refuses_in_its_own_style(kb_args, monkeypatch, capsys):
    import sys

    lines = "How much is a solid oak worktop?\nand how heavy is a 3 m one?\n\nWhat is the capital of France?\n/quit\n"
    monkeypatch.setattr(sys, "stdin", io.StringIO(lines))
    code, out, _ = run(["chat", *kb_args], capsys)
    assert code == 0
    assert "310 EUR per running metre" in out
    assert "53 kg" in out
    assert "🚫 Not in the knowledge base" in out


def test_chat_survives_an_overlong_message(kb_args, monkeypatch, capsys):
    import sys

    monkeypatch.setattr(sys, "stdin", io.StringIO("oak " * 5000 + "\n"))
    code, out, _ = run(["chat", *kb_args], capsys)
    assert code == 0 and "limit is 2,000" in out


def test_file_names_reach_the_terminal_escaped(tmp_path, capsys):
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "ok.md").write_text("# Ok\n\nA sentence that indexes well.\n")
    (kb / "evil\x1b[2Jname\n.md").write_bytes(b"\xff\xfe not utf-8")
    code, out, err = run(["index", "--knowledge", str(kb), "--data", str(tmp_path / "d")], capsys)
    assert code == 1
    assert "\x1b" not in out + err and "evil\\x1b[2Jname\\n.md" in out


def test_a_knowledge_folder_that_is_gone_leaves_questions_answered_from_the_intact_index(tmp_path, capsys):
    import shutil

    kb = tmp_path / "kb"
    shutil.copytree(DEMO_KB, kb)
    data = str(tmp_path / "d")
    assert run(["index", "--knowledge", str(kb), "--data", data], capsys)[0] == 0
    kb.rename(tmp_path / "unmounted")
    code, out, err = run(["search", "walnut worktop price", "--knowledge", str(kb), "--data", data], capsys)
    assert code == 0 and "Price list" in out
    assert "does not exist" in err and "indexed before" in err
    # `index` itself still fails: it can't bring the index in line with a folder it can't read.
    assert run(["index", "--knowledge", str(kb), "--data", data], capsys)[0] == 2


def test_an_index_of_another_embedding_model_is_not_searched_when_the_folder_is_gone(tmp_path, capsys):
    import shutil
    import sqlite3

    kb = tmp_path / "kb"
    shutil.copytree(DEMO_KB, kb)
    data = tmp_path / "d"
    assert run(["index", "--knowledge", str(kb), "--data", str(data)], capsys)[0] == 0
    with sqlite3.connect(data / "index.sqlite3") as db:  # as if it had been built by another model
        db.execute("UPDATE meta SET value = 'another-model' WHERE key = 'embedder'")
    kb.rename(tmp_path / "unmounted")
    code, _, err = run(["search", "walnut worktop price", "--knowledge", str(kb), "--data", str(data)], capsys)
    assert code == 2 and "does not exist" in err


def test_ask_exits_non_zero_when_answering_failed(kb_args, capsys, monkeypatch):
    # A model server that is down: the user reads an apology, and a script sees the failure in the exit code.
    monkeypatch.setenv("VERBATIM_ANSWERER", "llm")
    monkeypatch.setenv("VERBATIM_LLM_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("VERBATIM_LLM_MODEL", "m")
    monkeypatch.setenv("VERBATIM_LLM_TIMEOUT", "2")
    code, out, _ = run(["ask", "How much is a walnut worktop?", *kb_args], capsys)
    assert code == 1 and "│" not in out


def test_a_question_keeps_no_terminal_escape_codes():
    from core import clean_question

    # Arrow keys typed where no line editing runs, and a stray bell: never stored or shown.
    assert clean_question("how much\x1b[D\x1b[C is\x07 an oak worktop?") == "how much is an oak worktop?"


def test_no_command_prints_the_help_and_exits_2(capsys):
    code, out, err = run([], capsys)
    assert code == 2 and out.startswith("usage: verbatim") and "index" in out and "exit codes:" in out
    assert err == ""


def test_a_misspelt_command_is_told_the_closest_one(capsys):
    with pytest.raises(SystemExit) as exited:
        run(["-v", "idnex", "--data", "d"], capsys)
    err = capsys.readouterr().err
    assert exited.value.code == 2 and "unknown command 'idnex': did you mean 'index'?" in err
    with pytest.raises(SystemExit):
        run(["xyzzy"], capsys)
    assert "invalid choice: 'xyzzy'" in capsys.readouterr().err, "nothing close: argparse lists the commands"


@pytest.mark.parametrize(
    "argv", [["index"], ["search", "oak?"], ["ask", "oak?"], ["chat"], ["serve", "telegram"]], ids=lambda a: a[0]
)
def test_a_missing_knowledge_folder_creates_nothing(argv, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", "123456789:AAE" + "x" * 32)
    monkeypatch.delenv("TELEGRAM_WEBHOOK_URL", raising=False)
    data = tmp_path / "d"
    code, _, err = run([*argv, "--knowledge", str(tmp_path / "missing"), "--data", str(data)], capsys)
    assert code == 2 and "The knowledge folder" in err and "does not exist" in err and "--knowledge" in err
    assert not data.exists()


def test_index_warns_when_the_set_embedder_does_not_read_the_documents_language(tmp_path, capsys, monkeypatch):
    from tests.bot.test_doctor import SPANISH

    kb = tmp_path / "kb"
    kb.mkdir()
    for n in range(3):
        (kb / f"garantia{n}.md").write_text(SPANISH.replace("cinco", str(n + 2)), encoding="utf-8")
    monkeypatch.setenv("VERBATIM_EMBEDDER", "local")
    code, out, _ = run(["index", "--knowledge", str(kb), "--data", str(tmp_path / "d")], capsys)
    assert code == 0
    assert "Most documents are not in English (Spanish 3), and VERBATIM_EMBEDDER=local embeds them with MiniLM" in out
    assert "set VERBATIM_EMBEDDER=multilingual" in out


def test_index_names_the_skipped_files(tmp_path, capsys):
    import shutil

    kb = tmp_path / "kb"
    shutil.copytree(DEMO_KB, kb)
    (kb / "logo.png").write_bytes(b"")
    code, out, _ = run(["index", "--knowledge", str(kb), "--data", str(tmp_path / "d")], capsys)
    assert code == 0 and "1 file skipped (no reader for their type): .png 1 (logo.png)" in out


def test_a_folder_that_would_remove_most_of_the_index_needs_replace(tmp_path, capsys):
    kb = tmp_path / "kb"
    kb.mkdir()
    for n in range(4):
        (kb / f"doc{n}.md").write_text(f"# Doc {n}\n\nDocument number {n} says something of its own.\n")
    data = str(tmp_path / "d")
    assert run(["index", "--knowledge", str(kb), "--data", data], capsys)[0] == 0
    for n in range(3):
        (kb / f"doc{n}.md").unlink()
    code, out, err = run(["index", "--knowledge", str(kb), "--data", data], capsys)
    assert code == 2 and "would remove 3 of the 4 documents indexed" in err and "index --replace" in err
    code, out, _ = run(["index", "--knowledge", str(kb), "--data", data, "--replace"], capsys)
    assert code == 0 and "removed 3" in out
