"""The rebuildable SQLite index: documents, fragments and their vectors.

Re-indexing is incremental by file SHA-256; a changed document's fragments are
swapped in one transaction, so a crash mid-way leaves the previous version searchable.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from core.documents import Document, find_files, parse_document, sha256_of
from core.embeddings import Embedder
from core.errors import DocumentError, IndexCorrupt, IndexFileError, KnowledgeError
from core.fragments import Fragment, fragment_document

log = logging.getLogger(__name__)

INDEX_FILE = "index.sqlite3"


def _m001_initial(db: sqlite3.Connection) -> None:
    db.executescript(
        """
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE documents (
            id INTEGER PRIMARY KEY,
            path TEXT NOT NULL UNIQUE,
            title TEXT NOT NULL DEFAULT '',
            audience TEXT NOT NULL DEFAULT 'internal',
            owner TEXT, as_of TEXT, source TEXT,
            sha256 TEXT NOT NULL,
            size INTEGER NOT NULL,
            state TEXT NOT NULL CHECK (state IN ('queued', 'indexing', 'indexed', 'failed')),
            error TEXT,
            indexed_at TEXT
        );
        CREATE TABLE fragments (
            id INTEGER PRIMARY KEY,
            document_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
            position INTEGER NOT NULL,
            of INTEGER NOT NULL,
            section TEXT NOT NULL,  -- JSON list of headings
            text TEXT NOT NULL,
            vector BLOB NOT NULL
        );
        CREATE INDEX fragments_by_document ON fragments(document_id);
        """
    )


MIGRATIONS: list[Callable[[sqlite3.Connection], None]] = [_m001_initial]


def migrate(db: sqlite3.Connection, migrations: list[Callable[[sqlite3.Connection], None]]) -> None:
    """Apply, in order, the migrations this database has not seen, each recorded by name."""
    db.execute("CREATE TABLE IF NOT EXISTS _migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")
    done = {row[0] for row in db.execute("SELECT name FROM _migrations")}
    for step in migrations:
        if step.__name__ not in done:
            with db:
                step(db)
                db.execute("INSERT INTO _migrations VALUES (?, datetime('now'))", (step.__name__,))


@dataclass(frozen=True)
class Hit:
    """A fragment found for a question, with its cosine similarity."""

    fragment_id: int
    fragment: Fragment
    score: float


@dataclass
class SyncReport:
    """What one `sync` did; `failed` maps a document path to its reason."""

    added: int = 0
    updated: int = 0
    unchanged: int = 0
    removed: int = 0
    failed: dict[str, str] = field(default_factory=dict)
    rebuilt: bool = False
    fragments: int = 0
    mean_chars: float = 0.0
    max_chars: int = 0
    seconds: float = 0.0

    @property
    def changed(self) -> bool:
        return bool(self.added or self.updated or self.removed or self.rebuilt)


@dataclass(frozen=True)
class Corpus:
    """Every fragment with its vector, loaded once: rows of `matrix` match `fragments`."""

    ids: np.ndarray  # int64 fragment ids
    fragments: tuple[Fragment, ...]
    matrix: np.ndarray  # float32, (n, dim), unit rows
    audiences: np.ndarray  # str, one per row
    documents: np.ndarray  # int, document number per row (for the per-document cap)


class Index:
    """One SQLite file in the data folder; opening a damaged file raises IndexCorrupt."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self.db = sqlite3.connect(path, check_same_thread=False)
            self.db.execute("PRAGMA foreign_keys = ON")
            self.db.execute("PRAGMA journal_mode = WAL")
            if self.db.execute("PRAGMA quick_check").fetchone()[0] != "ok":
                raise sqlite3.DatabaseError("quick_check failed")
            migrate(self.db, MIGRATIONS)
        except sqlite3.DatabaseError as exc:
            raise IndexCorrupt(f"The index file {path} is damaged ({exc}).") from exc
        except OSError as exc:
            raise IndexFileError(f"The index file {path} can't be opened ({exc.strerror}).") from exc

    @classmethod
    def open_or_rebuild(cls, data_dir: Path) -> tuple[Index, str | None]:
        """Open the index; a damaged file is moved aside and a fresh one started (with a notice)."""
        path = data_dir / INDEX_FILE
        try:
            return cls(path), None
        except IndexCorrupt as exc:
            aside = path.with_name(f"{path.name}.corrupt-{time.strftime('%Y%m%d-%H%M%S')}")
            for suffix in ("", "-wal", "-shm"):
                src = Path(str(path) + suffix)
                if src.exists():
                    src.replace(Path(str(aside) + suffix))
            notice = f"{exc} It was moved to {aside.name} and the index is rebuilt from the documents."
            log.warning(notice)
            return cls(path), notice

    def close(self) -> None:
        self.db.close()

    def meta(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def is_empty(self) -> bool:
        return self.db.execute("SELECT count(*) FROM fragments").fetchone()[0] == 0

    def sync(
        self,
        knowledge_dir: Path,
        embedder: Embedder,
        progress: Callable[[int, int, str], None] | None = None,
    ) -> SyncReport:
        """Bring the index in line with the folder: add, update, remove; skip unchanged files."""
        try:
            return self._sync(knowledge_dir, embedder, progress)
        except sqlite3.DatabaseError as exc:
            raise IndexFileError(f"The index file {self.path} could not be updated ({exc}).") from exc

    def _sync(
        self,
        knowledge_dir: Path,
        embedder: Embedder,
        progress: Callable[[int, int, str], None] | None,
    ) -> SyncReport:
        started = time.perf_counter()
        files = find_files(knowledge_dir)
        report = SyncReport()
        if self.meta("embedder") != embedder.id:
            if self.meta("embedder") is not None:
                report.rebuilt = True
            with self.db:
                self.db.execute("DELETE FROM documents")
                self.db.execute("INSERT OR REPLACE INTO meta VALUES ('embedder', ?)", (embedder.id,))
                self.db.execute("DELETE FROM meta WHERE key = 'dimension'")
        known = {row[0]: (row[1], row[2]) for row in self.db.execute("SELECT path, sha256, state FROM documents")}
        seen: set[str] = set()
        for number, file in enumerate(files, start=1):
            rel = file.relative_to(knowledge_dir).as_posix()
            seen.add(rel)
            if progress:
                progress(number, len(files), rel)
            try:
                data = file.read_bytes()
            except OSError as exc:
                self._record_failure(rel, b"", f"can't be read ({exc.strerror})", report)
                continue
            sha = sha256_of(data)
            previous = known.get(rel)
            if previous and previous[0] == sha and previous[1] in ("indexed", "failed"):
                if previous[1] == "failed":
                    error = self.db.execute("SELECT error FROM documents WHERE path = ?", (rel,)).fetchone()[0]
                    report.failed[rel] = error
                else:
                    report.unchanged += 1
                continue
            try:
                doc = parse_document(rel, data)
                fragments = fragment_document(doc)
            except DocumentError as exc:
                self._record_failure(rel, data, str(exc), report)
                continue
            self._replace(doc, fragments, embedder, previous is not None)
            if previous and previous[1] != "failed":
                report.updated += 1
            else:
                report.added += 1
        gone = [path for path in known if path not in seen]
        if gone:
            with self.db:
                self.db.executemany("DELETE FROM documents WHERE path = ?", [(p,) for p in gone])
            report.removed = len(gone)
        lengths = [row[0] for row in self.db.execute("SELECT length(text) FROM fragments")]
        report.fragments = len(lengths)
        report.mean_chars = sum(lengths) / len(lengths) if lengths else 0.0
        report.max_chars = max(lengths, default=0)
        report.seconds = time.perf_counter() - started
        if not files:
            raise KnowledgeError(f"The knowledge folder {knowledge_dir} has no .md, .markdown or .txt documents.")
        return report

    def _record_failure(self, rel: str, data: bytes, reason: str, report: SyncReport) -> None:
        log.warning("document %s failed: %s", rel, reason)
        report.failed[rel] = reason
        with self.db:
            # A document that no longer parses stops being quoted: its old text is not what the file says.
            self.db.execute("DELETE FROM documents WHERE path = ?", (rel,))
            self.db.execute(
                "INSERT INTO documents (path, sha256, size, state, error) VALUES (?, ?, ?, 'failed', ?)",
                (rel, sha256_of(data), len(data), reason),
            )

    def _replace(self, doc: Document, fragments: list[Fragment], embedder: Embedder, exists: bool) -> None:
        if not exists:
            with self.db:
                # ON CONFLICT: another process (the Slack and Telegram bots share a data folder) got there first.
                self.db.execute(
                    "INSERT INTO documents (path, sha256, size, state) VALUES (?, ?, ?, 'queued') "
                    "ON CONFLICT(path) DO NOTHING",
                    (doc.path, doc.sha256, doc.size),
                )
        with self.db:
            self.db.execute("UPDATE documents SET state = 'indexing' WHERE path = ?", (doc.path,))
        try:
            vectors = embedder.embed([f.embedded_text for f in fragments])
        except BaseException:
            with self.db:
                self.db.execute(
                    "UPDATE documents SET state = CASE WHEN indexed_at IS NULL THEN 'queued' ELSE 'indexed' END "
                    "WHERE path = ?",
                    (doc.path,),
                )
            raise
        dim = str(vectors.shape[1]) if len(vectors) else None
        with self.db:  # one transaction: readers see the old fragments or the new, never neither
            doc_id = self.db.execute("SELECT id FROM documents WHERE path = ?", (doc.path,)).fetchone()[0]
            self.db.execute("DELETE FROM fragments WHERE document_id = ?", (doc_id,))
            self.db.executemany(
                "INSERT INTO fragments (document_id, position, of, section, text, vector) VALUES (?, ?, ?, ?, ?, ?)",
                [
                    (doc_id, f.position, f.of, json.dumps(f.section), f.text, v.astype(np.float32).tobytes())
                    for f, v in zip(fragments, vectors, strict=True)
                ],
            )
            self.db.execute(
                "UPDATE documents SET title = ?, audience = ?, owner = ?, as_of = ?, source = ?, sha256 = ?, "
                "size = ?, state = 'indexed', error = NULL, indexed_at = datetime('now') WHERE id = ?",
                (
                    doc.title,
                    doc.audience,
                    doc.meta.get("owner"),
                    doc.meta.get("as_of"),
                    doc.meta.get("source"),
                    doc.sha256,
                    doc.size,
                    doc_id,
                ),
            )
            if dim:
                self.db.execute("INSERT OR REPLACE INTO meta VALUES ('dimension', ?)", (dim,))

    def failures(self) -> dict[str, str]:
        return dict(self.db.execute("SELECT path, error FROM documents WHERE state = 'failed' ORDER BY path"))

    def load(self) -> Corpus:
        """Every fragment and its vector, as one matrix for the search."""
        rows = self.db.execute(
            "SELECT f.id, d.path, d.title, d.audience, f.section, f.position, f.of, f.text, f.vector, d.id "
            "FROM fragments f JOIN documents d ON d.id = f.document_id ORDER BY d.path, f.position"
        ).fetchall()
        dim = int(self.meta("dimension") or 0)
        try:
            matrix = np.frombuffer(b"".join(r[8] for r in rows), dtype=np.float32).reshape(len(rows), dim)
        except ValueError as exc:
            raise IndexCorrupt(f"The index file {self.path} holds vectors of the wrong size.") from exc
        fragments = tuple(Fragment(r[1], r[2], r[3], tuple(json.loads(r[4])), r[5], r[6], r[7]) for r in rows)
        return Corpus(
            ids=np.array([r[0] for r in rows], dtype=np.int64),
            fragments=fragments,
            matrix=matrix,
            audiences=np.array([r[3] for r in rows], dtype=object),
            documents=np.array([r[9] for r in rows], dtype=np.int64),
        )
