"""Every reply path that shows a document's text reads it through the one port that takes the caller
(`LexicalIndex.document_chunks(doc_id, groups)`): a caller whose group was removed since an earlier answer
gets none of a restricted document's text by "the other one", "step 2", a walkthrough, the LLM's context or
a fact — with the real BM25 index holding the chunks, and the caller's groups from the run's config."""

from __future__ import annotations

import pytest
from langgraph.runtime import Runtime

from app.adapters.lexical_index import BM25Index
from app.adapters.redactor import PatternRedactor
from graphs.support import SupportContext, turn_result
from nodes.support.answer import answer
from nodes.support.article_answer import assess, composed_context, read_target
from nodes.support.troubleshoot import walkthrough
from tests.fakes import HashingEmbedder, InMemoryIndex, support_state
from tests.unit.test_lexical_index import chunk

SECRET_STEP = "Approve the push on the Kestrel hardware token"
PAYROLL = [
    chunk("pay", 0, "The payroll enclave does not connect.", title="Payroll VPN", section="Symptoms"),
    chunk(
        "pay",
        1,
        f"1. Open Secure Client and pick Kestrel-Payroll.\n2. {SECRET_STEP}.\n3. Wait for the gateway.",
        title="Payroll VPN",
        section="Resolution",
    ),
]
OFFICE = [
    chunk("vpn", 0, "The office VPN does not connect.", title="Office VPN", section="Symptoms"),
    chunk(
        "vpn",
        1,
        "1. Open Secure Client and pick Office.\n2. Sign in with your password.\n3. Wait for the gateway.",
        title="Office VPN",
        section="Resolution",
    ),
]
FINANCE = {"configurable": {"groups": ["finance"]}}
NO_GROUP: dict = {"configurable": {"groups": []}}


@pytest.fixture
def ctx():
    lexical = BM25Index()
    lexical.replace_document("pay", "v1", [dict(c, audience=["finance"], restricted=True) for c in PAYROLL])
    lexical.replace_document("vpn", "v1", [dict(c, restricted=False) for c in OFFICE])
    return SupportContext(
        embedder=HashingEmbedder(), index=InMemoryIndex(), redactor=PatternRedactor(), lexical=lexical, min_score=0.4
    )


def _retrieved(records, score):
    return [
        {k: r[k] for k in ("chunk_id", "doc_id", "title", "source", "section", "os", "chunk_index", "text")}
        | {"score": score - 0.01 * r["chunk_index"]}
        for r in records
    ]


def _turn(ctx, query, chunks):
    return {"query": query, "retrieved_chunks": chunks, "articles": assess(ctx, query, chunks), "search_count": 1}


ACTIVE_OFFICE_WITH_PAYROLL_RUNNER_UP = {
    "active_article": {
        "doc_id": "vpn",
        "title": "Office VPN",
        "source": "kb/vpn.md",
        "section": "Resolution",
        "runner_up": {"doc_id": "pay", "title": "Payroll VPN", "source": "kb/pay.md"},
    }
}


def test_the_port_returns_only_what_the_caller_may_read(ctx):
    assert [c["chunk_index"] for c in ctx.lexical.document_chunks("pay", frozenset({"finance"}))] == [0, 1]
    assert ctx.lexical.document_chunks("pay", frozenset()) == []
    assert len(ctx.lexical.document_chunks("vpn", frozenset())) == 2
    assert len(ctx.lexical.document_chunks("pay", None)) == 2  # the service's own reads (no caller)


def test_the_other_one_shows_a_restricted_runner_up_only_while_the_caller_is_in_its_audience(ctx):
    state = _turn(ctx, "the other one", []) | ACTIVE_OFFICE_WITH_PAYROLL_RUNNER_UP
    inside = turn_result(answer(support_state(state), Runtime(context=ctx), FINANCE))
    assert SECRET_STEP in inside["answer"]
    removed = turn_result(answer(support_state(state), Runtime(context=ctx), NO_GROUP))
    assert SECRET_STEP not in removed["answer"] and "Kestrel" not in removed["answer"]
    assert "pay" not in {s.get("doc_id") for s in removed["sources"]}


def test_a_step_reference_into_a_restricted_article_shows_nothing_once_the_group_is_gone(ctx):
    state = _turn(ctx, "what about step 2?", []) | {
        "active_article": {"doc_id": "pay", "title": "Payroll VPN", "source": "kb/pay.md", "section": "Resolution"}
    }
    inside = turn_result(answer(support_state(state), Runtime(context=ctx), FINANCE))
    assert SECRET_STEP in inside["answer"]
    removed = turn_result(answer(support_state(state), Runtime(context=ctx), NO_GROUP))
    assert SECRET_STEP not in removed["answer"] and "Kestrel" not in removed["answer"]


def test_reading_an_article_whole_walking_it_through_and_the_llm_context_respect_the_audience(ctx):
    # a restricted article that is the best match of this turn (e.g. found before the group was removed)
    state = support_state(_turn(ctx, "payroll enclave vpn does not connect", _retrieved(PAYROLL, 0.9)))
    assert read_target(state, ctx, groups=frozenset({"finance"})) is not None
    assert read_target(state, ctx, groups=frozenset()) is None
    steps, _, _ = walkthrough(state, ctx, frozenset({"finance"}))
    assert any(SECRET_STEP in s for s in steps)
    whole = composed_context(state, ctx, [], groups=frozenset({"finance"}))
    assert any(SECRET_STEP in c["text"] for c in whole)
    assert composed_context(state, ctx, [], groups=frozenset()) == []


def test_a_runner_up_offered_in_this_turn_is_read_with_the_callers_groups(ctx):
    # two equal fits, the second restricted: its line is read through the port with the caller's groups
    state = _turn(ctx, "the vpn does not connect", _retrieved(OFFICE, 0.6) + _retrieved(PAYROLL, 0.595))
    outside = turn_result(answer(support_state(state), Runtime(context=ctx), NO_GROUP))
    assert SECRET_STEP not in outside["answer"]
