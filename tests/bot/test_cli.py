import io

from bot.cli import main
from tests.conftest import DEMO_KB


def run(argv, capsys):
    out = io.StringIO()
    code = main(argv, out=out)
    return code, out.getvalue(), capsys.readouterr().err


def test_index_prints_counts_then_skips_unchanged(tmp_path, capsys):
    code, out, _ = run(["index", "--knowledge", str(DEMO_KB), "--data", str(tmp_path / "d")], capsys)
    assert code == 0
    assert "added 9, updated 0, unchanged 0, removed 0, failed 0" in out
    assert "fragments, mean" in out
    code, out, _ = run(["index", "--knowledge", str(DEMO_KB), "--data", str(tmp_path / "d")], capsys)
    assert "added 0, updated 0, unchanged 9" in out


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
    assert code == 0 and "damaged" in err and "added 9" in out
