"""The answer confidence's evidence (nodes/support/confidence.py): what an article's search results say about it."""

from __future__ import annotations

import copy

import pytest

from nodes.support.compose import rank_articles
from nodes.support.confidence import article_features
from nodes.support.retrieval import Ranking, prefer_title_match
from tests.fakes import chunk


def features_of(chunks, doc_id: str) -> dict[str, float]:
    articles = rank_articles(chunks)
    rank = next(i for i, a in enumerate(articles) if a.doc_id == doc_id)
    return article_features(articles, None, rank)


def test_the_title_match_ranks_an_article_first_but_leaves_its_answer_confidence_as_its_evidence_gave_it():
    adding = chunk("open Devices and choose the queue", title="Add a printer", section="Steps", score=0.40)
    drivers = chunk("drivers come from the vendor", title="Printer drivers", section="Steps", score=0.41, doc_id="d2")
    before = features_of(copy.deepcopy([adding, drivers]), "d1")
    boosted = prefer_title_match(Ranking([adding, drivers], {"d1-0": 0.40, "d2-0": 0.41}), "add a printer", 0.2)
    assert [c["doc_id"] for c in boosted.chunks] == ["d1", "d2"]  # the title decides the order
    assert boosted.chunks[0]["score"] > 0.41
    after = features_of(boosted.chunks, "d1")
    assert after["article"] == pytest.approx(before["article"], abs=1e-4)  # the evidence is the score before it
    assert after["margin"] == pytest.approx(before["margin"], abs=1e-4) and after["margin"] < 0
