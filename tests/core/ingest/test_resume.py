"""Indexing killed mid-document and started again (issue 16): finished documents are skipped and the
vectors already stored, staged batches of the killed document included, go to no model again."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from core.ingest import FRAGMENT_BATCH, sync
from core.store import INDEX_FILE
from core.store.sqlite import SQLiteIndex
from tests.conftest import REPO
from tests.fakes import FakeEmbedder

SMALL = "---\ntitle: {name}\naudience: public\n---\n## Part\n\nThe {name} document says {name} things.\n"
BIG_SECTIONS = 3 * FRAGMENT_BATCH  # one fragment per section: three batches

# Index the folder with a model that takes its time, so the parent can kill it between two batches.
CHILD = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from core.ingest import sync
    from core.store.sqlite import SQLiteIndex
    from tests.fakes import FakeEmbedder

    class Slow(FakeEmbedder):
        def embed(self, texts):
            time.sleep(0.2)
            return super().embed(texts)

    sync(Path(sys.argv[1]), SQLiteIndex(Path(sys.argv[2])), Slow())
    """
)


def big_document() -> str:
    sections = [f"## Section {i}\n\nItem number {i} of the catalogue costs {i} euros." for i in range(BIG_SECTIONS)]
    return "---\ntitle: Catalogue\naudience: public\n---\n" + "\n\n".join(sections) + "\n"


def staged(path: Path, document: str) -> int:
    db = sqlite3.connect(path, timeout=10)
    try:
        return db.execute(
            "SELECT count(*) FROM fragments f JOIN documents d ON d.id = f.document_id "
            "WHERE d.path = ? AND f.staged != 0",
            (document,),
        ).fetchone()[0]
    except sqlite3.OperationalError:  # not created yet
        return 0
    finally:
        db.close()


def test_indexing_killed_mid_document_resumes_without_embedding_again(tmp_path, write_kb):
    folder = write_kb({"a.md": SMALL.format(name="alpha"), "b.md": SMALL.format(name="beta"), "c.md": big_document()})
    path = tmp_path / "data" / INDEX_FILE
    path.parent.mkdir()
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(folder), str(path)],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    try:
        deadline = time.monotonic() + 120
        while staged(path, "c.md") < FRAGMENT_BATCH:  # the big document's first batch is stored
            assert child.poll() is None, "the indexing process ended before it could be killed"
            assert time.monotonic() < deadline
            time.sleep(0.02)
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.wait()
    already = staged(path, "c.md")
    assert FRAGMENT_BATCH <= already < BIG_SECTIONS, "killed mid-document"

    model = FakeEmbedder()
    report = sync(folder, SQLiteIndex(path), model)
    assert (report.unchanged, report.updated + report.added) == (2, 1), "a.md and b.md were finished"
    assert report.embedded == BIG_SECTIONS - already, "only the fragments never stored go to the model"
    assert report.fragments == 2 + BIG_SECTIONS
    assert staged(path, "c.md") == 0, "the dead run's batches went with the commit"
