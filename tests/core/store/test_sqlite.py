"""What only the SQLite store does: keep the bots' state in the data folder's files. What every store does, on
SQLite and PostgreSQL alike, is in test_store.py; a damaged or deleted file, in test_sqlite_recovery.py."""

from core.store import RUNLOG_FILE, open_store


def test_the_run_log_file_holds_a_conversation_key_only_hashed(tmp_path):
    store = open_store(tmp_path)
    store.state.link("telegram-message:7:1000", "conversation-a")
    hashed = store.state.hashed("telegram-message:7:1000")
    store.close()
    kept = (tmp_path / RUNLOG_FILE).read_bytes()
    assert hashed.encode() in kept, "the link was written to the file itself"
    assert b"telegram-message:7:1000" not in kept
