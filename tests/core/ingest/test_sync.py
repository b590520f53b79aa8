import shutil
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from core.answering.policy import DEFAULT
from core.common.errors import KnowledgeError
from core.common.questions import SCOPES
from core.common.settings import Settings
from core.ingest import guard, sync
from core.ingest.folder import skipped_summary
from core.retrieval.knowledge import KnowledgeBase
from core.store import INDEX_FILE
from core.store.sqlite import SQLiteIndex
from tests.fakes import FakeEmbedder

PRICES = "---\ntitle: Prices\naudience: public\n---\n## Fronts\n\nOak fronts cost 185 EUR per m².\n"
WARRANTY = "---\ntitle: Warranty\naudience: public\n---\n## Periods\n\nJoinery carries a five year warranty.\n"
DISCOUNTS = "---\ntitle: Discounts\naudience: internal\n---\n## Authority\n\nSales staff may give up to 5% discount.\n"


def open_index(tmp_path: Path) -> SQLiteIndex:
    return SQLiteIndex(tmp_path / "data" / INDEX_FILE)


def failures(index: SQLiteIndex) -> dict[str, str | None]:
    """The failed documents and why, from the register."""
    return {r.path: r.error for r in index.register() if r.state == "failed"}


def test_first_sync_adds_everything(tmp_path, write_kb, fake_embedder):
    kb = write_kb({"prices.md": PRICES, "warranty.md": WARRANTY})
    report = sync(kb, open_index(tmp_path), fake_embedder)
    assert (report.added, report.updated, report.unchanged, report.removed) == (2, 0, 0, 0)
    assert report.fragments == 2


def test_unchanged_files_are_not_embedded_again(tmp_path, write_kb, fake_embedder):
    kb = write_kb({"prices.md": PRICES, "warranty.md": WARRANTY})
    index = open_index(tmp_path)
    sync(kb, index, fake_embedder)
    calls = fake_embedder.calls
    report = sync(kb, index, fake_embedder)
    assert report.unchanged == 2 and not report.changed
    assert fake_embedder.calls == calls


def test_changed_file_is_reembedded_and_removed_file_dropped(tmp_path, write_kb, fake_embedder):
    kb = write_kb({"prices.md": PRICES, "warranty.md": WARRANTY})
    index = open_index(tmp_path)
    sync(kb, index, fake_embedder)
    (kb / "prices.md").write_text(PRICES.replace("185", "199"), encoding="utf-8")
    (kb / "warranty.md").unlink()
    report = sync(kb, index, fake_embedder)
    assert (report.updated, report.removed, report.unchanged) == (1, 1, 0)
    texts = [f.text for f in index.load().fragments]
    assert texts == ["Oak fronts cost 199 EUR per m²."]


def test_a_different_embedder_rebuilds_everything(tmp_path, write_kb, fake_embedder):
    kb = write_kb({"prices.md": PRICES})
    index = open_index(tmp_path)
    sync(kb, index, fake_embedder)
    other = FakeEmbedder(dim=32, name="other")
    report = sync(kb, index, other)
    assert report.rebuilt and report.added == 1
    assert index.load().matrix.shape == (1, 32)


def test_one_bad_file_does_not_stop_the_rest(tmp_path, write_kb, fake_embedder):
    kb = write_kb({"prices.md": PRICES, "broken.md": b"\xff\xfe\xfa not utf-8", "open.md": "---\ntitle: x\n"})
    index = open_index(tmp_path)
    report = sync(kb, index, fake_embedder)
    assert report.added == 1
    assert set(report.failed) == {"broken.md", "open.md"}
    assert "UTF-8" in report.failed["broken.md"]
    assert failures(index).keys() == {"broken.md", "open.md"}
    # Still failed, and still reported, on the next run without re-reading the reason.
    assert set(sync(kb, index, fake_embedder).failed) == {"broken.md", "open.md"}


def test_a_document_that_becomes_malformed_stops_being_searchable(tmp_path, write_kb, fake_embedder):
    kb = write_kb({"prices.md": PRICES, "warranty.md": WARRANTY})
    index = open_index(tmp_path)
    sync(kb, index, fake_embedder)
    (kb / "prices.md").write_text("---\ntitle: Prices\n", encoding="utf-8")
    report = sync(kb, index, fake_embedder)
    assert "prices.md" in report.failed
    assert [f.document for f in index.load().fragments] == ["warranty.md"]


def test_a_crash_while_embedding_leaves_the_previous_version_searchable(tmp_path, write_kb, fake_embedder):
    kb = write_kb({"prices.md": PRICES})
    index = open_index(tmp_path)
    sync(kb, index, fake_embedder)
    (kb / "prices.md").write_text(PRICES.replace("185", "199"), encoding="utf-8")

    class Exploding(FakeEmbedder):
        def embed(self, texts):
            raise RuntimeError("power cut")

    with pytest.raises(RuntimeError):
        sync(kb, index, Exploding())
    assert [f.text for f in index.load().fragments] == ["Oak fronts cost 185 EUR per m²."]
    assert sync(kb, index, fake_embedder).updated == 1


def test_vectors_are_stored_as_unit_float32_rows(tmp_path, write_kb, fake_embedder):
    kb = write_kb({"prices.md": PRICES, "warranty.md": WARRANTY})
    index = open_index(tmp_path)
    sync(kb, index, fake_embedder)
    corpus = index.load()
    assert corpus.matrix.dtype == np.float32
    assert np.allclose(np.linalg.norm(corpus.matrix, axis=1), 1.0, atol=1e-5)


def test_a_corrupt_index_file_is_moved_aside_and_rebuilt(tmp_path, write_kb, fake_embedder):
    kb = write_kb({"prices.md": PRICES})
    data = tmp_path / "data"
    data.mkdir()
    (data / INDEX_FILE).write_bytes(b"this is not a database" * 100)
    base = KnowledgeBase(Settings(knowledge_dir=kb, data_dir=data), embedder=fake_embedder)
    assert base.notice and "damaged" in base.notice
    assert base.sync().added == 1
    assert list(data.glob(f"{INDEX_FILE}.corrupt-*")), "the damaged file is kept for inspection"


def test_audience_filter_is_part_of_the_search(tmp_path, write_kb, fake_embedder):
    kb = write_kb({"prices.md": PRICES, "discounts.md": DISCOUNTS})
    base = KnowledgeBase(Settings(knowledge_dir=kb, data_dir=tmp_path / "data"), embedder=fake_embedder)
    question = "what discount may sales staff give"
    public = base.retrieve(question, SCOPES["public"], floor=-1.0).hits
    staff = base.retrieve(question, SCOPES["internal"], floor=-1.0).hits
    assert all(h.fragment.audience == "public" for h in public)
    assert staff[0].fragment.document == "discounts.md"


def test_a_running_knowledge_base_picks_up_new_documents(tmp_path, write_kb, fake_embedder):
    kb = write_kb({"prices.md": PRICES})
    base = KnowledgeBase(Settings(knowledge_dir=kb, data_dir=tmp_path / "data", resync_seconds=0.01), fake_embedder)
    base.sync()
    assert not base.retrieve("five year warranty joinery", SCOPES["public"], floor=0.5).hits
    (kb / "warranty.md").write_text(WARRANTY, encoding="utf-8")
    import time

    time.sleep(0.02)
    base.retrieve("five year warranty joinery", SCOPES["public"], floor=0.5)  # the resync runs beside this question
    base.indexer.wait_for_resync()
    hits = base.retrieve("five year warranty joinery", SCOPES["public"], floor=0.5).hits
    assert hits and hits[0].fragment.document == "warranty.md"


def test_a_one_line_edit_re_embeds_only_the_fragment_that_changed(tmp_path, write_kb, fake_embedder):
    sections = "\n\n".join(f"## Part {i}\n\nPart {i} says something of its own, number {i}." for i in range(5))
    kb = write_kb({"guide.md": f"# Guide\n\n{sections}\n"})
    index = open_index(tmp_path)
    assert sync(kb, index, fake_embedder).embedded == 5
    before = fake_embedder.texts
    (kb / "guide.md").write_text(f"# Guide\n\n{sections.replace('number 3', 'number 33')}\n", encoding="utf-8")
    report = sync(kb, index, fake_embedder)
    assert (report.updated, report.embedded) == (1, 1)
    assert fake_embedder.texts - before == 2, "the changed fragment and its one changed sentence, nothing else"
    assert any("number 33" in f.text for f in index.load().fragments)


def test_a_sidecar_makes_a_file_public_and_wins_over_its_front_matter(tmp_path, write_kb, fake_embedder):
    kb = write_kb(
        {
            "notes.txt": "Opening hours are 8 to 17 on weekdays.",
            "notes.txt.meta.yml": "title: Opening hours\naudience: public  # customers may read it\n",
            "staff.md": "---\naudience: public\n---\n# Staff\n\nStaff text.",
            "staff.md.meta.yml": "audience: internal\n",
        }
    )
    index = open_index(tmp_path)
    sync(kb, index, fake_embedder)
    by_document = {f.document: f for f in index.load().fragments}
    assert (by_document["notes.txt"].title, by_document["notes.txt"].audience) == ("Opening hours", "public")
    assert by_document["staff.md"].audience == "internal"


def test_folder_defaults_apply_below_and_a_changed_sidecar_re_reads_the_document(tmp_path, write_kb, fake_embedder):
    kb = write_kb(
        {
            "public/defaults.meta.yml": "audience: public\nowner: Sales office\n",
            "public/prices.txt": "Oak fronts cost 185 EUR per m2.",
            "staff.txt": "Staff may give 5% discount.",
        }
    )
    index = open_index(tmp_path)
    sync(kb, index, fake_embedder)
    audiences = {f.document: f.audience for f in index.load().fragments}
    assert audiences == {"public/prices.txt": "public", "staff.txt": "internal"}
    (kb / "staff.txt.meta.yml").write_text("audience: public\n", encoding="utf-8")
    report = sync(kb, index, fake_embedder)
    assert report.updated == 1 and report.embedded == 0, "only metadata changed: the vectors are reused"
    assert {f.audience for f in index.load().fragments} == {"public"}


def test_another_process_re_indexing_is_noticed_by_the_next_search(tmp_path, write_kb, fake_embedder):
    kb = write_kb({"prices.md": PRICES, "warranty.md": WARRANTY})
    settings = Settings(knowledge_dir=kb, data_dir=tmp_path / "data", resync_seconds=0)  # no resync of its own
    serving = KnowledgeBase(settings, fake_embedder)
    serving.sync()
    question = "oak fronts cost per m2"
    assert serving.retrieve(question, SCOPES["public"], floor=0.5).hits
    (kb / "prices.md").write_text(PRICES.replace("audience: public", "audience: internal"), encoding="utf-8")
    (kb / "warranty.md").unlink()
    indexer = KnowledgeBase(settings, fake_embedder)
    indexer.sync()
    indexer.close()
    public = serving.retrieve(question, SCOPES["public"], floor=-1.0).hits
    assert public == [], "a document made internal or deleted is never quoted to the public again"
    serving.close()


def test_sentences_are_embedded_at_index_time_so_an_answer_embeds_only_its_question(tmp_path, write_kb):
    from core.answering.extractive import ExtractiveAnswerer
    from tests.fakes import FakeEmbedder

    kb = write_kb({"prices.md": PRICES, "warranty.md": WARRANTY})
    settings = Settings(knowledge_dir=kb, data_dir=tmp_path / "data")
    KnowledgeBase(settings, FakeEmbedder()).sync()
    model = FakeEmbedder()  # a new process: nothing in memory, the index on disk
    base = KnowledgeBase(settings, model)
    hits = base.retrieve("how much do oak fronts cost", SCOPES["public"], floor=0.1).hits
    draft = ExtractiveAnswerer(base.embedder, policy=replace(DEFAULT, found_threshold=0.3)).answer(
        "how much do oak fronts cost", hits
    )
    assert draft.found and "185 EUR" in draft.claims[0].quote
    assert model.texts == 1, "only the question went to the model; the sentences were stored at index time"


def test_a_document_made_internal_is_never_public_again_even_if_its_re_index_fails(tmp_path, write_kb, fake_embedder):
    kb = write_kb({"prices.md": PRICES, "warranty.md": WARRANTY})
    index = open_index(tmp_path)
    sync(kb, index, fake_embedder)
    narrowed = PRICES.replace("audience: public", "audience: internal").replace("185", "199")

    class Exploding(FakeEmbedder):
        def embed(self, texts):
            raise RuntimeError("power cut")

    (kb / "prices.md").write_text(narrowed, encoding="utf-8")
    with pytest.raises(RuntimeError):
        sync(kb, index, Exploding())
    by_document = {f.document: f.audience for f in index.load().fragments}
    assert by_document == {"prices.md": "internal", "warranty.md": "public"}, "the old version, for staff only"


def test_a_reader_that_crashes_fails_only_its_own_document(tmp_path, write_kb, fake_embedder, monkeypatch):
    from core.ingest.readers import READERS

    def crash(data: bytes):
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setitem(READERS, ".html", crash)
    kb = write_kb({"prices.md": PRICES, "manual.html": "<h1>M</h1><p>Step.", "warranty.md": WARRANTY})
    index = open_index(tmp_path)
    report = sync(kb, index, fake_embedder)
    assert report.added == 2 and set(report.failed) == {"manual.html"}
    assert "RecursionError" in report.failed["manual.html"]
    assert failures(index).keys() == {"manual.html"}


def _secrets_outside(tmp_path: Path, name: str) -> Path:
    """A file of keys beside the knowledge folder, where a link may point."""
    secrets = tmp_path / name
    secrets.write_text("SLACK_BOT_TOKEN=xoxb-never-show-this\n")
    return secrets


def test_a_link_out_of_the_knowledge_folder_is_not_read(tmp_path, write_kb, fake_embedder):
    secrets = _secrets_outside(tmp_path, "outside.txt")
    kb = write_kb({"prices.md": PRICES})
    (kb / "notes.txt").symlink_to(secrets)
    (kb / "dangling.md").symlink_to(tmp_path / "nowhere.md")
    index = open_index(tmp_path)
    report = sync(kb, index, fake_embedder)
    assert report.added == 1
    assert "outside the knowledge folder" in report.failed["notes.txt"]
    assert report.fragments == 1  # the price list's alone: nothing of the linked file was stored


def listed_then(monkeypatch, change):
    """`change` runs on the folder just after the sync has listed it, before it reads a file."""
    from core.ingest import syncing

    real = syncing.list_folder

    def listing_then_change(folder):
        listing = real(folder)
        change()
        return listing

    monkeypatch.setattr(syncing, "list_folder", listing_then_change)


def test_a_file_removed_or_renamed_during_the_sync_is_reported_as_such(tmp_path, write_kb, fake_embedder, monkeypatch):
    kb = write_kb({"prices.md": PRICES, "warranty.md": WARRANTY, "discounts.md": DISCOUNTS})
    listed_then(monkeypatch, lambda: ((kb / "warranty.md").unlink(), (kb / "discounts.md").rename(kb / "d.md")))
    report = sync(kb, open_index(tmp_path), fake_embedder)
    assert report.added == 1
    for gone in ("warranty.md", "discounts.md"):
        assert "removed or renamed while the sync was reading it" in report.failed[gone]
        assert "link" not in report.failed[gone]


def test_a_link_whose_target_goes_during_the_sync_still_leads_nowhere(tmp_path, write_kb, fake_embedder, monkeypatch):
    kb = write_kb({"prices.md": PRICES, "shared/warranty.md": WARRANTY})
    (kb / "warranty.md").symlink_to(kb / "shared" / "warranty.md")
    listed_then(monkeypatch, lambda: (kb / "shared" / "warranty.md").unlink())
    report = sync(kb, open_index(tmp_path), fake_embedder)
    assert report.failed["warranty.md"] == "it is a link that leads nowhere; not read"
    assert "shared/warranty.md" in report.failed  # the target itself was removed under the sync


def test_a_sidecar_removed_as_it_is_checked_is_as_if_it_had_never_been_there(
    tmp_path, write_kb, fake_embedder, monkeypatch
):
    from core.ingest import folder

    kb = write_kb({"prices.md": PRICES, "prices.md.meta.yml": "audience: internal\n"})
    check = folder.refuse_outside

    def removed_first(root, path):
        if path.name.endswith(folder.SIDECAR_SUFFIX):
            path.unlink()  # seen a moment ago, gone now
        check(root, path)

    monkeypatch.setattr(folder, "refuse_outside", removed_first)
    report = sync(kb, open_index(tmp_path), fake_embedder)
    assert report.added == 1 and report.failed == {}, "the price list is indexed, without the sidecar it no longer has"


def test_a_well_known_secret_file_is_refused_even_inside_the_folder(tmp_path, write_kb, fake_embedder):
    kb = write_kb({"prices.md": PRICES, "keys/id_rsa": "-----BEGIN OPENSSH PRIVATE KEY-----\n"})
    (kb / "deploy-key.txt").symlink_to(kb / "keys" / "id_rsa")
    report = sync(kb, open_index(tmp_path), fake_embedder)
    assert report.added == 1
    assert "secrets" in report.failed["deploy-key.txt"]


def test_a_previously_indexed_file_that_becomes_a_link_outside_is_dropped(tmp_path, write_kb, fake_embedder):
    kb = write_kb({"prices.md": PRICES, "notes.md": WARRANTY})
    index = open_index(tmp_path)
    sync(kb, index, fake_embedder)
    outside = tmp_path / "elsewhere.md"
    outside.write_text(WARRANTY.replace("five", "seven"))
    (kb / "notes.md").unlink()
    (kb / "notes.md").symlink_to(outside)
    report = sync(kb, index, fake_embedder)
    assert "outside the knowledge folder" in report.failed["notes.md"]
    assert failures(index).keys() == {"notes.md"}


def test_a_sidecar_linked_out_of_the_folder_is_refused_and_its_content_never_shown(tmp_path, write_kb, fake_embedder):
    secrets = _secrets_outside(tmp_path, ".env")
    kb = write_kb({"guide.md": WARRANTY})
    (kb / "guide.md.meta.yml").symlink_to(secrets)
    report = sync(kb, open_index(tmp_path), fake_embedder)
    assert "outside the knowledge folder" in report.failed["guide.md"]
    assert "xoxb" not in report.failed["guide.md"]


def test_files_no_reader_handles_are_reported_by_type_not_ignored_in_silence(tmp_path, write_kb, fake_embedder):
    kb = write_kb({"prices.md": PRICES, "warranty.md": WARRANTY})
    for name in ("slides.pptx", "logo.png", "sub/photo.PNG", "prices.md.meta.yml", "defaults.meta.yml", ".hidden.csv"):
        (kb / name).parent.mkdir(parents=True, exist_ok=True)
        (kb / name).write_bytes(b"")
    report = sync(kb, open_index(tmp_path), fake_embedder)
    # Metadata files and hidden files are not documents that were skipped.
    assert report.skipped == ["logo.png", "slides.pptx", "sub/photo.PNG"]
    assert skipped_summary(report.skipped) == (
        "3 files skipped (no reader for their type): .png 2, .pptx 1 (logo.png, slides.pptx, sub/photo.PNG)"
    )
    assert skipped_summary([]) == ""


def test_the_skipped_files_are_named_up_to_ten_then_counted():
    many = [f"scan{n:02}.png" for n in range(13)]
    summary = skipped_summary(many)
    assert summary.startswith("13 files skipped (no reader for their type): .png 13 (scan00.png, scan01.png")
    assert summary.endswith("scan09.png, and 3 more)") and "scan10.png" not in summary


def test_another_companys_folder_is_refused_and_marks_nothing_removed(tmp_path, write_kb, fake_embedder):
    kb = write_kb({"prices.md": PRICES, "warranty.md": WARRANTY})
    index = open_index(tmp_path)
    sync(kb, index, fake_embedder)
    other = tmp_path / "other"
    other.mkdir()
    (other / "bikes.md").write_text("# Bikes\n\nA city bike costs 500 EUR.\n", encoding="utf-8")
    with pytest.raises(KnowledgeError, match="--data") as refused:
        sync(other, index, fake_embedder)
    assert str(kb.resolve()) in str(refused.value) and "\n" not in str(refused.value)
    assert {path: d.state for path, d in index.known().items()} == {"prices.md": "indexed", "warranty.md": "indexed"}


def test_a_folder_that_moved_keeps_its_index(tmp_path, write_kb, fake_embedder):
    kb = write_kb({"prices.md": PRICES, "warranty.md": WARRANTY})
    index = open_index(tmp_path)
    sync(kb, index, fake_embedder)
    moved = kb.rename(tmp_path / "moved")  # or a replica that mounts it at another path
    report = sync(moved, index, fake_embedder)
    assert (report.unchanged, report.removed) == (2, 0)
    assert index.folder() == str(moved.resolve())


def test_every_file_renamed_in_the_same_folder_is_an_ordinary_change(tmp_path, write_kb, fake_embedder):
    kb = write_kb({"prices.md": PRICES})
    index = open_index(tmp_path)
    sync(kb, index, fake_embedder)
    (kb / "prices.md").rename(kb / "price-list.md")
    report = sync(kb, index, fake_embedder)
    assert (report.added, report.updated, report.removed) == (0, 1, 0), "renamed: one update"


def _eleven(folder: Path, shared: str = "") -> Path:
    folder.mkdir()
    for n in range(11):
        (folder / f"policy{n}.md").write_text(f"# Policy {n}\n\nPolicy {n} of the first company says {n} things.\n")
    if shared:
        (folder / "faq.md").write_text(shared, encoding="utf-8")
    return folder


def test_a_folder_sharing_one_file_name_is_not_taken_for_the_same_folder_moved(tmp_path, fake_embedder):
    kb = _eleven(tmp_path / "first", shared="# FAQ\n\nAsk us anything.\n")
    index = open_index(tmp_path)
    sync(kb, index, fake_embedder)
    other = tmp_path / "other"
    other.mkdir()
    (other / "faq.md").write_text("# FAQ\n\nAsk us anything.\n", encoding="utf-8")  # even the same content
    (other / "bikes.md").write_text("# Bikes\n\nA city bike costs 500 EUR.\n", encoding="utf-8")
    with pytest.raises(KnowledgeError, match="--data") as refused:
        sync(other, index, fake_embedder)
    assert f"({kb.resolve()}, 12 documents), and only 1 of them is in {other}:" in str(refused.value)
    assert "run `verbatim index --replace`" in str(refused.value)
    assert all(d.state == "indexed" for d in index.known().values()) and len(index.known()) == 12
    report = sync(other, index, fake_embedder, replace=True)
    assert (report.added, report.removed) == (1, 11)


def test_a_folder_that_moved_with_most_of_its_contents_is_the_same_folder(tmp_path, fake_embedder):
    kb = _eleven(tmp_path / "first")
    index = open_index(tmp_path)
    sync(kb, index, fake_embedder)
    moved = kb.rename(tmp_path / "moved")
    (moved / "policy0.md").rename(moved / "policy-zero.md")  # renamed on the way: its content is still there
    (moved / "policy1.md").write_text("# Policy 1\n\nChanged while it moved.\n")
    report = sync(moved, index, fake_embedder)
    assert (report.added, report.updated, report.removed) == (0, 2, 0), "one renamed and one changed"


def test_a_replica_at_another_path_is_recognised_by_names_and_sizes_without_reading_a_file(
    tmp_path, fake_embedder, monkeypatch
):
    kb = _eleven(tmp_path / "first")
    index = open_index(tmp_path)
    sync(kb, index, fake_embedder)
    mounted = shutil.copytree(kb, tmp_path / "mounted")  # the same files at another path, as a replica mounts them
    hashed: list[Path] = []
    monkeypatch.setattr(guard, "_sha256", lambda folder, file, limit: hashed.append(file))
    report = sync(mounted, index, fake_embedder)
    assert report.unchanged == 11 and hashed == [], "the guard hashed files a listing with sizes settles"


def test_a_sync_that_would_remove_more_than_half_of_the_index_needs_replace(tmp_path, fake_embedder):
    kb = _eleven(tmp_path / "kb")
    index = open_index(tmp_path)
    sync(kb, index, fake_embedder)
    for n in range(6):
        (kb / f"policy{n}.md").unlink()
    with pytest.raises(KnowledgeError) as refused:
        sync(kb, index, fake_embedder)
    assert "would remove 6 of the 11 documents indexed (policy0.md, policy1.md, policy2.md and 3 more)" in str(
        refused.value
    )
    assert "run `verbatim index --replace`" in str(refused.value) and "\n" not in str(refused.value)
    assert len(index.known()) == 11, "nothing marked removed"
    assert sync(kb, index, fake_embedder, replace=True).removed == 6


def test_renamed_files_and_a_few_removals_need_no_replace(tmp_path, fake_embedder):
    kb = _eleven(tmp_path / "kb")
    index = open_index(tmp_path)
    sync(kb, index, fake_embedder)
    for n in range(8):
        (kb / f"policy{n}.md").rename(kb / f"renamed-{n}.md")
    report = sync(kb, index, fake_embedder)
    assert (report.updated, report.removed) == (8, 0), "renamed, not lost"
    for n in range(5):
        (kb / f"renamed-{n}.md").unlink()
    assert sync(kb, index, fake_embedder).removed == 5, "5 of 11 is not more than half"


def test_a_knowledge_file_is_read_only_through_the_folders_guard(tmp_path, write_kb):
    from core.common.errors import DocumentError
    from core.ingest.folder import read_file

    kb = write_kb({"prices.md": PRICES, "keys/id_rsa": "-----BEGIN OPENSSH PRIVATE KEY-----\n"})
    (kb / "notes.md").symlink_to(_secrets_outside(tmp_path, "outside.txt"))
    (kb / "deploy.md").symlink_to(kb / "keys" / "id_rsa")
    assert read_file(kb, kb / "prices.md", limit=1000) == PRICES.encode()
    for name, reason in [("notes.md", "outside the knowledge folder"), ("deploy.md", "secrets")]:
        with pytest.raises(DocumentError, match=reason):
            read_file(kb, kb / name, limit=1000)
    with pytest.raises(DocumentError, match=r"over the .* MB limit"):
        read_file(kb, kb / "prices.md", limit=10)


def test_the_folder_guard_does_not_follow_links_out_to_call_a_folder_the_same_one(tmp_path, fake_embedder):
    kb = _eleven(tmp_path / "first")
    index = open_index(tmp_path)
    sync(kb, index, fake_embedder)
    other = tmp_path / "other"
    other.mkdir()
    for n in range(11):  # links to the first folder's files: their content is not in this folder
        (other / f"policy{n}.md").symlink_to(kb / f"policy{n}.md")
    with pytest.raises(KnowledgeError, match="--data"):
        sync(other, index, fake_embedder)
    assert all(d.state == "indexed" for d in index.known().values()), "nothing marked failed or removed"
