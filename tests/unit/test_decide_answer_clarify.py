"""decide, answer and clarify with a scripted LLM and without one."""

import pytest
from langgraph.runtime import Runtime

from app.adapters.redactor import PatternRedactor
from core.errors import LLMError
from graphs.support import SupportContext, turn_result
from nodes.support.answer import answer, validate_citations
from nodes.support.clarify import clarify
from nodes.support.decide import Decision, decide, enforce_policy, parse_decision, policy_decision
from nodes.support.extractive import compose_answer
from tests.fakes import HashingEmbedder, InMemoryIndex, ScriptedChatModel, chunk, support_state

STEPS = "To connect:\n1. Open the client.\n2. Click Connect.\n3. Approve on your phone."


def _ctx(**overrides):
    values = dict(embedder=HashingEmbedder(), index=InMemoryIndex(), redactor=PatternRedactor(), min_score=0.4)
    values.update(overrides)
    return SupportContext(**values)


# --- decide ---------------------------------------------------------------------------------
def test_policy_answers_when_a_passage_is_confident():
    state = {"query": "vpn on mac", "retrieved_chunks": [chunk(STEPS, score=0.7)], "search_count": 1}
    assert policy_decision(support_state(state), _ctx()).action == "answer"


def test_policy_searches_again_while_budget_and_wordings_remain_then_answers():
    weak = {
        "query": "outlook freezing",
        "keywords": ["e-mail"],
        "retrieved_chunks": [chunk("x", score=0.2)],
        "search_count": 1,
        "tried_queries": ["outlook freezing"],
    }
    assert policy_decision(support_state(weak), _ctx()).action == "search_kb"
    spent = weak | {"search_count": 3}
    assert policy_decision(support_state(spent), _ctx()).action == "answer"


def test_policy_clarifies_vague_messages_but_not_forever():
    vague = {"query": "it's not working", "is_vague": True, "retrieved_chunks": []}
    assert policy_decision(support_state(vague), _ctx()).action == "clarify"
    assert policy_decision(support_state(vague | {"clarify_streak": 2}), _ctx()).action != "clarify"


def test_llm_decision_is_parsed_from_json_and_kept_with_its_reasoning():
    llm = ScriptedChatModel(['Sure! {"reasoning": "docs cover it", "action": "answer"}'])
    state = {"query": "vpn", "retrieved_chunks": [chunk(STEPS, score=0.7)], "search_count": 1}
    out = turn_result(decide(support_state(state), Runtime(context=_ctx(llm=llm)), {}))
    assert out == {"action": "answer", "decision_reasoning": "docs cover it", "decided_by": "llm"}
    assert "search_kb" in llm.history[0][1].content  # the prompt lists the allowed actions


def test_code_overrides_an_llm_that_wants_an_unknown_action_or_more_searches():
    state = {"query": "vpn", "retrieved_chunks": [chunk(STEPS, score=0.7)], "search_count": 3}
    assert enforce_policy(Decision("delete_everything", "", "llm"), support_state(state), _ctx()).action == "answer"
    assert enforce_policy(Decision("search_kb", "", "llm"), support_state(state), _ctx()).action == "answer"


def test_a_broken_llm_decision_falls_back_to_the_policy_and_says_so():
    llm = ScriptedChatModel(["I think you should answer"])  # no JSON
    state = {"query": "vpn", "retrieved_chunks": [chunk(STEPS, score=0.7)], "search_count": 1}
    out = turn_result(decide(support_state(state), Runtime(context=_ctx(llm=llm)), {}))
    assert out["action"] == "answer" and out["decided_by"] == "policy"
    assert "LLM unavailable" in out["decision_reasoning"] and out["fallback_notice"]


def test_parse_decision_rejects_replies_without_an_action():
    with pytest.raises(LLMError):
        parse_decision('{"reasoning": "hmm"}')


# --- answer ----------------------------------------------------------------------------------
def test_extractive_answer_quotes_steps_and_cites_the_source():
    text, sources = compose_answer("connect vpn", [chunk(STEPS, title="VPN", section="macOS", os="macos")], "macos")
    assert "1. Open the client.\n2. Click Connect.\n3. Approve on your phone." in text
    assert "[1] VPN › macOS — kb/doc.md" in text
    assert sources[0]["n"] == 1 and sources[0]["title"] == "VPN"


def test_extractive_answer_says_which_os_when_the_user_did_not():
    chunks = [
        chunk(STEPS, section="macOS", os="macos", score=0.8),
        chunk("1. a\n2. b", section="Windows", os="windows", score=0.7, chunk_index=3),
    ]
    text, _ = compose_answer("connect vpn", chunks, None)
    assert "These are the macOS steps. If you're on Windows, tell me." in text


def test_extractive_answer_continues_a_section_split_across_chunks():
    chunks = [
        chunk("1. first\n2. second", section="S", score=0.9, chunk_index=4),
        chunk("3. third\n4. fourth", section="S", score=0.5, chunk_index=5),
    ]
    text, _ = compose_answer("q", chunks, None)
    assert "2. second\n3. third" in text


def test_answer_admits_when_nothing_is_confident():
    state = {"query": "capital of France", "retrieved_chunks": [chunk("unrelated", title="Printers", score=0.35)]}
    out = turn_result(answer(support_state(state), Runtime(context=_ctx()), {}))
    assert "couldn't find this in the knowledge base" in out["answer"]
    assert "Printers" in out["answer"] and out["sources"] == []


def test_llm_answer_keeps_only_cited_sources():
    llm = ScriptedChatModel(["Open the client and click Connect [2]."])
    chunks = [
        chunk("other", score=0.8, chunk_index=0),
        chunk(STEPS, score=0.7, chunk_index=1, title="VPN", doc_id="d2", source="kb/vpn.md"),
    ]
    out = turn_result(
        answer(support_state({"query": "vpn", "retrieved_chunks": chunks}), Runtime(context=_ctx(llm=llm)), {})
    )
    assert [s["n"] for s in out["sources"]] == [2]
    assert '<source id="2"' in llm.history[0][1].content  # sources passed as delimited data


def test_llm_answer_citing_a_source_that_was_not_given_falls_back_to_extractive():
    llm = ScriptedChatModel(["Do this [7]."])
    out = turn_result(
        answer(
            support_state({"query": "vpn", "retrieved_chunks": [chunk(STEPS, score=0.7)]}),
            Runtime(context=_ctx(llm=llm)),
            {},
        )
    )
    assert out["fallback_notice"] and "1. Open the client." in out["answer"]


def test_llm_timeout_falls_back_to_extractive():
    llm = ScriptedChatModel([LLMError("timed out")])
    out = turn_result(
        answer(
            support_state({"query": "vpn", "retrieved_chunks": [chunk(STEPS, score=0.7)]}),
            Runtime(context=_ctx(llm=llm)),
            {},
        )
    )
    assert out["fallback_notice"] and "Sources:" in out["answer"]


def test_validate_citations():
    assert validate_citations("a [1] b [2]", 2) == [1, 2]
    with pytest.raises(LLMError):
        validate_citations("a [3]", 2)


# --- clarify ---------------------------------------------------------------------------------
def test_clarify_asks_one_specific_question_offline():
    noise = [chunk("a", title="Ticket priorities", score=0.7), chunk("b", title="Wi-Fi", score=0.6, doc_id="d2")]
    out = turn_result(
        clarify(
            support_state({"query": "it's not working", "is_vague": True, "retrieved_chunks": noise}),
            Runtime(context=_ctx()),
        )
    )
    assert out["is_clarifying"] and out["needs_input"]
    assert out["answer"].endswith("?") and "VPN" in out["answer"]


def test_clarify_offers_the_matching_articles_when_several_fit():
    chunks = [chunk("a", title="VPN setup", score=0.5), chunk("b", title="Wi-Fi", score=0.45, doc_id="d2")]
    out = turn_result(
        clarify(support_state({"query": "connection broken", "retrieved_chunks": chunks}), Runtime(context=_ctx()))
    )
    assert out["answer"] == "To point you to the right steps: is this about VPN setup or Wi-Fi?"


def test_clarify_rejects_a_generic_llm_question():
    llm = ScriptedChatModel(["Can you provide more details?"])
    out = turn_result(
        clarify(support_state({"query": "it broke", "retrieved_chunks": []}), Runtime(context=_ctx(llm=llm)))
    )
    assert out["answer"] != "Can you provide more details?" and out["fallback_notice"]


def test_a_short_message_naming_another_machine_is_no_reply_to_the_step():
    from nodes.support.decide import names_another_machine

    assert names_another_machine("and on my mac?", "windows")
    assert names_another_machine("I'm on linux", "")
    assert not names_another_machine("I'm on windows", "windows")
    assert not names_another_machine("I restarted the mac and the vpn still drops every hour", "windows")
