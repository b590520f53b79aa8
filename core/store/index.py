"""The index's SQL, once for every engine: documents, their fragments and vectors (see `IndexStore`).

An engine subclasses `SQLIndex` with how it connects (`_read`, `_write`), its dialect, and
what only it can do: load the corpus, rank in the database, recover a damaged file.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from core.common.errors import IndexFileError
from core.common.values import Fragment
from core.store.protocols import SearchingIndex
from core.store.records import Disk, DocumentRecord, KnownDocument, Unreferenced
from core.store.sql import Dialect, Sql

if TYPE_CHECKING:
    from core.common.values import Document

SEARCHED_STATES = "('indexed', 'indexing')"  # documents whose live fragments are searched
# What a hit shows of a fragment, read by `fragment_from`.
FRAGMENT_COLUMNS = (
    "f.id, f.document_id, d.audience, d.path, d.title, f.section, f.position, f.total, f.text, f.page, "
    "d.as_of, d.modified, d.review_every"
)

# What nothing refers to: fragments of no document, of a removed or failed one, and batches staged
# for a document another process has since swapped in (that run's commit would fail anyway).
# A document still `indexing` is left alone: its batches may be another process's work in progress.
_ORPHANS = "FROM fragments WHERE document_id NOT IN (SELECT id FROM documents)"
_UNINDEXED = (
    "FROM fragments WHERE document_id IN (SELECT id FROM documents WHERE state IN ('removed', 'failed', 'queued'))"
)
_STALE_BATCHES = (
    "FROM fragments WHERE staged != 0 AND document_id IN (SELECT id FROM documents WHERE state = 'indexed')"
)


def fragment_from(r: Sequence[Any]) -> Fragment:
    """A fragment from a row of FRAGMENT_COLUMNS."""
    section = tuple(json.loads(r[5]))
    return Fragment(r[3], r[4], r[2], section, r[6], r[7], r[8], r[9], r[10], r[12], r[11])


def document_values(document: Document) -> tuple[Any, ...]:
    """A document's register values after indexing, in the order of `commit`'s UPDATE: title, audience,
    owner, as_of, source, sha256, meta_sha256, size, licence, review_every, modified, language."""
    meta = document.meta
    return (
        document.title,
        document.audience,
        meta.get("owner") or None,
        meta.get("as_of") or None,
        meta.get("source") or None,
        document.sha256,
        document.meta_sha256,
        document.size,
        meta.get("licence") or meta.get("license") or None,
        meta.get("review_every") or None,
        document.modified or None,
        document.language,  # "" when it can't be told; NULL only for rows from before languages were kept
    )


class SQLIndex:
    """Documents, fragments and their vectors in one SQL database; an engine supplies the connection."""

    dialect: Dialect
    notice: str | None = None

    def __init__(self) -> None:
        self._staging: dict[str, int] = {}  # document path → the token of its batches being written
        self._stats: tuple[int, tuple[int, float, int]] | None = None  # (generation, stats)

    # --- what an engine supplies ------------------------------------------------------------------

    def _read(self) -> AbstractContextManager[Sql]:
        """A connection to read through; an engine's read errors become its sentence."""
        raise NotImplementedError

    def _write(self) -> AbstractContextManager[Sql]:
        """A connection in one transaction, committed when the block ends."""
        raise NotImplementedError

    def _set_dimension(self, db: Sql, dim: int) -> None:
        """Before the first vectors of a batch are written: remember (or fix) their dimension."""
        raise NotImplementedError

    def _forget_dimension(self, db: Sql) -> None:
        """After every vector was dropped: the next model's may have another dimension."""

    @property
    def approximate_path(self) -> Path | None:
        return None

    def searching(self) -> SearchingIndex | None:
        return None

    def damaged_copies(self) -> list[Path]:
        return []

    def disk(self) -> Disk | None:
        return None

    # --- the shared SQL -----------------------------------------------------------------------------

    def _meta(self, db: Sql, key: str) -> str | None:
        value = db.value("SELECT value FROM meta WHERE key = ?", (key,))
        return None if value is None else str(value)

    def _set_meta(self, db: Sql, key: str, value: str) -> None:
        db.execute(
            "INSERT INTO meta VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value", (key, value)
        )

    def _bump(self, db: Sql) -> None:
        """Inside a write transaction: the content changed, so every reader must reload."""
        db.execute("UPDATE meta SET value = CAST(CAST(value AS BIGINT) + 1 AS TEXT) WHERE key = 'generation'")

    def generation(self) -> int:
        with self._read() as db:
            return int(self._meta(db, "generation") or 0)

    def embedder_id(self) -> str | None:
        with self._read() as db:
            return self._meta(db, "embedder")

    def folder(self) -> str | None:
        with self._read() as db:
            return self._meta(db, "knowledge_folder")

    def dimension(self) -> int | None:
        with self._read() as db:
            value = self._meta(db, "dimension")
        return int(value) if value else None

    def sync_problem(self) -> str | None:
        with self._read() as db:
            return self._meta(db, "sync_problem")

    def set_sync_problem(self, problem: str | None) -> None:
        with self._write() as db:  # not the indexed content: no new generation
            if problem is None:
                db.execute("DELETE FROM meta WHERE key = 'sync_problem'")
            else:
                self._set_meta(db, "sync_problem", problem)

    def set_folder(self, folder: str) -> None:
        with self._write() as db:
            self._set_meta(db, "knowledge_folder", folder)

    def reset(self, embedder_id: str) -> None:
        with self._write() as db:
            db.execute("DELETE FROM documents")
            db.execute("DELETE FROM text_vectors")
            self._set_meta(db, "embedder", embedder_id)
            self._forget_dimension(db)
            db.execute("DELETE FROM meta WHERE key = 'dimension'")
            self._bump(db)

    def known(self) -> dict[str, KnownDocument]:
        with self._read() as db:
            # A removed document's row is history for the register; to a sync it is as if never seen.
            rows = db.all(
                "SELECT path, sha256, meta_sha256, state, error, language, size FROM documents WHERE state != 'removed'"
            )
        return {r[0]: KnownDocument(r[1], r[2], r[3], r[4], r[5], int(r[6] or 0)) for r in rows}

    def vectors_for(self, hashes: Sequence[str]) -> dict[str, np.ndarray]:
        return {digest: self.dialect.array(v) for digest, v in self._by_hash("fragments", "embedding", hashes)}

    def text_vectors(self, hashes: Sequence[str]) -> dict[str, np.ndarray]:
        return {
            d: np.frombuffer(bytes(blob), dtype=np.float32)
            for d, blob in self._by_hash("text_vectors", "vector", hashes)
        }

    def _by_hash(self, table: str, column: str, hashes: Sequence[str]) -> Iterator[tuple[str, Any]]:
        """(hash, stored vector) of each known hash in `table`."""
        unique = list(dict.fromkeys(hashes))
        with self._read() as db:
            for where, params in self.dialect.any_of("hash", unique):
                yield from db.all(f"SELECT hash, {column} FROM {table} WHERE {where}", params)

    def put_text_vectors(self, items: Sequence[tuple[str, np.ndarray]]) -> None:
        if not items:
            return
        with self._write() as db:
            db.executemany(
                "INSERT INTO text_vectors VALUES (?, ?) ON CONFLICT (hash) DO NOTHING",
                [(digest, vector.astype(np.float32).tobytes()) for digest, vector in items],
            )

    def mark_indexing(self, document: Document) -> None:
        with self._write() as db:
            # ON CONFLICT: another process (two bots on one data folder, or replicas) got there first.
            db.execute(
                "INSERT INTO documents (path, sha256, size, state) VALUES (?, ?, ?, 'queued') "
                "ON CONFLICT (path) DO NOTHING",
                (document.path, document.sha256, document.size),
            )
            db.execute("UPDATE documents SET state = 'indexing' WHERE path = ?", (document.path,))
            if document.audience != "public":
                # Narrowing takes effect now: the old version stays searchable until the swap, never to the public.
                narrowed = db.execute(
                    "UPDATE documents SET audience = ? WHERE path = ? AND audience != ?",
                    (document.audience, document.path, document.audience),
                ).rowcount
                if narrowed:
                    self._bump(db)
            # Batches left staged by a run that died half-way are never swapped in, but they are kept until this
            # run commits (which drops every row but its own): their vectors are found by hash, not embedded again.
        self._staging[document.path] = secrets.randbits(62) | 1  # this run's batches; 0 marks live fragments

    def _token(self, path: str) -> int:
        try:
            return self._staging[path]
        except KeyError:
            raise IndexFileError(f"{path} is written to the index without mark_indexing.") from None

    def stage(self, path: str, fragments: Sequence[Fragment], hashes: Sequence[str], vectors: np.ndarray) -> None:
        token = self._token(path)
        with self._write() as db:
            if len(vectors):
                self._set_dimension(db, int(vectors.shape[1]))
            doc_id = db.value("SELECT id FROM documents WHERE path = ?", (path,))
            db.executemany(
                "INSERT INTO fragments (document_id, position, total, section, text, embedding, hash, page, staged) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (doc_id, f.position, f.of, json.dumps(f.section), f.text, self.dialect.vector(v), h, f.page, token)
                    for f, h, v in zip(fragments, hashes, vectors, strict=True)
                ],
            )

    def commit(self, document: Document, count: int, replaces: str | None = None) -> None:
        token = self._token(document.path)
        with self._write() as db:  # one transaction: readers see the old fragments or the new, never neither
            doc_id = db.value(f"SELECT id FROM documents WHERE path = ?{self.dialect.lock_row}", (document.path,))
            staged = db.value("SELECT count(*) FROM fragments WHERE document_id = ? AND staged = ?", (doc_id, token))
            if staged != count:
                raise IndexFileError(
                    f"{document.path} was re-indexed by another process at the same time; its version is kept."
                )
            db.execute("DELETE FROM fragments WHERE document_id = ? AND staged != ?", (doc_id, token))
            db.execute("UPDATE fragments SET staged = 0 WHERE document_id = ?", (doc_id,))
            db.execute(
                "UPDATE documents SET title = ?, audience = ?, owner = ?, as_of = ?, source = ?, sha256 = ?, "
                f"meta_sha256 = ?, size = ?, state = 'indexed', error = NULL, indexed_at = {self.dialect.now}, "
                "licence = ?, review_every = ?, modified = ?, language = ? WHERE id = ?",
                (*document_values(document), doc_id),
            )
            if replaces is not None:  # renamed: the old name goes in this transaction, so it is one update
                self._drop(db, [replaces])
            self._bump(db)
        del self._staging[document.path]

    def abort(self, path: str) -> None:
        token = self._staging.pop(path, None)
        with self._write() as db:
            if token is not None:
                db.execute(
                    "DELETE FROM fragments WHERE staged = ? "
                    "AND document_id = (SELECT id FROM documents WHERE path = ?)",
                    (token, path),
                )
            db.execute(
                "UPDATE documents SET state = CASE WHEN indexed_at IS NULL THEN 'queued' ELSE 'indexed' END "
                "WHERE path = ?",
                (path,),
            )

    def fail(self, path: str, sha256: str, size: int, reason: str) -> None:
        with self._write() as db:
            # A document that no longer parses stops being quoted: its old text is not what the file says.
            # Its row stays (owner, title, source: the register still says whose it is).
            db.execute("DELETE FROM fragments WHERE document_id = (SELECT id FROM documents WHERE path = ?)", (path,))
            db.execute(
                "INSERT INTO documents (path, sha256, size, state, error) VALUES (?, ?, ?, 'failed', ?) "
                "ON CONFLICT (path) DO UPDATE SET sha256 = excluded.sha256, size = excluded.size, state = 'failed', "
                "error = excluded.error, meta_sha256 = '', indexed_at = NULL",
                (path, sha256, size, reason),
            )
            self._bump(db)

    def remove(self, paths: Sequence[str]) -> None:
        if not paths:
            return
        with self._write() as db:
            self._drop(db, paths)
            self._bump(db)

    def _drop(self, db: Sql, paths: Sequence[str]) -> None:
        """Inside a write transaction: the documents' fragments go, their register rows stay, marked `removed`."""
        for where, params in self.dialect.any_of("path", list(paths)):
            db.execute(f"DELETE FROM fragments WHERE document_id IN (SELECT id FROM documents WHERE {where})", params)
            db.execute(f"UPDATE documents SET state = 'removed', error = NULL, indexed_at = NULL WHERE {where}", params)

    def languages(self) -> dict[str, int]:
        with self._read() as db:
            rows = db.all(
                "SELECT coalesce(language, ''), count(*) FROM documents WHERE state = 'indexed' "
                "GROUP BY 1 ORDER BY 2 DESC, 1"
            )
        return {str(code): int(n) for code, n in rows}

    def inherit_language(self, language: str) -> None:
        with self._write() as db:  # the set of languages is unchanged (it holds `language`): nothing to reload
            db.execute("UPDATE documents SET language = ? WHERE state = 'indexed' AND language = ''", (language,))

    def register(self) -> list[DocumentRecord]:
        with self._read() as db:
            rows = db.all(
                "SELECT d.path, d.state, d.title, d.audience, d.owner, d.as_of, d.source, d.licence, "
                "d.review_every, d.sha256, d.size, d.error, "
                "(SELECT count(*) FROM fragments f WHERE f.document_id = d.id AND f.staged = 0), "
                f"d.indexed_at, d.modified, d.language FROM documents d ORDER BY d.path{self.dialect.byte_order}"
            )
        return [DocumentRecord(*row) for row in rows]

    def _unreferenced(self, db: Sql) -> Unreferenced:
        def count(where: str) -> int:
            return int(db.value(f"SELECT count(*) {where}"))

        order = f"ORDER BY path{self.dialect.byte_order}"
        removed = tuple(r[0] for r in db.all(f"SELECT path FROM documents WHERE state = 'removed' {order}"))
        return Unreferenced(count(_ORPHANS), count(_UNINDEXED), count(_STALE_BATCHES), removed)

    def unreferenced(self) -> Unreferenced:
        with self._read() as db:
            return self._unreferenced(db)

    def drop_unreferenced(self) -> Unreferenced:
        self._stats = None  # orphans go without a new generation
        with self._write() as db:
            found = self._unreferenced(db)
            for where in (_ORPHANS, _UNINDEXED, _STALE_BATCHES):
                db.execute(f"DELETE {where}")
            db.execute("DELETE FROM documents WHERE state = 'removed'")
        return found

    def stats(self) -> tuple[int, float, int]:
        # Every change to live fragments moves the generation, and reading every text's length costs 3 s
        # at 1M fragments: a bot re-reading an unchanged folder every minute pays it once.
        generation = self.generation()
        known = self._stats
        if known is not None and known[0] == generation:
            return known[1]
        with self._read() as db:
            count, mean, longest = db.execute(
                "SELECT count(*), avg(length(text)), max(length(text)) FROM fragments WHERE staged = 0"
            ).fetchone()
        self._stats = (generation, (int(count), float(mean or 0.0), int(longest or 0)))
        return self._stats[1]
