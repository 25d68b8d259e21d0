"""Words foreign to the knowledge base (nodes/support/foreign_terms.py) and what they do to the answer decision
(nodes/support/confidence.py foreign_penalty)."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.adapters.lexical_index import BM25Index
from core.records import ChunkRecord
from core.words import bases, ordinary_english
from nodes.support.confidence import Assessment, foreign_penalty
from nodes.support.foreign_terms import foreign_terms, topic_words

KB = Path(__file__).resolve().parent.parent / "fixtures" / "foreign_kb"


@pytest.fixture(scope="module")
def held():
    """The fixture knowledge base as the lexical index holds it, plus one hyphenated word and one abbreviation."""
    index = BM25Index()
    texts = [p.read_text(encoding="utf-8") for p in sorted(KB.glob("*.md"))]
    texts.append("Connect to the office Wi-Fi with your SSO account.")
    for n, body in enumerate(texts):
        record = ChunkRecord(
            chunk_id=f"d{n}-0", doc_id=f"d{n}", version="v1", title=body.splitlines()[0], source=f"kb/{n}.md",
            section="", os="", chunk_index=0, text=body, embed_text=body, content_hash=str(n),
        )  # fmt: skip
        index.replace_document(f"d{n}", "v1", [record])
    return index.held_terms


def test_a_product_the_knowledge_base_never_names_is_foreign(held):
    assert foreign_terms("how do I share a folder from Driveport with someone outside", held) == ["driveport"]
    assert foreign_terms("Quillnote keeps crashing when I open a shared notebook", held) == ["quillnote"]


def test_everyday_words_the_knowledge_base_lacks_are_not_foreign(held):
    # none of these words is in the fixture articles, but each is ordinary English
    for question in (
        "my laptop keeps making a second spreadsheet with a date in the name, which one is mine?",
        "the wifi on my colleague's macbook drops, uninstalling and reinstalling the driver did nothing",
        "the toner light on the printer by reception blinks orange since yesterday",
    ):
        assert foreign_terms(question, held) == [], question


def test_the_knowledge_base_s_own_words_in_another_form_are_not_foreign(held):
    assert foreign_terms("syncboxes on two laptops", held) == []  # a plural of a word it holds
    assert foreign_terms("wifi and wi-fi", held) == []  # hyphenated in the articles, joined in the question
    assert foreign_terms("my sso sign-in", held) == []


def test_misspellings_are_not_foreign(held):
    assert foreign_terms("the pasword for the conflcit copy", held) == []  # of common English words
    assert foreign_terms("syncbx made a second file", held) == []  # of the product the knowledge base documents


def test_short_words_are_too_short_to_tell_a_name_from_an_abbreviation_or_a_typo(held):
    assert foreign_terms("the mdm profile blocks tne install of the vdi client", held) == []


def test_file_names_paths_and_addresses_name_no_topic(held):
    words = topic_words("is it report (draft).xlsx or C:/Users/qz/budgetz.odsx from x@qqzz.test")
    assert "xlsx" not in words and "odsx" not in words and "qqzz" not in words
    assert foreign_terms("syncbox put budget (draft).xlsx next to budget.xlsx", held) == []


def test_an_inflected_form_counts_as_its_base_word():
    assert "reinstall" in bases("reinstalling") and "huddle" in bases("huddles")
    assert ordinary_english("reinstalling") and not ordinary_english("driveport")


def test_a_foreign_word_lowers_the_answer_evidence_but_strong_evidence_still_answers():
    threshold = 0.58
    ordinary = Assessment(answerable=0.86, confidence=0.6)
    lowered = foreign_penalty(ordinary, 1)
    assert lowered.answerable < threshold < ordinary.answerable
    assert lowered.confidence == pytest.approx(lowered.answerable * 0.6 / 0.86, abs=1e-3)
    assert foreign_penalty(Assessment(answerable=0.98, confidence=0.9), 1).answerable > threshold
    assert foreign_penalty(ordinary, 0) == ordinary
