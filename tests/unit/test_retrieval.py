"""The retrieval pipeline (nodes/support/retrieval.py): fusion, aggregation, neighbours, filters, feedback, rerank."""

from __future__ import annotations

import pytest

from app.adapters.lexical_index import BM25Index
from core.errors import InvalidFilter
from core.filters import fallback_where, parse_filter, primary_where, validate_context
from core.records import ChunkRecord, DocumentInfo
from graphs.support import RetrievalConfig, SupportContext
from nodes.support.retrieval import (
    Ranking,
    aggregate_sections,
    apply_feedback,
    expand_neighbours,
    feedback_key,
    fuse,
    prefer_named_platform,
    prefer_named_topic,
    prefer_task_articles,
    prefer_title_match,
    search_chunks,
    title_match,
    title_term_weights,
)
from tests.fakes import HashingEmbedder, InMemoryIndex, chunk


def ranking(*chunks) -> Ranking:
    return Ranking(list(chunks), {c["chunk_id"]: c["score"] for c in chunks})


# --- fusion ---------------------------------------------------------------------------------------
def test_weighted_fusion_gives_every_candidate_both_scores_and_a_calibrated_score():
    dense = [chunk("a", doc_id="d1", score=0.8), chunk("b", doc_id="d2", score=0.5)]
    lexical = [
        dict(chunk("b", doc_id="d2", score=0.9), lexical_score=0.9),
        dict(chunk("c", doc_id="d3", score=0.6), lexical_score=0.6),
    ]
    fused = fuse(
        dense,
        lexical,
        dense_scores={"d3-0": 0.2},
        lexical_scores={"d1-0": 0.1},
        config=RetrievalConfig(dense_weight=0.3),
    )
    by_id = {c["chunk_id"]: c for c in fused.chunks}
    assert by_id["d1-0"]["score"] == pytest.approx(0.3 * 0.8 + 0.7 * 0.1)
    assert by_id["d2-0"]["score"] == pytest.approx(0.3 * 0.5 + 0.7 * 0.9) and by_id["d2-0"]["origin"] == "both"
    assert by_id["d3-0"]["dense_score"] == 0.2  # looked up for a chunk only BM25 found
    assert [c["chunk_id"] for c in fused.chunks] == ["d2-0", "d3-0", "d1-0"]
    assert all(0 <= c["score"] <= 1 for c in fused.chunks)


def test_reciprocal_rank_fusion_orders_by_rank_and_keeps_the_calibrated_score():
    dense = [chunk("a", doc_id="d1", score=0.9), chunk("b", doc_id="d2", score=0.3)]
    lexical = [dict(chunk("b", doc_id="d2"), lexical_score=0.2), dict(chunk("c", doc_id="d3"), lexical_score=0.1)]
    fused = fuse(
        dense, lexical, dense_scores={"d3-0": 0.1}, lexical_scores={"d1-0": 0.0}, config=RetrievalConfig(fusion="rrf")
    )
    assert fused.chunks[0]["chunk_id"] == "d2-0"  # found by both, so first under rrf
    assert fused.chunks[0]["score"] < fused.chunks[1]["score"]  # while its confidence is lower than d1's


# --- the title as the question a page answers ----------------------------------------------------
def test_the_page_whose_title_the_question_says_outranks_a_neighbour_that_shares_body_words():
    removing = chunk("a removed printer can be added back", title="Remove a printer", section="Steps", score=0.317)
    adding = chunk(
        "open Devices and choose the queue", title="Add a printer", section="Steps", score=0.297, doc_id="d2"
    )
    out = prefer_title_match(ranking(removing, adding), "where do I add the printer on floor 3", 0.2).chunks
    assert [c["title"] for c in out] == ["Add a printer", "Remove a printer"]
    assert out[0]["score"] == pytest.approx(0.297 * 1.2, abs=1e-4)  # the whole title asked: + weight
    # "printer", which both titles use, counts for less than the word that tells them apart: under half the weight
    assert 0.317 < out[1]["score"] < 0.317 * 1.1


def test_a_word_every_competing_title_shares_counts_less_than_one_only_this_title_has():
    weights = title_term_weights([["add", "printer"], ["remov", "printer"], ["printer", "toner"]])
    assert weights["printer"] < weights["add"] == weights["remov"]
    assert (
        title_match(["add", "printer"], {"printer"}, weights) < 0.5 < title_match(["add", "printer"], {"add"}, weights)
    )


def test_one_part_documents_titled_like_headings_are_ranked_by_their_body_alone():
    # a manual exported section by section: every document is one part, its title one heading among siblings
    parent = chunk("cancel a scheduled viewing from the guide", title="Using the guide", score=0.5)
    sibling = chunk(
        "scheduled viewings are listed here", title="Cancelling a scheduled viewing", score=0.45, doc_id="d2"
    )
    out = prefer_title_match(ranking(parent, sibling), "how do I cancel a scheduled viewing", 0.2).chunks
    assert [(c["title"], c["score"]) for c in out] == [
        ("Using the guide", 0.5),
        ("Cancelling a scheduled viewing", 0.45),
    ]


def test_a_page_whose_title_is_a_question_is_matched_even_without_headed_parts():
    faq = chunk("it reconnects after 8 hours by design", title="Why does my VPN drop every 8 hours?", score=0.4)
    other = chunk("the VPN client settings", title="VPN client settings", score=0.42, doc_id="d2")
    out = prefer_title_match(ranking(faq, other), "why does the vpn drop every 8 hours", 0.2).chunks
    assert out[0]["title"] == "Why does my VPN drop every 8 hours?" and out[0]["score"] > 0.42
    assert out[1]["score"] == 0.42  # a heading-like title of a one-part page: unchanged


def test_a_title_the_question_never_uses_or_a_zero_weight_changes_nothing():
    first = chunk("a", title="Why does my VPN drop every 8 hours?", score=0.5)
    second = chunk("b", title="Travel expenses", section="Claims", score=0.4, doc_id="d2")
    assert [c["score"] for c in prefer_title_match(ranking(first, second), "printer out of toner", 0.2).chunks] == [
        0.5,
        0.4,
    ]
    asked = "why does the vpn drop"
    assert [c["score"] for c in prefer_title_match(ranking(first, second), asked, 0.0).chunks] == [0.5, 0.4]


def test_a_boosted_score_stays_a_confidence_within_0_and_1():
    page = chunk("restart it", title="Restart the router", section="Steps", score=0.95)
    assert prefer_title_match(ranking(page), "restart the router", 0.2).chunks[0]["score"] == 1.0


# --- aggregation ----------------------------------------------------------------------------------
def test_the_article_about_the_thing_named_wins_over_one_about_the_same_symptom_elsewhere():
    vpn = chunk("drops after 30 minutes", title="VPN Troubleshooting", section="It keeps disconnecting", score=0.45)
    wifi = chunk("turn Wi-Fi off and on", title="Office Wi-Fi", section="Troubleshooting", score=0.3, doc_id="d2")
    out = prefer_named_topic(ranking(vpn, wifi), "the wifi keeps dropping in the office").chunks
    assert [c["title"] for c in out] == ["Office Wi-Fi", "VPN Troubleshooting"] and out[1]["score"] < 0.45


def test_a_passage_also_about_things_not_asked_about_ranks_lower():
    device = chunk("install the app", title="Enrolling a phone for e-mail", section="A new phone", score=0.67)
    mfa = chunk("move your sign-in", title="Setting up MFA", section="Moving to a new phone", score=0.65, doc_id="d2")
    out = prefer_named_topic(ranking(device, mfa), "how do I set up MFA on my new phone").chunks
    assert [c["title"] for c in out] == ["Setting up MFA", "Enrolling a phone for e-mail"]


def test_titles_that_name_nothing_asked_or_a_question_naming_nothing_keep_their_order():
    first = chunk("a", title="Why does my connection drop?", score=0.5)
    second = chunk("b", title="Travel expenses", score=0.4, doc_id="d2")
    assert prefer_named_topic(ranking(first, second), "the wifi keeps dropping").chunks == [first, second]
    assert [c["score"] for c in prefer_named_topic(ranking(first, second), "it keeps dropping").chunks] == [0.5, 0.4]


def test_the_page_for_the_platform_in_hand_wins_when_the_question_names_only_the_device():
    android = chunk("add the account", title="Syncing with Android", section="Calendar", score=0.36)
    ios = chunk("add the account", title="Syncing with iOS", section="Calendar", score=0.35, doc_id="d2")
    general = chunk("check the address", title="Calendar sync", section="SSL errors", score=0.3, doc_id="d3")
    out = prefer_named_platform(ranking(android, ios, general), "calendar on my iphone throws an ssl error").chunks
    assert [c["title"] for c in out] == ["Syncing with iOS", "Calendar sync", "Syncing with Android"]
    # nothing names the platform asked for, or the question names none: the order stays
    assert prefer_named_platform(ranking(android, general), "calendar on my iphone").chunks == [android, general]
    assert prefer_named_platform(ranking(android, ios), "calendar sync fails").chunks == [android, ios]


def test_a_device_or_distribution_is_read_as_the_platform_it_runs():
    from core.lexicon import platform_words, platforms

    assert platforms("my ubuntu laptop") == {"linux"} and platform_words("my ubuntu laptop") == ["linux"]
    assert platforms("on my iPhone and my MacBook") == {"ios", "macos"}
    assert platform_words("Linux on ubuntu") == []  # already named: nothing to add
    assert platforms("connect on my Mac") == {"macos"} and platform_words("connect on my Mac") == []
    assert platforms("what is my mac address") == set()


def test_one_long_section_cannot_crowd_the_others_out_of_the_top_k():
    crowd = [chunk(f"part {i}", doc_id="big", chunk_index=i, section="Setup", score=0.9 - i * 0.01) for i in range(6)]
    others = [chunk("other", doc_id=f"o{i}", score=0.7 - i * 0.01) for i in range(3)]
    out = aggregate_sections(ranking(*crowd, *others), max_per_section=2).chunks
    assert [c["doc_id"] for c in out[:5]] == ["big", "big", "o0", "o1", "o2"]
    assert len([c for c in out if c["doc_id"] == "big"]) == 2


def test_a_sections_further_chunks_never_come_before_its_best_one():
    a1 = chunk("a1", doc_id="a", chunk_index=0, score=0.5)
    a2 = chunk("a2", doc_id="a", chunk_index=1, score=0.45)
    b1 = chunk("b1", doc_id="b", chunk_index=0, score=0.6)
    out = aggregate_sections(ranking(b1, a1, a2), max_per_section=2).chunks
    assert [c["chunk_id"] for c in out] == ["b-0", "a-0", "a-1"]
    # with a bonus for the second-best chunk, section a (0.5 + 0.45) outranks b (0.6)
    out = aggregate_sections(ranking(b1, a1, a2), max_per_section=2, bonus=0.5).chunks
    assert [c["doc_id"] for c in out][:1] == ["a"] and out.index(a1) < out.index(a2)


# --- neighbours -----------------------------------------------------------------------------------
def test_neighbours_follow_the_top_hit_with_a_slightly_lower_score():
    top, other = chunk("step 3", doc_id="d", chunk_index=3, score=0.8), chunk("x", doc_id="e", score=0.6)
    near = [chunk("step 2", doc_id="d", chunk_index=2, score=0.0), chunk("step 4", doc_id="d", chunk_index=4, score=0)]
    out = expand_neighbours(ranking(top, other), near, decay=0.9).chunks
    assert [c["chunk_id"] for c in out] == ["d-3", "d-2", "d-4", "e-0"]
    assert out[1]["origin"] == "neighbour" and out[1]["score"] == pytest.approx(0.72)


# --- feedback -------------------------------------------------------------------------------------
def test_feedback_multipliers_reorder_and_keep_scores_within_0_and_1():
    good, bad = chunk("good", doc_id="g", score=0.6), chunk("bad", doc_id="b", score=0.7)
    good["content_hash"] = "hg"
    out = apply_feedback(ranking(bad, good), {"g:hg": 2.0, "b-0": 0.5}).chunks
    assert [c["doc_id"] for c in out] == ["g", "b"]
    assert out[0]["score"] == 1.0 and out[0]["feedback_multiplier"] == 2.0 and out[1]["score"] == 0.35


def test_feedback_keys_follow_the_text_across_versions():
    old, new = chunk("same text", doc_id="d", chunk_id="v1-chunk"), chunk("same text", doc_id="d", chunk_id="v2-chunk")
    old["content_hash"] = new["content_hash"] = "abc"
    assert feedback_key(old) == feedback_key(new) == "d:abc"


# --- filters --------------------------------------------------------------------------------------
def test_a_filter_naming_an_unknown_field_is_refused_not_ignored():
    with pytest.raises(InvalidFilter, match="Unknown filter field.*colour.*Filterable fields"):
        parse_filter({"context_type": ["how-to"], "colour": "red"})
    with pytest.raises(InvalidFilter, match="no values"):
        parse_filter({"context_type": []})


def test_filter_values_are_lower_cased_split_and_sorted_into_primary_and_secondary():
    parsed = parse_filter({"context_type": "How-To, Technical", "relevance_tags": ["VPN"]})
    assert parsed.primary == (("context_type", ("how-to", "technical")),)
    assert parsed.secondary == (("relevance_tags", ("vpn",)),)
    assert primary_where(parsed) == {
        "$or": [{"context_type": {"$contains": "how-to"}}, {"context_type": {"$contains": "technical"}}]
    }
    assert fallback_where(parsed) == {"relevance_tags": {"$contains": "vpn"}}


def test_a_document_context_needs_all_three_mandatory_fields_or_none():
    assert validate_context({"context_type": None, "description": ""}) == {}
    assert validate_context(
        {
            "context_type": ["Technical"],
            "content_domain": "IT",
            "document_category": "guide",
            "description": "  VPN  guide ",
        }
    ) == {
        "context_type": ["technical"],
        "content_domain": ["it"],
        "document_category": ["guide"],
        "description": "VPN guide",
    }
    with pytest.raises(InvalidFilter, match="content_domain, document_category are required"):
        validate_context({"context_type": ["technical"]})


# --- the whole pipeline over fakes ----------------------------------------------------------------
DOCS = {
    "vpn-howto": (
        "Connecting to the VPN",
        ["Open the Cisco client and type vpn.example.test", "Click Connect and approve the MFA prompt"],
        {
            "context_type": ["how-to"],
            "content_domain": ["network"],
            "document_category": ["guide"],
            "relevance_tags": ["vpn"],
        },
    ),
    "vpn-policy": (
        "VPN policy",
        ["The VPN must be used on public networks"],
        {"context_type": ["policy"], "content_domain": ["security"], "document_category": ["policy"]},
    ),
    "printer": (
        "Printers",
        ["Add the printer from Settings, then print a test page"],
        {
            "context_type": ["how-to"],
            "content_domain": ["office"],
            "document_category": ["guide"],
            "relevance_tags": ["printer"],
        },
    ),
}


@pytest.fixture
def pipeline():
    embedder, index, lexical = HashingEmbedder(), InMemoryIndex(), BM25Index()
    for doc_id, (title, texts, context) in DOCS.items():
        chunks = []
        for i, text in enumerate(texts):
            record = ChunkRecord(
                chunk_id=f"{doc_id}-{i}",
                doc_id=doc_id,
                version="v1",
                title=title,
                source=f"kb/{doc_id}.md",
                section="",
                os="",
                chunk_index=i,
                content_hash=f"h{i}",
                text=text,
                embed_text=f"{title}\n{text}",
            )
            record.update(context)
            chunks.append(record)
        index.replace_document(
            DocumentInfo(
                doc_id=doc_id,
                version="v1",
                title=title,
                source=f"kb/{doc_id}.md",
                content_type="markdown",
                chunk_count=len(chunks),
                size_bytes=1,
                indexed_at="2025-01-01",
            ),
            chunks,
            embedder.embed_documents([c["embed_text"] for c in chunks]),
        )
        lexical.replace_document(doc_id, "v1", chunks)

    def search(query: str, *, search_filter=None, feedback=None, reranker=None, feedback_enabled=True, **config):
        ctx = SupportContext(
            embedder=embedder,
            index=index,
            redactor=None,
            lexical=lexical,
            min_score=0.3,
            candidate_k=10,
            feedback=feedback,
            reranker=reranker,
            retrieval=RetrievalConfig(**{"feedback": feedback_enabled, **config}),
        )
        return search_chunks(ctx, query, embedder.embed_query(query), k=10, groups=None, search_filter=search_filter)

    return search


def test_the_pipeline_finds_by_words_and_by_meaning_and_adds_the_neighbour(pipeline):
    hits = pipeline("how do I connect to the vpn with cisco")
    assert hits[0]["chunk_id"] == "vpn-howto-0"
    assert hits[1]["chunk_id"] == "vpn-howto-1" and hits[1]["origin"] in ("neighbour", "both", "dense", "lexical")
    assert {"dense_score", "lexical_score"} <= set(hits[0])


def test_neighbours_are_not_added_when_the_top_hit_is_not_confident(pipeline):
    hits = pipeline("cisco", neighbour_radius=1, dense_weight=1.0, lexical=False)
    assert all(h.get("origin") != "neighbour" for h in hits)


def test_primary_filters_return_only_matching_documents(pipeline):
    hits = pipeline("vpn", search_filter=parse_filter({"context_type": "policy"}))
    assert hits and {h["doc_id"] for h in hits} == {"vpn-policy"}
    hits = pipeline("vpn", search_filter=parse_filter({"context_type": "how-to", "content_domain": "office"}))
    assert {h["doc_id"] for h in hits} <= {"printer"}


def test_secondary_filters_rank_and_are_the_fallback_when_primary_matches_nothing(pipeline):
    plain = pipeline("test", search_filter=parse_filter({"context_type": "how-to"}))
    assert plain[0]["doc_id"] == "printer"
    ranked = pipeline(
        "test", search_filter=parse_filter({"context_type": "how-to", "relevance_tags": "vpn"}), secondary_boost=0.5
    )
    assert ranked[0]["doc_id"] == "vpn-howto"
    fallback = pipeline(
        "vpn printer", search_filter=parse_filter({"context_type": "nothing-has-this", "relevance_tags": "printer"})
    )
    assert fallback and {h["doc_id"] for h in fallback} == {"printer"}
    assert pipeline("vpn", search_filter=parse_filter({"context_type": "nothing-has-this"})) == []


def test_dense_only_keeps_the_cosine_as_the_score(pipeline):
    hits = pipeline(
        "printer settings", lexical=False, aggregate_sections=False, neighbour_radius=0, title_match_weight=0.0
    )
    assert hits[0]["doc_id"] == "printer" and hits[0]["score"] == hits[0]["dense_score"]


class _Votes:
    """A FeedbackSource double: fixed multipliers."""

    def __init__(self, table):
        self.table = table

    def multipliers(self, keys, query_embedding=None):
        return {k: self.table[k] for k in keys if k in self.table}


def test_feedback_is_applied_after_fusion_and_can_be_switched_off(pipeline):
    plain = pipeline("vpn network")
    last = [h for h in plain if h["score"] > 0][-1]
    votes = _Votes({feedback_key(last): 2.0, feedback_key(plain[0]): 0.5})
    adjusted = pipeline("vpn network", feedback=votes)
    assert adjusted[0]["chunk_id"] == last["chunk_id"] and adjusted[0]["feedback_multiplier"] == 2.0
    assert pipeline("vpn network", feedback=votes, feedback_enabled=False) == plain


@pytest.fixture(scope="module")
def tiny_cross_encoder(tmp_path_factory):
    """A real (random, tiny) BERT cross-encoder saved to disk: the reranker adapter loads it like any model."""
    import torch
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizer

    folder = tmp_path_factory.mktemp("tiny-cross-encoder")
    words = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + sorted(
        {w for _, texts, _ in DOCS.values() for t in texts for w in t.lower().replace(",", " ").split()}
    )
    (folder / "vocab.txt").write_text("\n".join(words) + "\n")
    torch.manual_seed(0)
    model = BertForSequenceClassification(
        BertConfig(
            vocab_size=len(words),
            hidden_size=16,
            num_hidden_layers=1,
            num_attention_heads=2,
            intermediate_size=32,
            max_position_embeddings=128,
            num_labels=1,
            initializer_range=0.5,
        )
    )
    torch.nn.init.normal_(model.classifier.weight, std=3.0)  # spread the scores so the order is decided
    model.save_pretrained(folder)
    BertTokenizer(str(folder / "vocab.txt")).save_pretrained(folder)
    from app.adapters.reranker import CrossEncoderReranker

    return CrossEncoderReranker(str(folder))


@pytest.mark.slow
def test_a_configured_reranker_rescores_every_candidate_including_the_neighbours(pipeline, tiny_cross_encoder):
    from nodes.support.retrieval import passage

    hits = pipeline("connect to the vpn with cisco", reranker=tiny_cross_encoder)
    assert len(hits) >= 3 and all("rerank_score" in h for h in hits)
    assert {"vpn-howto-0", "vpn-howto-1"} <= {h["chunk_id"] for h in hits}  # the top hit's neighbour too
    expected = tiny_cross_encoder.score("connect to the vpn with cisco", [passage(h) for h in hits])
    assert [h["rerank_score"] for h in hits] == pytest.approx(expected, abs=1e-4)
    assert [h["score"] for h in hits] == sorted((h["score"] for h in hits), reverse=True)
    assert len({round(s, 3) for s in expected}) > 1  # the model really decides the order


def test_an_unloadable_reranker_is_a_clear_start_up_error(tmp_path):
    from app.adapters.reranker import CrossEncoderReranker, RerankerUnavailable

    with pytest.raises(RerankerUnavailable, match="DESKMATE_RERANKER_MODEL"):
        CrossEncoderReranker(str(tmp_path / "no-such-model"))


def test_a_how_to_question_ranks_an_article_about_a_fault_behind_one_about_the_task():
    fault = chunk("click Connect again", title="VPN troubleshooting: can't connect", score=0.62, doc_id="d1")
    task = chunk("type the gateway and click Connect", title="Connecting to the VPN", score=0.60, doc_id="d2")
    out = prefer_task_articles(ranking(fault, task), "how do I connect to the vpn").chunks
    assert [c["doc_id"] for c in out] == ["d2", "d1"]
    assert out[1]["title_boost"] == pytest.approx(0.93)  # the answer confidence reads the score without it


def test_a_question_that_names_a_fault_keeps_the_troubleshooting_article_first():
    fault = chunk("click Connect again", title="VPN troubleshooting: can't connect", score=0.62, doc_id="d1")
    task = chunk("type the gateway and click Connect", title="Connecting to the VPN", score=0.60, doc_id="d2")
    for question in ("the vpn won't connect", "how do I fix the vpn error 412"):
        out = prefer_task_articles(ranking(fault, task), question).chunks
        assert [c["doc_id"] for c in out] == ["d1", "d2"] and "title_boost" not in out[0]
