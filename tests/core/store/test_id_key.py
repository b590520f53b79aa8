"""Ids are kept as HMAC-SHA256 under the installation's own key, made at first use, shared by every process
on the store; a hash can no longer be reversed by hashing every plausible id."""

from __future__ import annotations

import shutil
import stat
import subprocess
import sys

import pytest

from core.common.values import LogRecord
from core.store import conversation_hash, open_store
from core.store.secret import SECRET_FILE, folder_secret
from tests.conftest import REPO


def entry(question: str) -> LogRecord:
    return LogRecord("a-" + question[:8], question, "refused", "no_match", [], 0, "extractive", {}, [], ())


def test_the_data_folders_key_is_made_at_first_use_readable_by_its_owner_only(tmp_path):
    store = open_store(tmp_path)
    key_file = tmp_path / SECRET_FILE
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    assert len(bytes.fromhex(key_file.read_text())) == 32
    again = open_store(tmp_path)
    assert store.state.hashed("telegram-user:7") == again.state.hashed("telegram-user:7"), "one key per folder"
    other = open_store(tmp_path / "other")
    assert other.state.hashed("telegram-user:7") != store.state.hashed("telegram-user:7"), "another installation"
    for opened in (store, again, other):
        opened.close()


def test_a_user_id_can_not_be_recovered_from_its_hash_without_the_key(tmp_path):
    # The attack the unkeyed hash fell to: hash every small Telegram user id until one matches the log's.
    store = open_store(tmp_path)
    kept = store.state.hashed("4821")
    store.close()
    guesses = {conversation_hash(str(n)): n for n in range(10_000)}
    assert kept not in guesses, "the keyed hash is not the unkeyed one"
    assert conversation_hash("4821") in guesses  # ...which was reversed this way in a second


def test_processes_racing_to_make_the_key_agree_on_one(tmp_path):
    code = "import sys; from pathlib import Path; from core.store.secret import folder_secret; "
    code += "print(folder_secret(Path(sys.argv[1])).hex())"
    env = {"PYTHONPATH": str(REPO)}
    racers = [
        subprocess.Popen([sys.executable, "-c", code, str(tmp_path)], stdout=subprocess.PIPE, text=True, env=env)
        for _ in range(6)
    ]
    keys = {racer.communicate()[0].strip() for racer in racers}
    assert keys == {(tmp_path / SECRET_FILE).read_text().strip()}
    assert [p.name for p in tmp_path.iterdir()] == [SECRET_FILE], "no draft left behind"


def test_a_data_folder_deleted_under_a_running_bot_gets_the_key_in_use_back(tmp_path):
    data = tmp_path / "data"
    store = open_store(data)
    before = store.state.hashed("slack:T1:C1:1.2")
    shutil.rmtree(data)
    store.runlog.record(entry("how much is oak?"), "slack", "slack:T1:C1:1.2")  # reopens the run log
    assert folder_secret(data) == store.state.secret  # type: ignore[attr-defined]
    assert open_store(data).state.hashed("slack:T1:C1:1.2") == before
    store.close()


def test_a_damaged_key_file_is_one_sentence(tmp_path):
    (tmp_path / SECRET_FILE).write_text("not a key")
    with pytest.raises(Exception, match=r"is not a key Verbatim made"):
        open_store(tmp_path)


def test_rows_hashed_before_the_key_stay_as_they_were(tmp_path):
    # Upgrading re-hashes nothing (a hash can't be turned into another): an old conversation's follow-up
    # starts a new history once, and old rows keep their unkeyed hashes.
    store = open_store(tmp_path)
    with store.runlog._write() as db:  # type: ignore[attr-defined]
        legacy = (conversation_hash("slack:T1:C1:9.9"), "old question")
        db.execute(
            "INSERT INTO entries (id, at, surface, conversation, question, kind, statements, discarded, fragments, "
            "timings, answerer, model_calls) VALUES ('old', '2026-01-01T00:00:00Z', 'slack', ?, ?, 'refused', "
            "'[]', 0, '[]', '{}', 'extractive', 0)",
            legacy,
        )
    assert store.runlog.history("slack:T1:C1:9.9") == []
    with store.runlog._read() as db:  # type: ignore[attr-defined]
        assert db.value("SELECT conversation FROM entries WHERE id = 'old'") == legacy[0]
    store.runlog.record(entry("and the walnut?"), "slack", "slack:T1:C1:9.9")
    assert [r.question for r in store.runlog.history("slack:T1:C1:9.9")] == ["and the walnut?"]
    store.close()


def test_replicas_on_one_postgresql_share_the_key_kept_in_the_database(database_url, tmp_path):
    import psycopg

    one, two = open_store(tmp_path / "a", database_url), open_store(tmp_path / "b", database_url)
    try:
        assert one.state.hashed("telegram-user:7") == two.state.hashed("telegram-user:7")
        assert one.state.hashed("telegram-user:7") != conversation_hash("telegram-user:7")
        assert not (tmp_path / "a" / SECRET_FILE).exists(), "the database's key, not a folder's"
        with psycopg.connect(database_url) as db:
            assert db.execute("SELECT count(*) FROM secrets").fetchone()[0] == 1
    finally:
        one.close()
        two.close()
