import numpy as np
import pytest

from core.answering.policy import policy_for
from core.common.questions import SCOPES
from core.common.settings import Settings
from core.retrieval.knowledge import KnowledgeBase
from core.store.corpus import select


def naive_select(scores, documents, floor, k, per_document):
    """The obvious reference: sort everything, walk down, respect floor and cap."""
    chosen, taken = [], {}
    for row in sorted(range(len(scores)), key=lambda r: (-scores[r], r)):
        if scores[row] < floor:
            break
        if taken.get(documents[row], 0) < per_document:
            taken[documents[row]] = taken.get(documents[row], 0) + 1
            chosen.append(row)
            if len(chosen) == k:
                break
    return chosen


@pytest.mark.parametrize("seed", range(30))
def test_select_matches_the_naive_reference(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 400))
    scores = rng.normal(0.2, 0.3, n).astype(np.float32)
    if seed % 3 == 0:
        scores = np.round(scores, 1)  # many ties
    documents = rng.integers(0, int(rng.integers(1, 6)), n)
    floor = float(rng.choice([-1.0, 0.2, 0.5]))
    k, cap = int(rng.integers(1, 8)), int(rng.integers(1, 4))
    assert select(scores, documents, floor, k, cap) == naive_select(scores, documents, floor, k, cap)


def test_select_looks_past_one_dominant_document():
    scores = np.array([0.9] * 20 + [0.5, 0.4], dtype=np.float32)
    documents = np.array([0] * 20 + [1, 2])
    assert select(scores, documents, 0.0, 5, 3) == [0, 1, 2, 20, 21]


def one_document_kb(write_kb):
    oak = "\n\n".join(f"## Oak {i}\n\nOak worktop price number {i} is listed here." for i in range(8))
    return write_kb(
        {
            "oak.md": "---\naudience: public\n---\n" + oak,
            "other.md": "---\naudience: public\n---\n## Worktop\n\nOak worktop delivery costs extra.",
            "far.md": "---\naudience: public\n---\n## Hours\n\nThe shop opens at eight.",
        }
    )


def test_no_document_takes_more_than_three_of_the_five(tmp_path, write_kb, fake_embedder):
    base = KnowledgeBase(Settings(knowledge_dir=one_document_kb(write_kb), data_dir=tmp_path / "d"), fake_embedder)
    hits = base.retrieve("oak worktop price", SCOPES["public"], floor=-1.0).hits
    assert len(hits) == 5
    documents = [h.fragment.document for h in hits]
    assert documents.count("oak.md") == 3
    assert hits[3].fragment.document == "other.md"
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_the_floor_cuts_off_distant_matches(tmp_path, write_kb, fake_embedder):
    base = KnowledgeBase(Settings(knowledge_dir=one_document_kb(write_kb), data_dir=tmp_path / "d"), fake_embedder)
    assert base.retrieve("capital of france", SCOPES["public"], floor=0.3).hits == []
    assert base.retrieve("capital of france", SCOPES["public"], floor=-1.0).hits  # only the floor stopped them


def test_real_model_finds_the_price_list_and_ignores_geography(settings, local_embedder):
    base = KnowledgeBase(settings, local_embedder)
    hits = base.retrieve(
        "how much is a solid oak kitchen front per square metre?",
        SCOPES["public"],
        policy_for(base.settings).min_similarity,
    ).hits
    assert hits[0].fragment.caption.startswith("Price list › Kitchen fronts")
    assert (
        base.retrieve("What is the capital of France?", SCOPES["public"], policy_for(base.settings).min_similarity).hits
        == []
    )


def test_public_scope_never_sees_internal_documents_on_the_demo_kb(settings, local_embedder):
    base = KnowledgeBase(settings, local_embedder)
    hits = base.retrieve("what discount can sales staff give without approval", SCOPES["public"], floor=-1.0).hits
    assert hits and all(h.fragment.audience == "public" for h in hits)
    staff = base.retrieve(
        "what discount can sales staff give without approval",
        SCOPES["internal"],
        policy_for(base.settings).min_similarity,
    ).hits
    assert staff[0].fragment.title == "Discount authority and supplier terms"


def test_a_narrowed_scope_is_a_view_of_the_matrix_not_a_copy(tmp_path, write_kb, fake_embedder):
    kb = write_kb(
        {
            "a-staff.md": "---\naudience: internal\n---\n# Staff\n\nStaff may give 5% discount on fronts.",
            "b-prices.md": "---\naudience: public\n---\n# Prices\n\nOak fronts cost 185 EUR per m2.",
            "c-staff.md": "---\naudience: internal\n---\n# More staff\n\nSuppliers are paid in 30 days.",
            "d-care.md": "---\naudience: public\n---\n# Care\n\nOil an oak worktop twice a year.",
        }
    )
    base = KnowledgeBase(Settings(knowledge_dir=kb, data_dir=tmp_path / "data"), fake_embedder)
    searcher = base.searcher
    public = searcher._view(SCOPES["public"]).matrix
    assert np.shares_memory(public, searcher.corpus.matrix) and len(public) == 2
    hits = base.retrieve("oak fronts discount suppliers", SCOPES["public"], floor=-1.0).hits
    assert {h.fragment.document for h in hits} == {"b-prices.md", "d-care.md"}
