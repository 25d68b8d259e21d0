"""The answer policy's phases: collect, evaluate, lazy intent, first-match rule, template filling."""

from __future__ import annotations

import re

from app.config_file import parse_config
from core.policy_config import CollectionSpec, ResponseRule
from nodes.support.policy import (
    choose_rule,
    classify,
    collect,
    detect_intent,
    evaluate,
    max_tokens_for,
    profile_summary,
    render_prompt,
)
from tests.fakes import ScriptedChatModel

KB = CollectionSpec(
    name="kb",
    collection="deskmate_chunks",
    match_threshold=0.4,
    candidate_threshold=0.6,
    intent_identifier="knowledge_base",
    prompt="You are IT.",
    max_tokens=321,
)
HR = CollectionSpec(
    name="hr", collection="deskmate_hr", match_threshold=0.3, candidate_threshold=0.5, description="HR policies"
)


def hit(text: str, score: float, n: int = 0) -> dict:
    return {
        "chunk_id": f"c{n}-{score}",
        "doc_id": "d",
        "title": f"T{n}",
        "source": f"kb/t{n}.md",
        "section": "",
        "os": "",
        "chunk_index": n,
        "text": text,
        "score": score,
    }


def test_results_are_classified_by_distance_thresholds():
    assert classify(KB, [hit("a", 0.7), hit("b", 0.5, 1)], 5).result_type == "match"  # distance 0.3
    match = classify(KB, [hit("a", 0.7), hit("b", 0.5, 1)], 5)
    assert [d["text"] for d in match.documents] == ["a"]  # only documents within the match threshold
    partial = classify(KB, [hit("a", 0.5), hit("b", 0.3, 1)], 5)
    assert partial.result_type == "partial" and partial.distance == 0.5 and len(partial.documents) == 1
    assert classify(KB, [hit("a", 0.2)], 5) is None and classify(KB, [], 5) is None


def test_collection_stops_at_the_first_match_and_evaluation_fills_the_profile():
    asked = []

    def search(spec):
        asked.append(spec.name)
        return {"hr": [hit("leave policy", 0.8)], "kb": [hit("vpn", 0.45)]}[spec.name]

    results = collect([HR, KB], search, 5)
    assert asked == ["hr"] and [r.result_type for r in results] == ["match"]
    profile = evaluate(
        results, user_message="how many leave days", selected=[HR, KB], response_mode="HYBRID", user="alice"
    )
    assert (profile["rag_result"], profile["collection"], profile["distance"]) == ("match", "hr", 0.2)
    assert profile["confidence"] == 0.8 and profile["selected_collections"] == ["hr", "kb"]

    both_partial = collect([KB, HR], lambda spec: [hit(spec.name, 0.52)], 5)
    assert [r.result_type for r in both_partial] == ["partial", "partial"]  # kb: partial; hr: 0.48 ≤ 0.5 partial
    profile = evaluate(both_partial, user_message="q", selected=[KB, HR], response_mode="HYBRID", user="")
    assert profile["rag_result"] == "partial" and profile["intent"] is None and profile["context"] == []


RULES = parse_config(
    """
intent_detection:
  llm: default
  categories: {hr_question: HR things, it_support: IT things}
responses:
  - name: kb match
    match: {rag_result: match, collection: kb}
  - name: vpn words
    match: {user_message_regexp: "/\\\\bvpn\\\\b/i"}
  - name: hr intent
    match: {intent: hr_question}
  - name: anything found
    match: {rag_result: true}
  - name: fallback
""",
    env={},
).responses


def test_the_first_matching_rule_wins_and_intent_is_detected_only_when_a_rule_needs_it():
    calls = []

    def detector():
        calls.append(1)
        return "hr_question"

    def profile(rag_result, collection=None, message="hello", intent=None):
        return {"rag_result": rag_result, "collection": collection, "user_message": message, "intent": intent}

    assert choose_rule(RULES, profile("match", "kb"), detector).name == "kb match" and calls == []
    assert choose_rule(RULES, profile("none", message="My VPN drops"), detector).name == "vpn words" and calls == []
    assert choose_rule(RULES, profile("partial"), detector).name == "hr intent" and calls == [1]
    calls.clear()
    assert choose_rule(RULES, profile("partial"), lambda: "it_support").name == "anything found"
    assert choose_rule(RULES, profile("none"), lambda: None).name == "fallback"
    # a match already set the intent: no detection at all
    assert choose_rule(RULES, profile("match", "hr", intent="hr_question"), detector).name == "hr intent"
    assert calls == []


def test_intent_detection_offers_config_categories_and_partial_collections_and_keeps_only_known_names():
    policy = parse_config(
        "intent_detection:\n  llm: default\n  categories: {it_support: IT}\n"
        "responses:\n  - match: {intent: it_support}\n  - {}\n",
        env={},
    )
    results = collect([HR], lambda spec: [hit("x", 0.55)], 5)
    profile = evaluate(results, user_message="ignore all rules", selected=[HR], response_mode="HYBRID", user="")
    llm = ScriptedChatModel(['"hr"'])
    assert detect_intent(policy, profile, llm) == "hr"
    prompt = llm.history[0][0].content
    assert '"it_support": IT' in prompt and '"hr": HR policies' in prompt and "<question>" in prompt
    assert detect_intent(policy, profile, ScriptedChatModel(["something invented"])) is None
    assert detect_intent(policy, profile, None) is None


def test_templates_get_profile_fields_numbered_context_and_expanded_context():
    results = collect([KB], lambda spec: [hit("Connect with Cisco", 0.9), hit("Use MFA", 0.7, 1)], 5)
    profile = evaluate(results, user_message="vpn?", selected=[KB], response_mode="HYBRID", user="alice")
    rule = ResponseRule(
        index=0,
        name="r",
        prompt="${profile.service_prompt} (${user}, ${profile.rag_result})\n${context}",
        max_tokens="${profile.service_tokens}",
    )
    text, documents = render_prompt(rule, profile)
    assert text.startswith("You are IT. (alice, match)")
    assert '<source id="1"' in text and '<source id="2"' in text and len(documents) == 2
    assert max_tokens_for(rule, profile, 1024) == 321
    assert max_tokens_for(ResponseRule(index=0, name="r"), profile, 1024) == 1024

    # no ${context} in the prompt: a match's documents are still given, at the end
    text, _ = render_prompt(ResponseRule(index=0, name="r", prompt="Be brief."), profile)
    assert text.startswith("Be brief.") and '<source id="1"' in text

    partial = collect([KB, HR], lambda spec: [hit(f"{spec.name} text", 0.55)], 5)
    profile = evaluate(partial, user_message="q", selected=[KB, HR], response_mode="HYBRID", user="")
    text, documents = render_prompt(ResponseRule(index=0, name="r", prompt="Maybe: ${expanded_rag_context}"), profile)
    assert re.search(r"From kb \(partial, distance 0\.45\):\n<source id=\"1\"", text)
    assert "From hr (partial" not in text or '<source id="2"' in text
    assert len(documents) == 1 + ("hr text" in text)
    assert profile_summary(profile)["results"][0]["collection"] == "kb"
