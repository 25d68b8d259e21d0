"""Whole conversations through the compiled support graph (fake embedder, in-memory index, memory saver)."""

import uuid

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from graphs.support import build_support_graph, route_decision, turn_input, turn_result
from tests.fakes import ScriptedChatModel


class Conversation:
    def __init__(self, context):
        self.graph = build_support_graph(InMemorySaver())
        self.context = context
        self.config = {"configurable": {"thread_id": uuid.uuid4().hex}}

    def say(self, text, user_os=None):
        return turn_result(
            self.graph.invoke(turn_input(text, user_os), self.config, context=self.context, durability="exit")
        )

    def state(self):
        values = self.graph.get_state(self.config).values
        return {**values, **values.get("turn", {})}


def test_a_how_to_question_gets_cited_steps_for_the_users_os(fake_kb_context):
    chat = Conversation(fake_kb_context())
    out = chat.say("How do I connect to the VPN on my Mac?")
    assert out["action"] == "answer" and out["user_os"] == "macos"
    assert "Enter the number shown on your Mac" in out["answer"]
    assert "sudo openconnect" not in out["answer"]
    assert out["sources"][0]["source"] == "kb/vpn-connect.md"


def test_a_short_follow_up_continues_the_previous_topic(fake_kb_context):
    chat = Conversation(fake_kb_context())
    chat.say("how do I connect to the vpn")
    out = chat.say("im on linux")
    assert out["user_os"] == "linux"
    assert "sudo openconnect vpn.example.test" in out["answer"]
    assert chat.state()["active_topic"] == "how do I connect to the vpn"


def test_the_os_stated_once_is_remembered_for_later_questions(fake_kb_context):
    chat = Conversation(fake_kb_context())
    chat.say("hi", user_os="windows")
    out = chat.say("how do I connect to the vpn")
    assert "Start menu" in out["answer"]


def test_a_vague_message_gets_one_clarifying_question_then_an_answer(fake_kb_context):
    chat = Conversation(fake_kb_context())
    first = chat.say("It's not working")
    assert first["action"] == "clarify" and first["needs_input"] and first["answer"].endswith("?")
    second = chat.say("the door badge process at reception")
    assert second["action"] == "answer" and "Report the lost badge at reception" in second["answer"]


def test_an_unknown_topic_is_searched_at_most_three_times_then_admitted(fake_kb_context):
    chat = Conversation(fake_kb_context(min_score=0.9))
    out = chat.say("what is the capital of France")
    assert out["search_count"] <= 3
    assert "outside what I can help with" in out["answer"]  # not IT, and nothing found: what the help desk does
    assert out["sources"] == []


def test_an_it_question_the_knowledge_base_does_not_answer_says_what_it_searched_for(fake_kb_context):
    chat = Conversation(fake_kb_context(min_score=0.9))
    out = chat.say("how do I change the wallpaper on my laptop")
    assert out["search_count"] <= 3 and out["sources"] == []
    assert "couldn't find this in the knowledge base" in out["answer"] and "I searched for" in out["answer"]


def test_small_talk_skips_the_search(fake_kb_context):
    context = fake_kb_context()
    calls_before = len(context.embedder.calls)
    out = Conversation(context).say("thanks!")
    assert out["action"] == "converse" and "welcome" in out["answer"]
    assert len(context.embedder.calls) == calls_before


def test_a_password_is_redacted_before_memory_and_the_notice_is_shown(fake_kb_context):
    chat = Conversation(fake_kb_context())
    out = chat.say("My password abc123 doesn't work for the VPN")
    assert out["redaction_notice"] and out["answer"].startswith("⚠️")
    remembered = " ".join(str(m.content) for m in chat.state()["messages"])
    assert "abc123" not in remembered and "[REDACTED:PASSWORD]" in remembered


def test_with_an_llm_the_decision_and_answer_come_from_it(fake_kb_context):
    llm = ScriptedChatModel(
        ['{"reasoning": "the VPN doc covers it", "action": "answer"}', "Open Secure Client and click Connect [1]."]
    )
    out = Conversation(fake_kb_context(llm=llm)).say("How do I connect to the VPN on my Mac?")
    assert out["decided_by"] == "llm" and out["decision_reasoning"] == "the VPN doc covers it"
    assert out["answer"].startswith("Open Secure Client and click Connect [1].")
    assert out["fallback_notice"] is None


def test_an_llm_that_fails_once_is_not_asked_again_in_the_same_turn(fake_kb_context):
    from core.errors import LLMError

    llm = ScriptedChatModel([LLMError("HTTP 500")])
    out = Conversation(fake_kb_context(llm=llm)).say("How do I connect to the VPN on my Mac?")
    assert len(llm.history) == 1
    assert out["fallback_notice"] and "Enter the number shown on your Mac" in out["answer"]


def test_history_is_bounded(fake_kb_context):
    chat = Conversation(fake_kb_context(history_turns=2))
    for question in ["hi", "how do I connect to the vpn", "thanks", "what about expenses"]:
        chat.say(question)
    assert len(chat.state()["messages"]) == 4


def test_routing_refuses_an_action_it_cannot_carry_out():
    with pytest.raises(ValueError):
        route_decision({"turn": {"action": "delete_everything"}})


def test_the_saved_turn_keeps_its_search_as_ids_titles_and_scores_and_a_follow_up_still_answers(fake_kb_context):
    chat = Conversation(fake_kb_context())
    out = chat.say("how do I connect to the vpn")
    saved = chat.state()
    assert saved["retrieved_chunks"] and saved["articles"]
    # no chunk bodies, document context or per-article hits wait in the checkpoint for the next message
    assert all(
        set(c) <= {"chunk_id", "doc_id", "title", "section", "score", "content_hash"} for c in saved["retrieved_chunks"]
    )
    assert all("hits" not in a for a in saved["articles"])
    # the turn's output has the same compact rows: the cited chunks are still among them for feedback
    assert {s["chunk_id"] for s in out["sources"]} <= {c["chunk_id"] for c in out["retrieved_chunks"]}
    follow_up = chat.say("im on linux")
    assert "sudo openconnect vpn.example.test" in follow_up["answer"]
    assert follow_up["retrieved_chunks"] and not any("text" in c for c in follow_up["retrieved_chunks"])


@pytest.mark.parametrize("follow_up", ["and on my mac?", "I'm on linux"])
def test_an_os_named_after_a_walkthrough_restarts_the_same_problem_for_that_machine(fake_kb_context, follow_up):
    chat = Conversation(fake_kb_context())
    first = chat.say("My VPN keeps disconnecting", user_os="windows")
    assert first["action"] == "troubleshoot" and first["troubleshooting"]["current"] == 0
    assert chat.say("still broken")["troubleshooting"]["current"] == 1
    out = chat.say(follow_up)
    assert out["action"] == "troubleshoot" and out["sources"][0]["source"] == "kb/vpn-connect.md"
    assert out["troubleshooting"]["current"] == 0 and out["troubleshooting"]["status"] == "in_progress"
    assert out["user_os"] in ("macos", "linux") and "**Step 1 of 3:**" in out["answer"]
    assert chat.state()["active_topic"] == "My VPN keeps disconnecting"


def test_an_os_named_after_an_answer_answers_the_same_question_for_it(fake_kb_context):
    chat = Conversation(fake_kb_context())
    chat.say("how do I connect to the vpn", user_os="windows")
    out = chat.say("and on my mac?")
    assert out["action"] == "answer" and "Enter the number shown on your Mac" in out["answer"]
