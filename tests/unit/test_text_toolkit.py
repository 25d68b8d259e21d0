"""core/text.py: the one tokenizer, stemmer and set of word lists that BM25, tickets, status and the lexicon share."""

from __future__ import annotations

from app.adapters.tickets import topic_similarity
from core.lexicon import content_words
from core.status import _terms as status_terms
from core.text import COMPLAINT_WORDS, CONVERSATION_WORDS, STOP_WORDS, Tokenizer, topic_terms


def test_the_index_tokenizer_splits_at_apostrophes_and_also_joins_hyphenated_words():
    # the terms stored indexes hold: "doesn't" → "doesn" (kept), "user's" → "user"; Wi-Fi findable as "wifi"
    assert Tokenizer()("Wi-Fi doesn't connect on the user's laptop") == [
        "wi",
        "fi",
        "wifi",
        "doesn",
        "connect",
        "user",
        "laptop",
    ]


def test_topic_terms_fold_contractions_stem_and_drop_what_they_are_told_to():
    terms = topic_terms("The VPN isn't connecting on Wi-Fi after update 24H2", STOP_WORDS | {"isnt"})
    assert terms == {"vpn", "connect", "wi", "fi", "wifi", "after", "updat", "24h2"}
    assert "24" not in topic_terms("Outlook 24 crashes", STOP_WORDS, numbers=False)
    assert "24" in topic_terms("Outlook 24 crashes", STOP_WORDS)


def test_inflections_of_one_word_compare_equal_everywhere():
    assert topic_similarity("printers not printing", "printer prints nothing") == 1.0
    assert status_terms("Printers") == status_terms("printer") == {"printer"}


def test_complaint_words_name_no_topic_for_tickets_status_or_the_lexicon():
    message = "it's still not working, keeps failing with an error"
    assert topic_terms(message, STOP_WORDS | CONVERSATION_WORDS | COMPLAINT_WORDS) == set()
    assert status_terms(message) == set()
    assert content_words(message) == []
    assert content_words("Outlook keeps crashing, it's not working") == ["outlook", "crashing"]
