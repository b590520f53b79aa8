"""`verbatim status` shows the provenance register and what needs attention; `verbatim sweep` what nothing uses."""

import io
import json
import shutil
import sqlite3

import numpy as np

from bot.cli import main, public_surfaces
from core.common.settings import Settings
from core.ingest.folder import find_files
from core.retrieval.knowledge import KnowledgeBase
from core.store import INDEX_FILE
from tests.conftest import DEMO_KB

DEMO_DOCUMENTS = len(find_files(DEMO_KB))
INTERNAL = "---\ntitle: Handbook\naudience: internal\nowner: HR\n---\n## Leave\n\nStaff get 25 days of leave.\n"


def run(argv, capsys):
    out = io.StringIO()
    code = main(argv, out=out)
    return code, out.getvalue(), capsys.readouterr().err


def demo(tmp_path, seed_index):
    return ["--knowledge", str(DEMO_KB), "--data", str(seed_index(tmp_path / "data"))]


def test_status_shows_every_document_with_totals(tmp_path, seed_index, capsys):
    code, out, err = run(["status", *demo(tmp_path, seed_index)], capsys)
    assert code == 0 and not err
    lines = out.splitlines()
    assert lines[0].split("  ")[0] == "STATE" and "REVIEW BY" in lines[0] and lines[0].endswith("INDEXED AT (UTC)")
    price = next(line for line in lines if "price-list.md" in line)
    assert price.startswith("indexed") and "Sales office" in price and "2026-10-01" in price
    assert f"{DEMO_DOCUMENTS} documents: {DEMO_DOCUMENTS} indexed, 0 failed, 0 removed, 0 queued" in out
    assert out.rstrip().endswith("Nothing needs attention.")


def test_status_lists_documents_past_review_and_exits_1(tmp_path, seed_index, capsys, monkeypatch):
    monkeypatch.setenv("VERBATIM_REVIEW_DAYS", "30")  # every demo document is dated mid-2026 or earlier
    code, out, _ = run(["status", *demo(tmp_path, seed_index)], capsys)
    assert code == 1
    assert "Needs attention:" in out
    assert "past review  warranty.md: was due for review on 2026-07-01" in out


def test_status_json_carries_the_whole_register(tmp_path, seed_index, capsys):
    code, out, _ = run(["status", "--json", *demo(tmp_path, seed_index)], capsys)
    data = json.loads(out)
    assert code == 0 and data["attention"] == [] and data["totals"]["indexed"] == DEMO_DOCUMENTS
    pdf = next(d for d in data["documents"] if d["path"] == "terms-of-sale.pdf")
    assert pdf["state"] == "indexed" and len(pdf["sha256"]) == 64 and pdf["fragments"] > 0
    assert set(pdf) >= {"title", "owner", "as_of", "source", "licence", "review_every", "indexed_at", "review_due"}


def test_a_public_bot_over_a_folder_with_no_public_document_needs_attention(
    tmp_path, write_kb, local_embedder, capsys, monkeypatch
):
    kb = write_kb({"handbook.md": INTERNAL})
    KnowledgeBase(Settings(knowledge_dir=kb, data_dir=tmp_path / "data"), local_embedder).sync()
    args = ["status", "--knowledge", str(kb), "--data", str(tmp_path / "data")]
    assert run(args, capsys)[0] == 0
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", "123456:not-checked-here")
    code, out, _ = run(args, capsys)
    assert code == 1
    assert "no public    the folder has no indexed public document, but Telegram (TELEGRAM_BOT_TOKEN is set)" in out
    monkeypatch.setenv("TELEGRAM_AUDIENCE", "internal")
    assert run(args, capsys)[0] == 0


def test_a_public_bot_is_told_which_staff_only_documents_hold_the_prices(
    tmp_path, write_kb, fake_embedder, capsys, monkeypatch
):
    rules = "---\ntitle: Rental rules\naudience: public\nowner: Desk\n---\n## Deposit\n\nThe deposit is released.\n"
    kb = write_kb({"rental-rules.md": rules, "price-list.csv": "Bike,Per day\nE-bike,35 EUR\n"})
    (kb / "price-list.csv.meta.yml").write_text("owner: Desk\n", encoding="utf-8")
    KnowledgeBase(Settings(knowledge_dir=kb, data_dir=tmp_path / "data"), fake_embedder).sync()
    args = ["status", "--knowledge", str(kb), "--data", str(tmp_path / "data")]
    assert run(args, capsys)[0] == 0  # no public surface: staff read the price list
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", "123456:not-checked-here")
    code, out, _ = run(args, capsys)
    assert code == 1
    assert (
        "  staff only   1 staff-only document holds prices (price-list.csv) and no public one does: customers on "
        "Telegram (TELEGRAM_BOT_TOKEN is set) can't be told prices; mark it public with a sidecar "
        "(price-list.csv.meta.yml: audience: public)"
    ) in out.splitlines()
    code, out, _ = run([*args, "--json"], capsys)
    (lacks,) = json.loads(out)["attention"]
    assert lacks == {"kind": "public_lacks", "document": "", "detail": "prices", "documents": ["price-list.csv"]}


def test_public_surfaces_are_read_from_the_environment():
    assert public_surfaces({}) == []
    assert public_surfaces({"TELEGRAM_BOT_TOKEN": "x"}) == ["Telegram (TELEGRAM_BOT_TOKEN is set)"]
    assert public_surfaces({"SLACK_BOT_TOKEN": "x", "SLACK_PUBLIC_CHANNELS": "C1"}) == [
        "Slack's public channels (SLACK_PUBLIC_CHANNELS)"
    ]


def test_status_before_anything_is_indexed(tmp_path, capsys):
    code, out, _ = run(["status", "--knowledge", str(tmp_path / "none"), "--data", str(tmp_path / "d")], capsys)
    assert code == 0 and out == f"The register in {tmp_path / 'd'} is empty: run `verbatim index` first.\n"
    assert not (tmp_path / "d").exists()


def test_sweep_lists_then_removes_only_with_apply(tmp_path, seed_index, local_embedder, capsys):
    kb = tmp_path / "kb"
    shutil.copytree(DEMO_KB, kb)
    data = seed_index(tmp_path / "data")
    (kb / "warranty.md").unlink()
    KnowledgeBase(Settings(knowledge_dir=kb, data_dir=data), local_embedder).sync()
    db = sqlite3.connect(data / INDEX_FILE)
    dim = int(db.execute("SELECT value FROM meta WHERE key = 'dimension'").fetchone()[0])
    db.execute(
        "INSERT INTO fragments (document_id, position, total, section, text, embedding) "
        "VALUES (9999, 1, 1, '[]', 'x', ?)",
        (np.zeros(dim, dtype=np.float32).tobytes(),),
    )
    db.commit()
    db.close()
    (data / f"{INDEX_FILE}.corrupt-20260101-000000").write_bytes(b"old")
    args = ["sweep", "--knowledge", str(kb), "--data", str(data)]

    code, out, _ = run(args, capsys)
    assert code == 0
    assert out.splitlines() == [
        f"Nothing refers to these in {data}:",
        "  1 fragment(s) and their vectors whose document is gone from the register",
        "  the register row of removed document warranty.md",
        f"  {INDEX_FILE}.corrupt-20260101-000000 (a damaged index set aside)",
        "Run `verbatim sweep --apply` to remove them.",
    ]
    assert run(args, capsys)[1] == out  # listing changes nothing

    code, out, _ = run([*args, "--apply"], capsys)
    assert code == 0 and out.startswith(f"Removed from {data}:")
    assert run(args, capsys)[1] == f"Nothing to sweep in {data}: everything there is referred to.\n"
    assert json.loads(run([*args, "--json"], capsys)[1])["removed_documents"] == []


def test_sweep_on_postgresql_names_the_database_and_leaves_the_data_folder_alone(
    tmp_path, database_url, capsys, monkeypatch
):
    data = tmp_path / "var"
    data.mkdir()
    aside = data / f"{INDEX_FILE}.corrupt-20260101-000000"  # left by the SQLite store used before
    aside.write_bytes(b"old")
    monkeypatch.setenv("VERBATIM_DATABASE_URL", database_url)
    args = ["sweep", "--knowledge", str(tmp_path / "kb"), "--data", str(data)]

    code, out, _ = run([*args, "--apply"], capsys)
    assert code == 0
    assert out.startswith("Nothing to sweep in the PostgreSQL database at "), out
    assert str(data) not in out
    assert aside.exists(), "the database's sweep is not the data folder's"


def test_ask_marks_a_quote_from_a_document_past_review(tmp_path, seed_index, capsys, monkeypatch):
    monkeypatch.setenv("VERBATIM_REVIEW_DAYS", "30")
    args = ["ask", "How long is the warranty on joinery?", *demo(tmp_path, seed_index)]
    code, out, _ = run(args, capsys)
    assert code == 0 and "· as of 1 Jun 2026 — may be out of date" in out
    quotes = [q for s in json.loads(run([*args, "--json"], capsys)[1])["statements"] for q in s["quotes"]]
    assert quotes and all(q["stale"] and q["as_of"] for q in quotes)


def test_index_and_status_name_the_files_they_skipped(tmp_path, capsys):
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "prices.md").write_text("# Prices\n\nOak worktops cost 310 EUR per metre.\n", encoding="utf-8")
    (kb / "slides.pptx").write_bytes(b"PK")
    folders = ["--knowledge", str(kb), "--data", str(tmp_path / "var")]
    out = io.StringIO()
    assert main(["index", *folders], out=out) == 0
    assert "1 file skipped (no reader for their type): .pptx 1" in out.getvalue()
    out = io.StringIO()
    main(["status", "--json", *folders], out=out)
    assert json.loads(out.getvalue())["skipped"] == ["slides.pptx"]
