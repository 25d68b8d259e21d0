"""Document audiences: the access clause, and both indexes (Chroma, BM25) applying it — also after a restart."""

from __future__ import annotations

import pytest

from app.adapters.lexical_index import BM25Index, HybridIndex
from app.adapters.vector_index import ChromaVectorIndex, make_client
from core.errors import InvalidFilter
from core.filters import (
    access_where,
    combine_where,
    matches_where,
    may_read,
    normalise_audience,
    split_access_clause,
)
from tests.unit.test_lexical_index import chunk, info

PUBLIC = {"doc_id": "a"}  # indexed before audiences existed: no flag at all
OPEN = {"doc_id": "b", "restricted": False}
FINANCE = {"doc_id": "c", "restricted": True, "audience": ["finance", "payroll"]}


def test_callers_see_public_documents_and_those_naming_one_of_their_groups():
    nobody, finance, both = (
        access_where(frozenset()),
        access_where(frozenset({"finance"})),
        access_where(frozenset({"hr", "payroll"})),
    )
    assert [matches_where(m, nobody) for m in (PUBLIC, OPEN, FINANCE)] == [True, True, False]
    assert [matches_where(m, finance) for m in (PUBLIC, OPEN, FINANCE)] == [True, True, True]
    assert matches_where(FINANCE, both) and not matches_where(FINANCE, access_where(frozenset({"hr"})))
    assert access_where(None) is None  # admin tools only
    assert combine_where(None, nobody) == nobody and combine_where(None, None) is None


def test_a_document_manifest_with_an_audience_is_restricted_even_without_the_chunk_flag():
    manifest = {"doc_id": "c", "audience": ["finance"]}
    assert not may_read(manifest, frozenset()) and may_read(manifest, frozenset({"finance"}))
    assert may_read({"doc_id": "a"}, frozenset())


def test_audience_names_are_normalised_and_bounded():
    assert normalise_audience(["Finance, HR", "finance"]) == ["finance", "hr"]
    assert normalise_audience(None) == [] and normalise_audience([" , "]) == []
    with pytest.raises(InvalidFilter):
        normalise_audience(["x" * 65])


def _docs(index) -> None:
    index.replace_document(
        "pay",
        "v1",
        [chunk("pay", 0, "Payroll enclave gateway and the Kestrel profile", audience=["finance"], restricted=True)],
    )
    index.replace_document(
        "vpn", "v1", [chunk("vpn", 0, "Connect to the office gateway with the Cisco profile", restricted=False)]
    )


def test_bm25_never_returns_a_restricted_chunk_outside_its_audience():
    bm25 = BM25Index()
    _docs(bm25)
    assert [h["doc_id"] for h in bm25.search("kestrel gateway", 5, access_where(frozenset()))] == ["vpn"]
    assert [h["doc_id"] for h in bm25.search("kestrel gateway", 5, access_where(frozenset({"finance"})))][0] == "pay"
    assert bm25.delete_document("pay")
    assert [h["doc_id"] for h in bm25.search("kestrel gateway", 5, access_where(frozenset({"finance"})))] == ["vpn"]


def test_chroma_and_bm25_keep_the_audience_across_a_restart(tmp_path):
    def hybrid():
        index = HybridIndex(ChromaVectorIndex(make_client("persistent", path=str(tmp_path)), "audience_test"))
        index.reconcile()
        return index

    first = hybrid()
    for doc_id, text, extra in (
        ("pay", "Kestrel payroll gateway", {"audience": ["finance"], "restricted": True}),
        ("vpn", "Cisco office gateway", {"restricted": False}),
    ):
        first.replace_document(
            {**info(doc_id), **({"audience": extra["audience"]} if "audience" in extra else {})},
            [chunk(doc_id, 0, text, **extra)],
            [[1.0, 0.0, 0.5]],
        )
    restarted = hybrid()  # BM25 rebuilt from Chroma's metadata
    for index in (first, restarted):
        outside = access_where(frozenset({"hr"}))
        assert [h["doc_id"] for h in index.query([1.0, 0.0, 0.5], 5, outside)] == ["vpn"]
        assert [h["doc_id"] for h in index.search("kestrel gateway", 5, outside)] == ["vpn"]
        inside = access_where(frozenset({"finance"}))
        assert {h["doc_id"] for h in index.query([1.0, 0.0, 0.5], 5, inside)} == {"pay", "vpn"}
        assert index.search("kestrel gateway", 5, inside)[0]["doc_id"] == "pay"
    assert restarted.get_document("pay")["audience"] == ["finance"]


def test_the_access_clause_is_split_off_alone_or_from_an_and_and_nothing_else_is():
    nobody, finance = access_where(frozenset()), access_where(frozenset({"finance"}))
    other = {"os": {"$in": ["linux"]}}
    assert split_access_clause(nobody) == (None, nobody) and split_access_clause(finance) == (None, finance)
    assert split_access_clause(combine_where(other, nobody)) == (other, nobody)
    assert split_access_clause(combine_where(other, finance)) == (other, finance)
    assert split_access_clause(other) == (other, None) and split_access_clause(None) == (None, None)
    lookalike = {"$or": [{"restricted": {"$ne": True}}, {"os": {"$in": ["linux"]}}]}
    assert split_access_clause(lookalike) == (lookalike, None)


def test_chroma_searches_without_the_access_clause_and_again_with_it_when_a_hit_is_not_the_callers(
    tmp_path, monkeypatch
):
    """The clause costs Chroma a scan of every chunk's metadata: the search runs without it and checks it on what
    comes back. A hit the caller may not read sends the search again with the clause — also when another process
    restricted a document a moment ago (same bytes, a new audience), with no wait for a manifest to be re-read."""
    vector = ChromaVectorIndex(make_client("persistent", path=str(tmp_path)), "access_check")
    index = HybridIndex(vector)
    index.reconcile()
    index.replace_document(info("vpn"), [chunk("vpn", 0, "Cisco office gateway", restricted=False)], [[1.0, 0.0, 0.5]])
    sent: list = []

    class Spy:  # the collection, noting the `where` of every query
        def __init__(self, collection) -> None:
            self.collection = collection

        def __getattr__(self, name: str):
            return getattr(self.collection, name)

        def query(self, **kwargs):
            sent.append(kwargs.get("where"))
            return self.collection.query(**kwargs)

    monkeypatch.setattr(vector, "_chunks", Spy(vector._chunks))
    outside, inside = access_where(frozenset({"hr"})), access_where(frozenset({"finance"}))
    assert [h["doc_id"] for h in index.query([1.0, 0.0, 0.5], 5, outside)] == ["vpn"]
    assert sent == [None]  # nothing restricted came back: one search, no clause
    # another process adds a restricted document, and restricts the public one (same bytes, an audience now)
    other = ChromaVectorIndex(make_client("persistent", path=str(tmp_path)), "access_check")
    other.replace_document(
        {**info("pay"), "audience": ["finance"]},
        [chunk("pay", 0, "Kestrel payroll gateway", audience=["finance"], restricted=True)],
        [[1.0, 0.0, 0.5]],
    )
    other.replace_document(
        {**info("vpn"), "audience": ["finance"]},
        [chunk("vpn", 0, "Cisco office gateway", audience=["finance"], restricted=True)],
        [[1.0, 0.0, 0.5]],
    )
    sent.clear()
    assert index.query([1.0, 0.0, 0.5], 5, outside) == []  # this process's manifest view is still the old one
    assert sent == [None, outside]  # a hit the caller may not read: searched again with the clause
    vector._forget_manifest_cache()
    assert {h["doc_id"] for h in index.query([1.0, 0.0, 0.5], 5, inside)} == {"pay", "vpn"}
