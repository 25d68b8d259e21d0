"""embed_query, retrieve and respond, one node at a time with scripted fakes."""

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.runtime import Runtime

from app.adapters.redactor import PatternRedactor
from core.errors import EmbeddingError
from graphs.support import SupportContext, turn_result
from nodes.support.embed_query import embed_query, search_variants
from nodes.support.redact import redact
from nodes.support.respond import respond
from nodes.support.retrieve import retrieve
from tests.fakes import HashingEmbedder, InMemoryIndex, chunk, support_state


def _runtime(**overrides):
    values = dict(embedder=HashingEmbedder(), index=InMemoryIndex(), redactor=PatternRedactor())
    values.update(overrides)
    return Runtime(context=SupportContext(**values))


def test_redact_node_overwrites_the_query_and_explains_why():
    out = turn_result(redact(support_state({"query": "my password is hunter2 and VPN fails"}), _runtime()))
    assert "hunter2" not in out["query"]
    assert out["redacted_kinds"] == ["PASSWORD"]
    assert "password" in out["redaction_notice"]


def test_short_follow_up_is_enriched_with_the_active_topic():
    state = {"query": "im on linux", "active_topic": "how do I find my MAC address", "keywords": []}
    out = turn_result(embed_query(support_state(state), _runtime()))
    assert out["search_query"] == "how do I find my MAC address - im on linux"
    assert out["is_follow_up"] is True


def test_a_new_question_is_not_treated_as_a_follow_up():
    state = {"query": "how do I request software", "active_topic": "vpn on mac", "keywords": ["software"]}
    assert turn_result(embed_query(support_state(state), _runtime()))["search_query"] == "how do I request software"


def test_each_search_again_uses_the_next_untried_wording():
    state = {
        "query": "outlook keeps freezing today",
        "keywords": ["e-mail"],
        "messages": [HumanMessage("earlier question about calendars"), AIMessage("…")],
    }
    variants = search_variants(support_state(state))
    assert len(variants) == 3
    first = turn_result(embed_query(support_state(state), _runtime()))
    second = turn_result(embed_query(support_state({**state, "tried_queries": first["tried_queries"]}), _runtime()))
    assert second["search_query"] == variants[1] != first["search_query"]


def test_embedding_is_retried_then_fails_loudly():
    embedder = HashingEmbedder()
    embedder.fail_next = 2
    assert turn_result(embed_query(support_state({"query": "vpn"}), _runtime(embedder=embedder)))["query_embedding"]
    embedder.fail_next = 3
    with pytest.raises(EmbeddingError):
        turn_result(embed_query(support_state({"query": "vpn"}), _runtime(embedder=embedder)))


class _FixedIndex(InMemoryIndex):
    def __init__(self, hits):
        super().__init__()
        self.hits = hits

    def query(self, embedding, k, where=None):
        return self.hits[:k]


def test_retrieve_drops_chunks_for_another_os_and_weak_scores():
    hits = [
        chunk("win steps", os="windows", score=0.9, chunk_index=0),
        chunk("mac steps", os="macos", score=0.8, chunk_index=1),
        chunk("general", score=0.7, chunk_index=2),
        chunk("noise", score=0.05, chunk_index=3),
    ]
    out = turn_result(
        retrieve(support_state({"query_embedding": [1.0], "user_os": "macos"}), _runtime(index=_FixedIndex(hits)), {})
    )
    assert [c["text"] for c in out["retrieved_chunks"]] == ["mac steps", "general"]
    assert out["search_count"] == 1


def test_retrieve_keeps_the_best_of_all_searches_this_turn():
    earlier = [chunk("earlier good", score=0.9, chunk_index=5)]
    out = turn_result(
        retrieve(
            support_state({"query_embedding": [1.0], "retrieved_chunks": earlier, "search_count": 1}),
            _runtime(index=_FixedIndex([chunk("new", score=0.5, chunk_index=1)])),
            {},
        )
    )
    assert [c["text"] for c in out["retrieved_chunks"]] == ["earlier good", "new"]
    assert out["search_count"] == 2


def test_respond_saves_the_turn_and_bounds_history():
    history = []
    for i in range(6):
        history += [HumanMessage(f"q{i}", id=f"h{i}"), AIMessage(f"a{i}", id=f"a{i}")]
    state = {"query": "q6", "answer": "a6", "action": "answer", "sources": [{"n": 1}], "messages": history}
    out = turn_result(respond(support_state(state), _runtime(history_turns=3)))
    removed = [m.id for m in out["messages"] if m.type == "remove"]
    assert removed == ["h0", "a0", "h1", "a1", "h2", "a2", "h3", "a3"]  # keeps 2 old turns + this one = 3
    assert out["active_topic"] == "q6" and out["turn_count"] == 1


def test_respond_puts_notices_before_the_answer():
    out = turn_result(
        respond(
            support_state(
                {
                    "query": "x",
                    "answer": "the answer",
                    "redaction_notice": "removed a password",
                    "fallback_notice": "LLM down",
                }
            ),
            _runtime(),
        )
    )
    assert out["answer"].startswith("⚠️ removed a password\n⚠️ LLM down\n\nthe answer")


def test_a_follow_up_does_not_replace_the_active_topic():
    out = turn_result(
        respond(
            support_state(
                {
                    "query": "im on linux",
                    "answer": "…",
                    "action": "answer",
                    "sources": [{"n": 1}],
                    "is_follow_up": True,
                    "active_topic": "find my mac address",
                }
            ),
            _runtime(),
        )
    )
    assert out["active_topic"] == "find my mac address"


def _first_search(doc_id: str, answerable: float) -> dict:
    return {
        "doc_id": doc_id,
        "title": doc_id,
        "source": f"kb/{doc_id}.md",
        "score": answerable,
        "answerable": answerable,
        "confidence": answerable,
        "hits": [],
    }


def test_a_reworded_search_never_puts_another_article_in_place_of_the_one_the_messages_words_found():
    state = {"query_embedding": [1.0], "search_count": 1, "articles": [_first_search("password", 0.4)]}
    found = [chunk("install the desktop app", doc_id="install", score=0.9)]
    out = turn_result(retrieve(support_state(state), _runtime(index=_FixedIndex(found)), {}))
    assert "articles" not in out  # the first search's article stays the one answered from


def test_a_reworded_search_that_finds_the_same_article_more_answerable_counts():
    state = {"query_embedding": [1.0], "search_count": 1, "articles": [_first_search("password", 0.4)]}
    found = [chunk("reset a forgotten password", doc_id="password", score=0.9)]
    out = turn_result(retrieve(support_state(state), _runtime(index=_FixedIndex(found)), {}))
    assert out["articles"][0]["doc_id"] == "password" and out["articles"][0]["answerable"] == 0.9
