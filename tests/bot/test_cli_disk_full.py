"""A full disk: one sentence, exit 3 (not 1, "a document failed"), no traceback, and the right advice.

The disk fills through SQLite itself (`fill_disk`: the files can't grow, and SQLite fails the next
write that needs a page with its own SQLITE_FULL), so no temporary file system is needed.
"""

import contextlib
import io

from bot.cli import EXIT_DISK_FULL, main
from tests.fakes import fill_disk

WALNUT = "# Worktops\n\n" + "\n\n".join(f"Walnut worktop {i} is oiled twice and costs 520 EUR." * 4 for i in range(300))


def run(argv, capsys):
    code = main(argv, out=io.StringIO())
    return code, capsys.readouterr().err


def test_index_on_a_full_disk_is_one_sentence_and_exit_3_and_the_next_run_goes_on(
    tmp_path, capsys, monkeypatch, write_kb
):
    kb = write_kb({"fronts.md": "# Fronts\n\nOak fronts cost 185 EUR per m².\n"})
    args = ["--knowledge", str(kb), "--data", str(tmp_path / "data")]
    assert run(["index", *args], capsys)[0] == 0
    write_kb({"worktops.md": WALNUT})
    with monkeypatch.context() as disk:
        fill_disk(disk, "index.sqlite3")
        code, err = run(["index", *args], capsys)
    assert code == EXIT_DISK_FULL == 3
    assert "Traceback" not in err and err.count("\n") == 1
    assert "index.sqlite3 can't be written: the disk is full. Free some space" in err
    # Space freed: the next run indexes what the full disk stopped, and the first document is still there.
    code, err = run(["index", *args], capsys)
    assert code == 0, err
    code = main(["search", "oak fronts price", *args], out=(out := io.StringIO()))
    assert code == 0 and "Fronts" in out.getvalue()


def test_opening_the_run_log_on_a_full_disk_says_the_disk_is_full_not_move_it_aside(
    tmp_path, capsys, monkeypatch, write_kb
):
    kb = write_kb({"fronts.md": "# Fronts\n\nOak fronts cost 185 EUR per m².\n"})
    args = ["--knowledge", str(kb), "--data", str(tmp_path / "data")]
    assert run(["index", *args], capsys)[0] == 0
    for leftover in (tmp_path / "data").glob("runlog.sqlite3*"):
        leftover.unlink()  # a new run log (a new data folder, a log archived): its tables need room to be made
    fill_disk(monkeypatch, "runlog.sqlite3")
    code, err = run(["ask", "How much are oak fronts?", *args], capsys)
    assert code == EXIT_DISK_FULL and "Traceback" not in err
    assert "runlog.sqlite3 can't be written: the disk is full" in err and "move it aside" not in err


def test_asking_when_the_run_log_can_not_grow_is_one_sentence_and_exit_3(tmp_path, capsys, monkeypatch, write_kb):
    kb = write_kb({"fronts.md": "# Fronts\n\nOak fronts cost 185 EUR per m².\n"})
    args = ["--knowledge", str(kb), "--data", str(tmp_path / "data")]
    assert run(["index", *args], capsys)[0] == 0
    fill_disk(monkeypatch, "runlog.sqlite3")
    code, err = run(["ask", "How much are oak fronts? " + "x" * 1800, *args], capsys)  # a row that needs a page
    assert code == EXIT_DISK_FULL and "Traceback" not in err and err.count("\n") == 1
    assert "runlog.sqlite3 can't be written: the disk is full" in err


def test_the_help_lists_the_exit_codes(capsys):
    with contextlib.suppress(SystemExit):
        main(["--help"])
    assert "3    could not write: the disk" in capsys.readouterr().out
