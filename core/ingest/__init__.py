"""Ingestion: bring a store's index in line with a knowledge folder.

`sync(folder, index, embedder)` reads new and changed files with the reader for their
suffix, cuts them into fragments, embeds only the fragments whose text is new (per-fragment
hashes), and swaps each document in one transaction; removed files are dropped.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from core.embeddings import Embedder
from core.errors import DocumentError, KnowledgeError
from core.ingest.documents import Document, parse_metadata, sha256_of
from core.ingest.fragments import fragment_document, fragment_hash
from core.ingest.readers import parse_document, suffixes
from core.store import IndexStore

log = logging.getLogger(__name__)

SIDECAR_SUFFIX = ".meta.yml"  # `price-list.pdf.meta.yml` beside `price-list.pdf`
DEFAULTS_FILE = "defaults.meta.yml"  # in any folder: metadata for every document below it

Progress = Callable[[int, int, str], None]


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
    embedded: int = 0  # fragments sent to the model; the rest reused their stored vectors

    @property
    def changed(self) -> bool:
        return bool(self.added or self.updated or self.removed or self.rebuilt)


def find_files(folder: Path) -> list[Path]:
    """The documents below `folder` that a reader handles, in a stable order; hidden files are skipped."""
    if not folder.exists():
        raise KnowledgeError(f"The knowledge folder {folder} does not exist.")
    if not folder.is_dir():
        raise KnowledgeError(f"The knowledge folder {folder} is not a folder.")
    known = suffixes()
    return sorted(
        p
        for p in folder.rglob("*")
        if p.is_file()
        and p.suffix.lower() in known
        and not any(part.startswith(".") for part in p.relative_to(folder).parts)
    )


def outside_metadata(folder: Path, file: Path) -> tuple[dict[str, str], dict[str, str], str]:
    """Folder defaults (nearest folder wins), the file's sidecar, and a hash of the files they came from."""
    digest = hashlib.sha256()
    used = False

    def read(path: Path) -> dict[str, str]:
        nonlocal used
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return {}
        except OSError as exc:
            raise DocumentError(f"its metadata file {path.name} can't be read ({exc.strerror})") from exc
        used = True
        digest.update(path.name.encode() + b"\0" + data + b"\0")
        try:
            return parse_metadata(data.decode("utf-8-sig"), what=path.name)
        except UnicodeDecodeError as exc:
            raise DocumentError(f"its metadata file {path.name} is not valid UTF-8") from exc

    defaults: dict[str, str] = {}
    rel_parts = file.parent.relative_to(folder).parts
    for depth in range(len(rel_parts) + 1):
        defaults.update(read(folder.joinpath(*rel_parts[:depth], DEFAULTS_FILE)))
    sidecar = read(file.with_name(file.name + SIDECAR_SUFFIX))
    return defaults, sidecar, digest.hexdigest() if used else ""


def sync(folder: Path, index: IndexStore, embedder: Embedder, progress: Progress | None = None) -> SyncReport:
    """Bring the index in line with the folder: add, update, remove; skip unchanged files."""
    started = time.perf_counter()
    files = find_files(folder)
    report = SyncReport()
    if index.embedder_id() != embedder.id:
        report.rebuilt = index.embedder_id() is not None
        index.reset(embedder.id)
    known = index.known()
    seen: set[str] = set()
    for number, file in enumerate(files, start=1):
        rel = file.relative_to(folder).as_posix()
        seen.add(rel)
        if progress:
            progress(number, len(files), rel)
        try:
            data = file.read_bytes()
        except OSError as exc:
            _fail(index, report, rel, b"", f"can't be read ({exc.strerror})")
            continue
        sha = sha256_of(data)
        previous = known.get(rel)
        try:
            defaults, sidecar, meta_sha = outside_metadata(folder, file)
        except DocumentError as exc:
            _fail(index, report, rel, data, str(exc))
            continue
        if previous and (previous.sha256, previous.meta_sha256) == (sha, meta_sha):
            if previous.state == "failed":
                report.failed[rel] = previous.error or "failed"
                continue
            if previous.state == "indexed":
                report.unchanged += 1
                continue
        try:
            doc = parse_document(rel, data, defaults, sidecar, meta_sha)
        except DocumentError as exc:
            _fail(index, report, rel, data, str(exc))
            continue
        report.embedded += _put(index, doc, embedder)
        if previous and previous.state != "failed":
            report.updated += 1
        else:
            report.added += 1
    gone = [path for path in known if path not in seen]
    index.remove(gone)
    report.removed = len(gone)
    report.fragments, report.mean_chars, report.max_chars = index.stats()
    report.seconds = time.perf_counter() - started
    if not files:
        *most, last = suffixes()
        raise KnowledgeError(f"The knowledge folder {folder} has no {', '.join(most)} or {last} documents.")
    return report


def _fail(index: IndexStore, report: SyncReport, rel: str, data: bytes, reason: str) -> None:
    log.warning("document %s failed: %s", rel, reason)
    report.failed[rel] = reason
    index.fail(rel, sha256_of(data), len(data), reason)


def _put(index: IndexStore, doc: Document, embedder: Embedder) -> int:
    """Fragment, embed what is new, swap in; returns how many fragments went to the model."""
    fragments = fragment_document(doc)
    hashes = [fragment_hash(f) for f in fragments]
    index.mark_indexing(doc)
    try:
        stored = index.vectors_for(hashes)
        todo = [i for i, h in enumerate(hashes) if h not in stored]
        fresh = embedder.embed([fragments[i].embedded_text for i in todo]) if todo else None
    except BaseException:
        index.abort(doc.path)
        raise
    by_row = dict(zip(todo, fresh, strict=True)) if fresh is not None else {}
    vectors = [by_row[i] if i in by_row else stored[h] for i, h in enumerate(hashes)]
    matrix = np.vstack(vectors).astype(np.float32) if vectors else np.zeros((0, 0), dtype=np.float32)
    index.put(doc, fragments, hashes, matrix)
    return len(todo)
