"""The knowledge base knows its languages: each document's is declared (`language:`) or detected at index
time, kept in the register, and counted in the sync report."""

from __future__ import annotations

import pytest

from core.common.errors import DocumentError
from core.ingest import sync
from core.ingest.readers import parse_document
from core.store import INDEX_FILE
from core.store.sqlite import SQLiteIndex

GERMAN = (
    "---\ntitle: Lieferbedingungen\naudience: public\n---\n## Lieferung\n\n"
    "Die Lieferung kostet 40 EUR bis 15 km. Wir liefern von Montag bis Freitag, und auch am Samstag gegen Aufpreis.\n"
)
ENGLISH = "# Prices\n\nOak fronts cost 185 EUR per m². The price includes the hinges and the fitting of the doors.\n"


def test_a_documents_language_is_detected_and_a_declaration_wins():
    assert parse_document("lieferung.md", GERMAN.encode()).language == "de"
    assert parse_document("prices.md", ENGLISH.encode()).language == "en"
    declared = GERMAN.replace("audience: public", "audience: public\nlanguage: fr")
    assert parse_document("lieferung.md", declared.encode()).language == "fr"
    # Too little to tell ("price per metre" is not Italian): unknown, not a guess.
    assert parse_document("p.csv", b"Material,Price per metre\nAsh,290\n").language == ""


def test_a_declared_language_that_is_no_language_code_fails_the_document():
    with pytest.raises(DocumentError, match="ISO 639-1"):
        parse_document("x.md", GERMAN.replace("audience: public", "audience: public\nlanguage: german").encode())


def test_the_register_and_the_sync_report_know_the_languages(tmp_path, write_kb, fake_embedder):
    kb = write_kb({"lieferung.md": GERMAN, "prices.md": ENGLISH})
    index = SQLiteIndex(tmp_path / "data" / INDEX_FILE)
    report = sync(kb, index, fake_embedder)
    assert report.languages == {"de": 1, "en": 1}
    assert {r.path: r.language for r in index.register()} == {"lieferung.md": "de", "prices.md": "en"}


def test_documents_indexed_before_languages_were_kept_are_read_once_more(tmp_path, write_kb, fake_embedder):
    kb = write_kb({"lieferung.md": GERMAN})
    index = SQLiteIndex(tmp_path / "data" / INDEX_FILE)
    sync(kb, index, fake_embedder)
    with index._write() as db:  # as an index from before this version holds them
        db.execute("UPDATE documents SET language = NULL")
    again = sync(kb, index, fake_embedder)
    assert (again.updated, again.unchanged, again.languages) == (1, 0, {"de": 1})
    assert sync(kb, index, fake_embedder).unchanged == 1


RATES = "Bike,Price per day (EUR),Price per week (EUR),Deposit (EUR)\n" + "".join(
    f"E-bike {n},{40 + n},{200 + n},300\n" for n in range(12)
)
HOURS = "# Opening hours\n\nMonday to Friday: 9:00-18:00. Saturday: 10:00-14:00. Closed on Sundays.\n"
WARRANTY = (
    "# Warranty\n\nEvery kitchen we fit has a five-year warranty on the fronts and the hinges. It does not cover "
    "damage from water or heat, and it is void when the doors were fitted by someone else.\n"
)


def test_a_table_or_a_short_document_takes_the_folders_main_language_not_unknown(tmp_path, write_kb, fake_embedder):
    kb = write_kb({"prices.md": ENGLISH, "warranty.md": WARRANTY, "rates.csv": RATES, "hours.md": HOURS})
    index = SQLiteIndex(tmp_path / "data" / INDEX_FILE)
    report = sync(kb, index, fake_embedder)
    assert report.languages == {"en": 4}, "the spreadsheet is not Italian, and the opening hours not unknown"
    assert {r.language for r in index.register()} == {"en"}
    (kb / "lieferung.md").write_text(GERMAN, encoding="utf-8")
    (kb / "more-hours.md").write_text(HOURS.replace("Sundays", "Sundays and holidays"), encoding="utf-8")
    assert sync(kb, index, fake_embedder).languages == {"en": 5, "de": 1}


def test_a_folder_whose_language_cant_be_told_at_all_stays_unknown(tmp_path, write_kb, fake_embedder):
    kb = write_kb({"rates.csv": RATES, "hours.md": HOURS})
    report = sync(kb, SQLiteIndex(tmp_path / "data" / INDEX_FILE), fake_embedder)
    assert report.languages == {"": 2}
