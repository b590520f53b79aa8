"""Loading an SQLite index for search: ids, audiences and vectors in memory, the text read for hits only."""

from __future__ import annotations

import itertools
import logging
import sqlite3
import threading
import weakref
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from core.common.errors import IndexCorrupt
from core.common.values import Fragment
from core.store.corpus import Corpus, StoredFragments, find_rows
from core.store.index import FRAGMENT_COLUMNS, SEARCHED_STATES, fragment_from
from core.store.sql import SQLiteDialect

log = logging.getLogger("core.store.sqlite")


class FragmentReader:
    """Reads the fragments of a loaded corpus's rows, through the connection it was loaded with.

    A row whose fragment is gone, was swapped out, or whose document is no longer searched or no
    longer has the audience it was loaded with reads as None: a search never shows text the
    store has dropped or narrowed since. Thread-safe; the connection closes with the corpus.
    """

    def __init__(
        self, path: Path, db: sqlite3.Connection, ids: np.ndarray, documents: np.ndarray, audiences: np.ndarray
    ) -> None:
        self.path, self.db = path, db
        self.ids, self.documents, self.audiences = ids, documents, audiences
        self.lock = threading.Lock()
        self.close = weakref.finalize(self, db.close)  # with the corpus, or with the index, whichever is first

    def __call__(self, rows: Sequence[int]) -> list[Fragment | None]:
        by_id = {int(self.ids[r]): r for r in rows}
        found: dict[int, Fragment] = {}
        try:
            with self.lock:
                for where, params in SQLiteDialect().any_of("f.id", list(by_id)):
                    for r in self.db.execute(
                        f"SELECT {FRAGMENT_COLUMNS} FROM fragments f JOIN documents d ON d.id = f.document_id "
                        f"WHERE {where} AND f.staged = 0 AND d.state IN {SEARCHED_STATES}",
                        params,
                    ):
                        row = by_id[r[0]]
                        # A reused id (another document's row now) or a narrowed document is not what was loaded.
                        if r[1] == self.documents[row] and r[2] == self.audiences[row]:
                            found[r[0]] = fragment_from(r)
        except sqlite3.Error as exc:  # damaged, or closed: the hits can't be shown, the caller reloads
            log.warning("the index file %s can't be read for the hits' text: %s", self.path, exc)
        return [found.get(int(self.ids[r])) for r in rows]


def load_corpus(path: Path, db: sqlite3.Connection) -> tuple[Corpus, FragmentReader]:
    """The corpus in `db` (inside the caller's snapshot), and the reader that keeps `db` to read its hits."""

    def meta(key: str) -> str | None:
        row = db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    generation = int(meta("generation") or 0)
    dim = int(meta("dimension") or 0)
    # Only indexed documents are quoted; one being re-indexed keeps its last indexed version (its live
    # fragments) until the new one is swapped in. Removed and failed ones have none.
    # Public documents first: the public scope is then a slice of the matrix, not a copy of it.
    docs = db.execute(
        f"SELECT id, title, audience FROM documents WHERE state IN {SEARCHED_STATES} "
        "ORDER BY audience != 'public', path"
    ).fetchall()
    doc_ids = np.array([d[0] for d in docs], dtype=np.int64)
    by_doc = np.argsort(doc_ids)
    # Ids and documents of the live fragments, from the index alone (never the rows' text or vectors),
    # by document and then id: a document's fragments are stored in position order, so ids follow positions.
    pairs = db.execute("SELECT id, document_id FROM fragments WHERE staged = 0 ORDER BY document_id, id")
    plan = np.fromiter(itertools.chain.from_iterable(pairs), dtype=np.int64).reshape(-1, 2)
    place, searched = find_rows(doc_ids[by_doc], by_doc, plan[:, 1])
    rank = place[searched]  # each row's document's place in the order above
    ids = plan[searched, 0]
    del plan
    order = np.argsort(rank, kind="stable")
    ids, rank = ids[order], rank[order]
    matrix = np.empty((len(ids), dim), dtype=np.float32)
    if len(ids):
        _stream_vectors(path, db, ids, matrix)
    audiences = np.array([d[2] for d in docs], dtype=object)[rank]
    reader = FragmentReader(path, db, ids, doc_ids[rank], audiences)
    corpus = Corpus(
        ids=ids,
        fragments=StoredFragments(len(ids), reader),
        matrix=matrix,
        audiences=audiences,
        documents=doc_ids[rank],
        generation=generation,
        document_titles={int(d[0]): d[1] for d in docs},
    )
    return corpus, reader


def _stream_vectors(path: Path, db: sqlite3.Connection, ids: np.ndarray, matrix: np.ndarray) -> None:
    """Fill `matrix` (rows in the order of `ids`) in one pass over the table in storage order, a chunk at a time."""
    by_id = np.argsort(ids)
    sorted_ids = ids[by_id]
    bytes_per_row = matrix.shape[1] * 4
    filled = 0
    # NOT INDEXED: a scan in storage order reads each page once; the index on `staged` would jump around.
    rows = db.execute("SELECT id, embedding FROM fragments NOT INDEXED WHERE staged = 0")
    while chunk := rows.fetchmany(4096):
        chunk_ids = np.fromiter((r[0] for r in chunk), dtype=np.int64, count=len(chunk))
        at, wanted = find_rows(sorted_ids, by_id, chunk_ids)  # rows of documents not searched are skipped
        blobs = [r[1] for r, w in zip(chunk, wanted, strict=True) if w]
        if any(len(b) != bytes_per_row for b in blobs):
            raise IndexCorrupt(f"The index file {path} holds vectors of the wrong size.")
        if blobs:
            matrix[at[wanted]] = np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(blobs), -1)
            filled += len(blobs)
    if filled != len(ids):
        raise IndexCorrupt(f"The index file {path} lost fragments while it was read.")
