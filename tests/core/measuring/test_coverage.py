"""What staff-only documents tell that no public one does (core/measuring/coverage.py), and the register's line."""

import pytest

from core.common.settings import Settings
from core.common.values import Fragment
from core.measuring.coverage import Shortfall, kinds_of, public_shortfalls, shortfalls
from core.measuring.register import read_register
from core.retrieval.knowledge import KnowledgeBase

RULES = "---\ntitle: Rental rules\naudience: public\nowner: Desk\n---\n## Deposit\n\nThe deposit is released at once.\n"
PRICES = "E-bike,Per day\nE-bike,35 EUR\nCity bike,15 EUR\n"
SHIFTS = "---\ntitle: Shifts\nowner: HR\n---\n## Shifts\n\nThe shop opens Monday to Saturday, 9:00 to 18:00.\n"


@pytest.mark.parametrize(
    ("text", "kinds"),
    [
        ("A day's e-bike hire costs 35 EUR.", {"prices"}),
        ("Oak fronts cost €185 per m².", {"prices"}),
        ("We are open Monday to Friday.", {"hours"}),
        ("Geöffnet 9:00 bis 18 Uhr.", {"hours"}),
        ("Ouvert le samedi.", {"hours"}),
        ("Abrimos los sábados.", {"hours"}),
        ("Refunds are paid within 14 days.", {"terms"}),
        ("Die Gewährleistung beträgt zwei Jahre.", {"terms"}),
        ("La garantía cubre 2 años.", {"terms"}),
        ("The deposit is released at once.", set()),
        ("Deliveries take 3 days.", set()),
    ],
)
def test_prices_hours_and_terms_are_read_plainly(text, kinds):
    assert kinds_of(text) == kinds


def fragment(document: str, audience: str, text: str) -> Fragment:
    return Fragment(document, document, audience, (), 1, 1, text)


def test_a_kind_is_missing_only_when_no_public_fragment_states_it():
    found = shortfalls(
        [
            fragment("rules.md", "public", "Refunds are paid within 14 days."),
            fragment("price-list.xlsx", "internal", "E-bike: 35 EUR"),
            fragment("rates.pdf", "internal", "City bike: 15 EUR"),
            fragment("returns.md", "internal", "Refunds need a receipt."),
        ]
    )
    assert found == [Shortfall("prices", ("price-list.xlsx", "rates.pdf"))]
    assert shortfalls([fragment("a.md", "public", "35 EUR"), fragment("b.md", "internal", "40 EUR")]) == []


def test_the_register_names_what_customers_cannot_be_told(tmp_path, write_kb, fake_embedder):
    kb = write_kb({"rental-rules.md": RULES, "price-list.csv": PRICES, "shifts.md": SHIFTS})
    settings = Settings(knowledge_dir=kb, data_dir=tmp_path / "data")
    assert public_shortfalls(settings) == []  # nothing indexed yet: nothing said, nothing created
    assert not (tmp_path / "data").exists()
    KnowledgeBase(settings, fake_embedder).sync()
    assert [a for a in read_register(settings).attention if a.kind == "public_lacks"] == []
    lacking = [a for a in read_register(settings, ["Telegram"]).attention if a.kind == "public_lacks"]
    assert [(a.detail, a.documents) for a in lacking] == [("prices", ("price-list.csv",)), ("hours", ("shifts.md",))]
    assert lacking[0].to_json()["documents"] == ["price-list.csv"]
    (kb / "price-list.csv.meta.yml").write_text("audience: public\n", encoding="utf-8")
    KnowledgeBase(settings, fake_embedder).sync()
    assert [a.detail for a in read_register(settings, ["Telegram"]).attention if a.kind == "public_lacks"] == ["hours"]
