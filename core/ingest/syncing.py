"""The sync: bring a store's index in line with a knowledge folder (`core.ingest` re-exports it).

`sync(folder, index, embedder)` reads new and changed files with the reader for their
suffix, cuts them into fragments, embeds only the fragments whose text is new (per-fragment
hashes), stages them in batches and swaps each document in one transaction; a removed file's
fragments are dropped and its register row kept, marked `removed`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import NamedTuple, Protocol, runtime_checkable

import numpy as np

from core.common.errors import DocumentError, KnowledgeError
from core.common.values import Document, Fragment, quotable_sentences, text_hash
from core.ingest.documents import sha256_of
from core.ingest.folder import DEFAULT_MAX_DOCUMENT_BYTES, VANISHED, list_folder, outside_metadata, read_file
from core.ingest.fragments import fragment_document, fragment_hash
from core.ingest.guard import check_folder, renamed
from core.ingest.readers import parse_document, suffixes
from core.ingest.space import Room
from core.store import IndexStore, KnownDocument
from core.vectors.embeddings import Embedder

log = logging.getLogger(__name__)


Progress = Callable[[int, int, str], None]  # (files done, files in all, the file at hand)
# Fragments embedded and stored per step: a few embedder batches, so a 5 MB document's
# texts, token ids and vectors are never all in memory at once.
FRAGMENT_BATCH = 256
# Sentences embedded per model call: a batch's fragments hold 600-700 of them (benchmarks/index_throughput.py),
# and one call sorts them all by length; their token ids take ~4 MB at this bound.
SENTENCE_BATCH = 1024


@dataclass(frozen=True)
class FragmentProgress:
    """How far the document at hand is: fragments stored so far, out of `total`, in `seconds`."""

    document: str
    done: int
    total: int
    seconds: float

    @property
    def rate(self) -> float:
        """Fragments per second so far."""
        return self.done / self.seconds if self.seconds > 0 else 0.0

    @property
    def eta(self) -> float | None:
        """Seconds left at the rate so far; None before there is a rate."""
        return (self.total - self.done) / self.rate if self.rate else None


@runtime_checkable
class FragmentListener(Protocol):
    """A `Progress` callback that also wants fragment-level progress inside a document."""

    def __call__(self, done: int, total: int, name: str) -> None: ...

    def fragments(self, event: FragmentProgress) -> None: ...


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
    search: str = ""  # how a big index is searched: the approximate index's check, or why exactly
    languages: dict[str, int] = field(default_factory=dict)  # indexed documents per language code, most first
    skipped: list[str] = field(default_factory=list)  # files in the folder no reader handles (relative paths)

    @property
    def changed(self) -> bool:
        return bool(self.added or self.updated or self.removed or self.rebuilt)


def sync(
    folder: Path,
    index: IndexStore,
    embedder: Embedder,
    progress: Progress | None = None,
    max_document_bytes: int = DEFAULT_MAX_DOCUMENT_BYTES,
    replace: bool = False,
    parsed: dict[str, Document] | None = None,
) -> SyncReport:
    """Bring the index in line with the folder: add, update, remove; skip unchanged files.

    A `progress` callback with a `fragments` method (`FragmentListener`) also hears how far a
    document's fragments are, with their rate. Another folder, or one that would remove most of the
    index, is refused before anything changes unless `replace` (see `core.ingest.guard`). `parsed` holds documents
    already read (by relative path), used when the file and its metadata are still the ones they were read from;
    each is taken out of it as its file is reached, so a document is held once, as fragments, from then on.
    """
    started = time.perf_counter()
    files, unreadable, skipped = list_folder(folder)
    report = SyncReport(skipped=skipped)
    check_folder(folder, files, unreadable, index, max_document_bytes, replace)  # before a reset forgets the index
    if index.embedder_id() != embedder.id:
        report.rebuilt = index.embedder_id() is not None
        index.reset(embedder.id)
    known = index.known()
    moved = renamed(folder, files, unreadable, known, max_document_bytes)  # {new name: old}: one update each
    room = Room(index)
    room.check_folder(folder, (f for f in files if f.relative_to(folder).as_posix() not in moved), known)
    seen: set[str] = set()
    for rel, reason in unreadable.items():
        report.failed[rel] = reason
        seen.update(path for path in known if path.startswith(rel))  # kept as they were, not removed
    # Documents are queued and their fragments embedded FRAGMENT_BATCH at a time across documents: a folder
    # of small documents runs at the model's batch rate, not at the cost of a small call per document.
    batches = _Batches(index, embedder, report, progress if isinstance(progress, FragmentListener) else None, room)
    try:
        for number, file in enumerate(files, start=1):
            rel = file.relative_to(folder).as_posix()
            seen.add(rel)
            if progress:
                progress(number, len(files), rel)
            previous = known.get(rel)
            doc = _changed_document(folder, file, rel, previous, index, report, max_document_bytes, parsed)
            if doc is not None:
                batches.add(doc, bool(previous and previous.state != "failed") or rel in moved, moved.get(rel))
        batches.finish()
    except BaseException:
        batches.abort()
        raise
    gone = [path for path in known if path not in seen and path not in batches.replaced]
    index.remove(gone)
    report.removed = len(gone)
    report.fragments, report.mean_chars, report.max_chars = index.stats()
    report.languages = _languages(index)
    report.seconds = time.perf_counter() - started
    if not files and not unreadable:
        *most, last = suffixes()
        raise KnowledgeError(f"The knowledge folder {folder} has no {', '.join(most)} or {last} documents.")
    return report


def _changed_document(
    folder: Path,
    file: Path,
    rel: str,
    previous: KnownDocument | None,
    index: IndexStore,
    report: SyncReport,
    limit: int,
    parsed: dict[str, Document] | None,
) -> Document | None:
    """The file read as a document when it is new or changed; None when it is unchanged or fails (its failure
    recorded in the index and the report)."""
    try:
        data = read_file(folder, file, limit)  # through the folder's guard: links out, secrets, the size limit
    except DocumentError as exc:
        if str(exc) == VANISHED or (previous and previous.state == "failed" and previous.error == str(exc)):
            # Renamed or removed since listed: its indexed version stays until the next sync takes the change
            # in. Already recorded: recording it again would reload every reader.
            report.failed[rel] = str(exc)
        else:
            _fail(index, report, rel, b"", str(exc), size=_size(file))
        return None
    sha = sha256_of(data)
    try:
        defaults, sidecar, meta_sha = outside_metadata(folder, file, limit)
    except DocumentError as exc:
        _fail(index, report, rel, data, str(exc))
        return None
    if previous and (previous.sha256, previous.meta_sha256) == (sha, meta_sha):
        if previous.state == "failed":
            report.failed[rel] = previous.error or "failed"
            return None
        if previous.state == "indexed" and previous.language is not None:
            report.unchanged += 1
            return None
    doc = parsed.pop(rel, None) if parsed else None  # read already (the embedder's sample), from these bytes
    if doc is None or (doc.sha256, doc.meta_sha256) != (sha, meta_sha):
        try:
            doc = parse_document(rel, data, defaults, sidecar, meta_sha, sha256=sha)
        except DocumentError as exc:
            _fail(index, report, rel, data, str(exc))
            return None
        except Exception as exc:  # a reader's bug or a hostile file (recursion, memory) fails only this one
            log.warning("reading %s raised %s", rel, type(exc).__name__, exc_info=True)
            _fail(index, report, rel, data, f"it can't be read ({type(exc).__name__}: {str(exc)[:200]})")
            return None
    return replace(doc, modified=_modified(file))  # a big document is held once, as fragments, from here on


def _languages(index: IndexStore) -> dict[str, int]:
    """Indexed documents per language, once those whose language couldn't be told (a short note, a table of
    names and figures) took the folder's main language: "unknown" says nothing true of them, and they are
    written in the language the rest of the folder is, far more often than not."""
    counts = index.languages()
    main = next((code for code in counts if code), "")  # most documents first
    if main and "" in counts:
        index.inherit_language(main)
        counts = index.languages()
    return counts


def _modified(file: Path) -> str:
    """The file's modification date (UTC, ISO), for a review clock when the document names no `as_of`."""
    try:
        return time.strftime("%Y-%m-%d", time.gmtime(file.stat().st_mtime))
    except OSError:
        return ""


def _size(file: Path) -> int:
    try:
        return file.stat().st_size
    except OSError:
        return 0


def _fail(index: IndexStore, report: SyncReport, rel: str, data: bytes, reason: str, size: int | None = None) -> None:
    log.warning("document %s failed: %s", rel, reason)
    report.failed[rel] = reason
    index.fail(rel, sha256_of(data), len(data) if size is None else size, reason)


def _store_sentences(index: IndexStore, embedder: Embedder, fragments: Sequence[Fragment]) -> None:
    """Embed, once, the sentences the extractive answerer scores in these new fragments: at answer time
    a fragment seen for the first time then costs a lookup, not a model call per sentence."""
    texts = list(dict.fromkeys(embedded for f in fragments for _, embedded in quotable_sentences(f)))
    if not texts:
        return
    keys = [text_hash(t) for t in texts]
    known = index.text_vectors(keys)
    todo = [(k, t) for k, t in zip(keys, texts, strict=True) if k not in known]
    for start in range(0, len(todo), SENTENCE_BATCH):  # bounded, but wide: the model sorts them by length
        chunk = todo[start : start + SENTENCE_BATCH]
        vectors = embedder.embed([t for _, t in chunk])
        index.put_text_vectors([(k, v) for (k, _), v in zip(chunk, vectors, strict=True)])


@dataclass
class _Queued:
    """A document waiting in `_Batches`: its fragments, how many are staged, whether it replaces a version."""

    doc: Document
    fragments: list[Fragment]
    updated: bool
    started: float
    done: int = 0
    replaces: str | None = None  # the path it had before it was renamed


class _Share(NamedTuple):
    """A queued document's fragments in one batch, with their hashes."""

    queued: _Queued
    fragments: list[Fragment]
    hashes: list[str]


class _Batches:
    """Fragments of consecutive documents, embedded and staged FRAGMENT_BATCH at a time.

    Each step looks up the batch's vectors by hash, embeds the new fragments in one call and then
    their new sentences in one call, stages each document's share, and swaps in every document
    whose last fragment is staged. A folder of 10-fragment documents thus costs the model's batch
    rate (measured in benchmarks/index_throughput.py), and a big document is still never held as
    more than a batch of vectors at once. `abort` drops what the queued documents staged. Each step
    checks first that the disk has room for what it will write (`Room`).
    """

    def __init__(
        self,
        index: IndexStore,
        embedder: Embedder,
        report: SyncReport,
        listener: FragmentListener | None,
        room: Room,
    ) -> None:
        self.index, self.embedder, self.report, self.listener = index, embedder, report, listener
        self.room = room
        self.queue: list[_Queued] = []
        self.replaced: set[str] = set()  # old paths of renamed documents, removed as their new version went in

    def add(self, doc: Document, updated: bool, replaces: str | None = None) -> None:
        fragments = fragment_document(doc)
        self.index.mark_indexing(doc)
        self.queue.append(_Queued(doc, fragments, updated, time.perf_counter(), replaces=replaces))
        while sum(len(q.fragments) - q.done for q in self.queue) >= FRAGMENT_BATCH:
            self._step()

    def finish(self) -> None:
        while self.queue:
            self._step()

    def abort(self) -> None:
        """Drop what the queued documents staged; one that can't be aborted doesn't stop the others."""
        for queued in self.queue:
            try:
                self.index.abort(queued.doc.path)
            except Exception as exc:  # the error being handled is the one to report
                log.warning("could not drop the batches staged for %s: %s", queued.doc.path, exc)
        self.queue.clear()

    def _step(self) -> None:
        """Embed and stage the next FRAGMENT_BATCH queued fragments; commit the documents they complete."""
        shares: list[_Share] = []
        left = FRAGMENT_BATCH
        for queued in self.queue:
            if left == 0:
                break
            share = queued.fragments[queued.done : queued.done + left]
            shares.append(_Share(queued, share, [fragment_hash(f) for f in share]))
            left -= len(share)
        batch = sum(len(s.fragments) for s in shares)
        what = f"the next {batch:,} fragment{'s' if batch != 1 else ''} (of {shares[0].queued.doc.path})"
        self.room.check(sum(len(f.text) for s in shares for f in s.fragments), what)
        try:
            vectors = self._embed(shares)
        except Exception:
            if len(shares) < 2:
                raise
            # One document's text may be what the model refuses (a remote "input too long"): embed each on its
            # own, so the documents before it are indexed and the error, if it repeats, is that document's alone.
            # Only the model calls are tried again: nothing was staged, and a store error is not the model's.
            log.info("embedding a batch of %d documents failed; trying them one at a time", len(shares))
            for one in shares:
                self._stage([one], self._embed([one]))
            return
        self._stage(shares, vectors)

    def _embed(self, shares: list[_Share]) -> dict[str, np.ndarray]:
        """The vector of every fragment in these shares, by hash: stored ones looked up, the new ones (each text
        once) embedded, with their new sentences. Nothing is staged here, so a failed call can be made again."""
        hashes = [h for share in shares for h in share.hashes]
        batch = [f for share in shares for f in share.fragments]
        vectors = self.index.vectors_for(hashes) if batch else {}
        new = {h: f for h, f in zip(hashes, batch, strict=True) if h not in vectors}  # a repeated text, once
        if new:
            fresh = self.embedder.embed([f.embedded_text for f in new.values()])
            vectors.update(zip(new, fresh, strict=True))
            _store_sentences(self.index, self.embedder, list(new.values()))
            self.report.embedded += len(new)
        return vectors

    def _stage(self, shares: list[_Share], vectors: dict[str, np.ndarray]) -> None:
        """Stage each share with its vectors, and swap in every document whose last fragment it holds."""
        for queued, share, hashes in shares:
            if share:
                rows = np.vstack([vectors[h] for h in hashes]).astype(np.float32)
                self.index.stage(queued.doc.path, share, hashes, rows)
                queued.done += len(share)
                if self.listener:
                    seconds = time.perf_counter() - queued.started
                    self.listener.fragments(
                        FragmentProgress(queued.doc.path, queued.done, len(queued.fragments), seconds)
                    )
            if queued.done == len(queued.fragments):
                self.index.commit(queued.doc, len(queued.fragments), queued.replaces)
                if queued.replaces is not None:
                    self.replaced.add(queued.replaces)
                self.queue.remove(queued)
                if queued.updated:
                    self.report.updated += 1
                else:
                    self.report.added += 1
