"""The SQLite store: the bots' shared state across store instances and processes, and the generation."""

import subprocess
import sys
from pathlib import Path

import numpy as np

from core.ingest import sync
from core.store import INDEX_FILE, open_store
from core.store.sqlite import SQLiteIndex

PRICES = "---\ntitle: Prices\naudience: public\n---\n## Fronts\n\nOak fronts cost 185 EUR per m².\n"


def test_an_event_is_first_seen_once_whichever_store_instance_asks(tmp_path):
    one, two = open_store(tmp_path), open_store(tmp_path)
    assert one.state.first_time("slack-event:Ev1")
    assert not two.state.first_time("slack-event:Ev1")
    assert two.state.first_time("slack-event:Ev2")
    assert two.state.first_time("slack-event:Ev1", ttl=0.0), "an id older than its ttl counts as new again"
    one.close()
    two.close()


def test_an_event_seen_by_another_process_is_not_first_time_here(tmp_path):
    code = "import sys; from core.store import open_store; print(open_store(sys.argv[1]).state.first_time('e:1'))"
    first = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, check=True)
    assert first.stdout.strip() == "True"
    store = open_store(tmp_path)
    assert not store.state.first_time("e:1")
    store.close()


def test_conversation_links_survive_a_restart_and_keep_no_raw_key(tmp_path):
    store = open_store(tmp_path)
    store.state.link("telegram-message:7:1000", "conversation-a")
    store.close()
    again = open_store(tmp_path)
    assert again.state.linked("telegram-message:7:1000") == "conversation-a"
    assert again.state.linked("telegram-message:7:1001") is None
    again.close()
    assert b"telegram-message:7:1000" not in (tmp_path / "runlog.sqlite3").read_bytes()


def test_rate_slots_are_shared_and_say_how_long_to_wait(tmp_path):
    one, two = open_store(tmp_path), open_store(tmp_path)
    assert one.state.take_slot("user:1", limit=2) == 0
    assert two.state.take_slot("user:1", limit=2) == 0
    wait = one.state.take_slot("user:1", limit=2, window=60.0)
    assert 0 < wait <= 60.0
    assert two.state.take_slot("user:2", limit=2) == 0, "limits are per key"
    assert one.state.take_slot("user:1", limit=2, window=0.0) == 0, "slots older than the window are free again"
    one.close()
    two.close()


def test_the_generation_moves_with_the_content_and_only_then(tmp_path, write_kb, fake_embedder):
    kb = write_kb({"prices.md": PRICES})
    index = SQLiteIndex(tmp_path / "data" / INDEX_FILE)
    sync(kb, index, fake_embedder)
    first = index.generation()
    sync(kb, index, fake_embedder)
    assert index.generation() == first, "an unchanged folder leaves the generation alone"
    (kb / "prices.md").write_text(PRICES.replace("185", "199"), encoding="utf-8")
    sync(kb, index, fake_embedder)
    changed = index.generation()
    assert changed != first
    assert index.load().generation == changed
    (kb / "other.md").write_text("# Other\n\nSomething else entirely here.", encoding="utf-8")
    (kb / "prices.md").unlink()
    sync(kb, index, fake_embedder)
    assert index.generation() not in (first, changed)


def test_vectors_are_found_again_by_fragment_hash(tmp_path, write_kb, fake_embedder):
    kb = write_kb({"prices.md": PRICES})
    index = SQLiteIndex(tmp_path / "data" / INDEX_FILE)
    sync(kb, index, fake_embedder)
    corpus = index.load()
    digest = index.db.execute("SELECT hash FROM fragments").fetchone()[0]
    found = index.vectors_for([digest, "no-such-hash"])
    assert list(found) == [digest]
    assert np.array_equal(found[digest], corpus.matrix[0])


def test_importing_core_opens_no_database():
    code = "import core, sys; print('sqlite3' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=Path.cwd())
    assert out.stdout.strip() == "False"


def test_processes_opening_one_new_data_folder_together_all_succeed_and_set_nothing_aside(tmp_path):
    """The Slack and Telegram bots start at once after an upgrade: migrations run one after the other."""
    code = "import sys; from core.store import open_store; open_store(sys.argv[1]).close()"
    for round_ in range(3):
        folder = tmp_path / f"data-{round_}"
        started = [subprocess.Popen([sys.executable, "-c", code, str(folder)]) for _ in range(4)]
        assert [p.wait(120) for p in started] == [0, 0, 0, 0]
        assert not list(folder.glob("*.corrupt-*")), "a live index was moved aside"
