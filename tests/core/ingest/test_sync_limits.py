"""Sync at the edges (issue 11): a folder that can't be listed changes nothing; a document over the
size limit fails before it is read; a big document is embedded and stored in batches, with progress."""

from __future__ import annotations

import errno
import io
import os
from pathlib import Path

import numpy as np
import pytest

from bot.cli.shared import progress_bar
from core.common.errors import ConfigError, IndexFileError, KnowledgeError
from core.common.settings import Settings, from_env
from core.ingest import FRAGMENT_BATCH, FragmentProgress, sync
from core.retrieval.knowledge import KnowledgeBase
from core.store import INDEX_FILE
from core.store.sqlite import SQLiteIndex
from tests.fakes import FakeEmbedder

PRICES = "---\ntitle: Prices\naudience: public\n---\n## Fronts\n\nOak fronts cost 185 EUR per m².\n"
WARRANTY = "---\ntitle: Warranty\naudience: public\n---\n## Periods\n\nJoinery carries a five year warranty.\n"


def big(paragraphs: int, word: str = "oak") -> str:
    """A document of one fragment per paragraph (each near the 900-character limit)."""
    body = "\n\n".join(f"{word} paragraph {i} " + "fronts cost money " * 45 for i in range(paragraphs))
    return f"---\ntitle: Catalogue\naudience: public\n---\n## All\n\n{body}\n"


def unlistable(monkeypatch: pytest.MonkeyPatch, folder: Path) -> None:
    """Listing `folder` fails as it would without read permission (the tests run as root, so chmod can't)."""
    real = os.scandir

    def scandir(path: str | os.PathLike[str] = ".") -> object:
        if Path(path) == folder:
            raise PermissionError(errno.EACCES, "Permission denied", os.fspath(path))
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)


def test_a_knowledge_folder_that_cant_be_listed_leaves_the_index_as_it_was(tmp_path, write_kb, monkeypatch):
    kb = write_kb({"prices.md": PRICES, "warranty.md": WARRANTY})
    index = SQLiteIndex(tmp_path / "data" / INDEX_FILE)
    sync(kb, index, FakeEmbedder())
    before, generation = index.known(), index.generation()
    unlistable(monkeypatch, kb)
    with pytest.raises(KnowledgeError) as error:
        sync(kb, index, FakeEmbedder())
    assert str(kb) in str(error.value) and "can't be listed (Permission denied)" in str(error.value)
    assert "has no" not in str(error.value)
    assert index.known() == before and index.generation() == generation
    assert len(index.load().fragments) == 2


def test_an_unreadable_subfolder_is_a_failed_entry_and_its_documents_stay(tmp_path, write_kb, monkeypatch):
    kb = write_kb({"prices.md": PRICES, "policies/warranty.md": WARRANTY})
    index = SQLiteIndex(tmp_path / "data" / INDEX_FILE)
    sync(kb, index, FakeEmbedder())
    unlistable(monkeypatch, kb / "policies")
    report = sync(kb, index, FakeEmbedder())
    assert list(report.failed) == ["policies/"]
    assert report.failed["policies/"].startswith("folder can't be listed (Permission denied)")
    assert report.removed == 0 and report.unchanged == 1
    assert {f.document for f in index.load().fragments} == {"prices.md", "policies/warranty.md"}


def test_a_knowledge_base_keeps_answering_when_its_folder_cant_be_listed(tmp_path, write_kb, monkeypatch):
    kb_dir = write_kb({"prices.md": PRICES})
    kb = KnowledgeBase(Settings(knowledge_dir=kb_dir, data_dir=tmp_path / "data", resync_seconds=1e-9), FakeEmbedder())
    kb.sync()
    unlistable(monkeypatch, kb_dir)
    hits = kb.retrieve("oak fronts cost", frozenset({"public"}), floor=-1.0).hits  # the resync fails, logged
    assert [h.fragment.document for h in hits] == ["prices.md"]


# --- the size limit, fragment progress, batches -------------------------------------


def test_a_document_over_the_limit_fails_with_a_reason_before_it_is_read(tmp_path, write_kb, monkeypatch):
    kb = write_kb({"prices.md": PRICES, "huge.md": big(40)})
    index = SQLiteIndex(tmp_path / "data" / INDEX_FILE)
    opened: list[str] = []
    real_open = Path.open

    def spying_open(self: Path, *args: object, **kwargs: object) -> object:
        opened.append(self.name)
        return real_open(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Path, "open", spying_open)
    report = sync(kb, index, FakeEmbedder(), max_document_bytes=20_000)
    assert "huge.md" not in opened, "the oversized file was opened"
    reason = report.failed["huge.md"]
    assert "0.0 MB" in reason and "over the 0.02 MB limit (VERBATIM_MAX_DOCUMENT_MB)" in reason
    assert report.added == 1
    generation = index.generation()
    again = sync(kb, index, FakeEmbedder(), max_document_bytes=20_000)
    assert again.failed == report.failed and index.generation() == generation, "recorded once, not every resync"


def test_the_size_limit_is_a_setting(tmp_path, write_kb):
    assert Settings().max_document_mb == 10.0
    assert from_env({"VERBATIM_MAX_DOCUMENT_MB": "2.5"}).max_document_mb == 2.5
    with pytest.raises(ConfigError, match="VERBATIM_MAX_DOCUMENT_MB must be a number"):
        from_env({"VERBATIM_MAX_DOCUMENT_MB": "ten"})
    kb_dir = write_kb({"prices.md": PRICES, "huge.md": big(40)})
    kb = KnowledgeBase(Settings(knowledge_dir=kb_dir, data_dir=tmp_path / "data", max_document_mb=0.02), FakeEmbedder())
    assert list(kb.sync().failed) == ["huge.md"]


class Recorder:
    """A progress callback that also wants fragments (the CLI's bar is one)."""

    def __init__(self) -> None:
        self.files: list[tuple[int, int, str]] = []
        self.events: list[FragmentProgress] = []

    def __call__(self, done: int, total: int, name: str) -> None:
        self.files.append((done, total, name))

    def fragments(self, event: FragmentProgress) -> None:
        self.events.append(event)


def test_progress_counts_fragments_with_a_rate_and_old_callbacks_still_work(tmp_path, write_kb):
    count = FRAGMENT_BATCH * 2 + 10
    kb = write_kb({"big.md": big(count), "prices.md": PRICES})
    recorder = Recorder()
    sync(kb, SQLiteIndex(tmp_path / "data" / INDEX_FILE), FakeEmbedder(), recorder)
    assert recorder.files == [(1, 2, "big.md"), (2, 2, "prices.md")]
    big_events = [e for e in recorder.events if e.document == "big.md"]
    assert [e.done for e in big_events] == [FRAGMENT_BATCH, 2 * FRAGMENT_BATCH, count]
    assert {e.total for e in big_events} == {count}
    assert all(e.rate > 0 and e.eta is not None for e in big_events)
    assert big_events[-1].eta == 0

    plain: list[tuple[int, int, str]] = []
    (kb / "prices.md").write_text(PRICES.replace("185", "190"), encoding="utf-8")
    sync(kb, SQLiteIndex(tmp_path / "data" / INDEX_FILE), FakeEmbedder(), lambda *a: plain.append(a))
    assert plain == [(1, 2, "big.md"), (2, 2, "prices.md")]


def test_a_big_document_is_embedded_in_batches_and_swapped_in_whole(tmp_path, write_kb):
    """Readers (another connection, as another process would be) see the old version until the swap."""
    count = FRAGMENT_BATCH * 3 + 5
    kb = write_kb({"big.md": big(count, "old")})
    path = tmp_path / "data" / INDEX_FILE
    sync(kb, SQLiteIndex(path), FakeEmbedder())
    (kb / "big.md").write_text(big(count, "new"), encoding="utf-8")

    class Watching(FakeEmbedder):
        def __init__(self) -> None:
            super().__init__()
            self.sizes: list[int] = []
            self.seen: list[set[str]] = []

        def embed(self, texts: list[str]) -> np.ndarray:  # type: ignore[override]
            self.sizes.append(len(texts))
            corpus = SQLiteIndex(path).load()
            self.seen.append({f.text.split()[0] for f in corpus.fragments} | {str(len(corpus.fragments))})
            return super().embed(texts)

    embedder = Watching()
    report = sync(kb, SQLiteIndex(path), embedder)
    assert report.updated == 1
    # 4 batches of fragments, and the sentences of each batch (stored for the answerer), never more at once.
    assert max(embedder.sizes) <= FRAGMENT_BATCH and sum(embedder.sizes) >= count
    assert all(seen == {"old", str(count)} for seen in embedder.seen), "a reader saw a half-written version"
    after = SQLiteIndex(path).load()
    assert len(after.fragments) == count and {f.text.split()[0] for f in after.fragments} == {"new"}
    assert [f.position for f in after.fragments] == list(range(1, count + 1))


def test_the_progress_bar_shows_fragments_rate_and_time_left():
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    stream = Terminal()
    bar = progress_bar(stream)
    assert bar is not None
    bar(1, 3, "big.md")
    bar.fragments(FragmentProgress("big.md", 512, 7834, 16.0))
    shown = stream.getvalue().rsplit("\r", 1)[-1]
    assert "1/3 big.md" in shown and "512/7,834 fragments, 32/s, 3:48 left" in shown
    # The files read run ahead of the fragments embedded (256 at a time across documents): the line names
    # the document being embedded, and stays until the sync is over, not only its last file read.
    bar(3, 3, "zebra.md")
    bar.fragments(FragmentProgress("big.md", 7680, 7834, 240.0))
    shown = stream.getvalue().rsplit("\r", 1)[-1]
    assert "3/3 big.md" in shown and "7,680/7,834 fragments" in shown
    bar.close()
    assert stream.getvalue().rsplit("\r", 2)[-2].strip() == "", "the line is cleared at the end"


def small(n: int, text: str | None = None) -> str:
    """Document `n` of ten one-paragraph sections (ten fragments), its own words unless `text` is given."""
    sections = "\n\n".join(
        f"## Part {s}\n\n{text or f'Document {n} section {s} says its own thing.'}" for s in range(10)
    )
    return f"---\ntitle: Handbook {n}\naudience: public\n---\n{sections}\n"


class Sizes(FakeEmbedder):
    def __init__(self, fail_after: int | None = None) -> None:
        super().__init__()
        self.sizes: list[int] = []
        self.fail_after = fail_after

    def embed(self, texts: list[str]) -> np.ndarray:  # type: ignore[override]
        if self.fail_after is not None and len(self.sizes) >= self.fail_after:
            raise RuntimeError("the model went away")
        self.sizes.append(len(texts))
        return super().embed(texts)


def test_small_documents_are_embedded_together_a_full_batch_at_a_time(tmp_path, write_kb):
    """60 ten-fragment documents: three model calls for the fragments (256, 256, 88), not one per document."""
    kb = write_kb({f"part-{n:02d}.md": small(n) for n in range(60)})
    index = SQLiteIndex(tmp_path / "data" / INDEX_FILE)
    embedder = Sizes()
    report = sync(kb, index, embedder)
    assert (report.added, report.embedded, report.fragments) == (60, 600, 600)
    # Each step: one call for its fragments, one for their new sentences (here one sentence a fragment).
    rest = 600 - 2 * FRAGMENT_BATCH
    assert embedder.sizes == [FRAGMENT_BATCH, FRAGMENT_BATCH, FRAGMENT_BATCH, FRAGMENT_BATCH, rest, rest]
    corpus = index.load()
    by_document = {}
    for f in corpus.fragments:
        by_document.setdefault(f.document, []).append(f.position)
    assert len(by_document) == 60 and all(p == list(range(1, 11)) for p in by_document.values())
    assert {d.state for d in index.known().values()} == {"indexed"}


def test_a_text_repeated_across_documents_goes_to_the_model_once(tmp_path, write_kb):
    """The same handbook saved twice under two names: 20 fragments stored, 10 distinct texts embedded."""
    same = small(1, "Every branch opens at nine and closes at six.")
    kb = write_kb({"a.md": same, "copy of a.md": same})
    embedder = Sizes()
    report = sync(kb, SQLiteIndex(tmp_path / "data" / INDEX_FILE), embedder)
    assert (report.added, report.fragments, report.embedded) == (2, 20, 10)
    assert embedder.sizes[0] == 10


def test_a_model_failure_mid_batch_keeps_finished_documents_and_leaves_none_half_indexed(tmp_path, write_kb):
    kb = write_kb({f"part-{n:02d}.md": small(n) for n in range(40)})
    index = SQLiteIndex(tmp_path / "data" / INDEX_FILE)
    with pytest.raises(RuntimeError, match="went away"):
        sync(kb, index, Sizes(fail_after=2))  # the first batch (fragments, sentences) lands, the second fails
    states = [d.state for d in index.known().values()]
    assert "indexing" not in states
    assert states.count("indexed") == FRAGMENT_BATCH // 10  # the documents wholly inside the first batch
    assert len(index.load().fragments) == 10 * (FRAGMENT_BATCH // 10)
    report = sync(kb, index, Sizes())  # the rest were registered (queued), so they count as updated
    assert report.unchanged == FRAGMENT_BATCH // 10 and report.updated == 40 - FRAGMENT_BATCH // 10
    assert report.embedded == 400 - 10 * (FRAGMENT_BATCH // 10)
    assert {d.state for d in index.known().values()} == {"indexed"} and len(index.load().fragments) == 400


def test_a_document_the_model_refuses_fails_alone_and_the_ones_before_it_in_its_batch_are_indexed(tmp_path, write_kb):
    """A remote model that rejects one input every time: the batch is tried again one document at a time."""

    class Refusing(Sizes):
        def embed(self, texts: list[str]) -> np.ndarray:  # type: ignore[override]
            if any("poison" in t for t in texts):
                raise RuntimeError("input rejected by the model")
            return super().embed(texts)

    files = {f"part-{n:02d}.md": small(n) for n in range(6)}
    files["part-03.md"] = small(3, "A poison paragraph the model refuses.")
    kb = write_kb(files)
    index = SQLiteIndex(tmp_path / "data" / INDEX_FILE)
    with pytest.raises(RuntimeError, match="rejected"):
        sync(kb, index, Refusing())
    states = {path: d.state for path, d in index.known().items()}
    assert [states[f"part-{n:02d}.md"] for n in range(3)] == ["indexed"] * 3, "the documents before it are in"
    assert "indexing" not in states.values() and states.get("part-03.md") != "indexed"
    assert len(index.load().fragments) == 30


def test_a_store_error_in_a_batch_of_documents_is_reported_not_retried_over_committed_ones(
    tmp_path, write_kb, monkeypatch
):
    """Only model calls are tried again one document at a time: a commit that fails after others in its batch
    went in is the store's error, raised as it is (retrying would stage committed documents again)."""
    kb = write_kb({f"part-{n:02d}.md": small(n) for n in range(4)})
    index = SQLiteIndex(tmp_path / "data" / INDEX_FILE)
    real = index.commit

    def commit(document, count, replaces=None):
        if document.path == "part-02.md":
            raise IndexFileError("part-02.md was re-indexed by another process at the same time; its version is kept.")
        real(document, count, replaces)

    monkeypatch.setattr(index, "commit", commit)
    embedder = Sizes()
    with pytest.raises(IndexFileError, match=r"part-02\.md was re-indexed"):
        sync(kb, index, embedder)
    assert len(embedder.sizes) == 2, "one call for the fragments, one for the sentences: nothing embedded again"
    states = {path: d.state for path, d in index.known().items()}
    assert (states["part-00.md"], states["part-01.md"]) == ("indexed", "indexed")
    assert "indexing" not in states.values()
