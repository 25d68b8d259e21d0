"""Action selection through the compiled support graph: the decision LLM (scripted) sees only the actions
the catalogue offered for the message, and a proposal outside them is overruled by the policy."""

import re
import uuid

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from app.adapters.redactor import PatternRedactor
from graphs.support import SupportContext, build_support_graph, turn_input, turn_result
from nodes.support.actions import BUILTIN_ACTIONS, BUILTIN_NAMES
from nodes.support.catalogue import ActionCatalogue
from tests.conftest import index_fixture_kb
from tests.fakes import FakeStatusChecker, FakeTicketDesk, InMemoryIndex, ScriptedChatModel, status_report

VPN_QUESTION = "How do I connect to the VPN on my Mac?"


def decision(action: str) -> str:
    return f'{{"reasoning": "scripted", "action": "{action}"}}'


class DecidingModel(ScriptedChatModel):
    """Scripted decisions for the decide prompts; any other call (the answer step) gets a fixed reply, so
    the script does not depend on how many LLM calls the answer step makes."""

    def __init__(self, *actions: str) -> None:
        super().__init__([decision(a) for a in actions])

    def complete(self, messages, *, max_tokens=None):
        if messages[-1].content.startswith("Decide the next action"):
            return super().complete(messages, max_tokens=max_tokens)
        self.history.append(list(messages))
        return "Open Secure Client and click Connect [1]."


@pytest.fixture(scope="module")
def kb_index(real_embedder):
    index = InMemoryIndex()
    index_fixture_kb(real_embedder, index)
    return index


@pytest.fixture(scope="module")
def catalogue(real_embedder):
    return ActionCatalogue.build(real_embedder, BUILTIN_ACTIONS)


@pytest.fixture
def support(real_embedder, kb_index, catalogue):
    def factory(llm, **overrides) -> SupportContext:
        values = dict(
            embedder=real_embedder,
            index=kb_index,
            redactor=PatternRedactor(),
            llm=llm,
            status=FakeStatusChecker(status_report()),
            tickets=FakeTicketDesk(),
            actions=catalogue,
        )
        return SupportContext(**(values | overrides))

    return factory


class Conversation:
    def __init__(self, context):
        self.graph = build_support_graph(InMemorySaver())
        self.context = context
        self.config = {"configurable": {"thread_id": uuid.uuid4().hex, "user_id": "alice"}}

    def say(self, text):
        return turn_result(self.graph.invoke(turn_input(text), self.config, context=self.context, durability="exit"))


def decide_prompts(llm: ScriptedChatModel) -> list[str]:
    return [call[-1].content for call in llm.history if call[-1].content.startswith("Decide the next action")]


def listed_actions(prompt: str) -> list[str]:
    """The action names the decision prompt's AVAILABLE ACTIONS section lists."""
    section = prompt.split("### AVAILABLE ACTIONS", 1)[1].split("### RULES", 1)[0]
    return re.findall(r"^- (\w+):", section, re.M)


def test_the_decision_prompt_lists_only_the_actions_offered_for_the_message(support):
    llm = DecidingModel("answer")
    out = Conversation(support(llm)).say(VPN_QUESTION)
    assert out["action_selection"] == "embedding" and out["decided_by"] == "llm"
    (prompt,) = decide_prompts(llm)
    listed = listed_actions(prompt)
    assert listed == out["offered_actions"] and 3 <= len(listed) < len(BUILTIN_NAMES)
    for missing in set(BUILTIN_NAMES) - set(listed):
        assert f"- {missing}:" not in prompt


def test_an_llm_proposal_outside_the_offered_actions_falls_back_to_the_policy(support):
    llm = DecidingModel("search_tickets")
    out = Conversation(support(llm)).say(VPN_QUESTION)
    assert "search_tickets" not in out["offered_actions"]  # a how-to question is not about the user's tickets
    assert out["action"] == "answer" and out["decided_by"] == "policy"
    assert "'search_tickets', which was not offered" in out["decision_reasoning"]
    # the same proposal, with every action offered (no catalogue), is carried out: the offer made the difference
    unfiltered = DecidingModel("search_tickets")
    out = Conversation(support(unfiltered, actions=None)).say(VPN_QUESTION)
    assert out["action"] == "search_tickets" and out["decided_by"] == "llm" and out["offered_actions"] == []


def test_a_turn_keeps_its_offer_after_a_status_check_and_the_next_turn_chooses_again(support):
    llm = DecidingModel("check_status", "answer", "answer")
    chat = Conversation(support(llm))
    outage = chat.say("is there an outage right now")
    assert outage["status_checked"] and "check_status" in outage["offered_actions"]
    first, second = decide_prompts(llm)  # decide ran twice: before and after the status check
    assert listed_actions(first) == listed_actions(second) == outage["offered_actions"]
    # (a question about the caller's tickets is decided by the dialogue-act rules, without the LLM: a how-to
    # question is what lets the LLM choose again)
    question = chat.say(VPN_QUESTION)
    assert question["action_selection"] == "embedding" and "troubleshoot" in question["offered_actions"]
    assert listed_actions(decide_prompts(llm)[2]) == question["offered_actions"] != outage["offered_actions"]
    assert question["action"] == "answer" and question["decided_by"] == "llm"


def test_without_a_status_page_the_llm_is_never_offered_a_status_check(support):
    llm = DecidingModel("check_status", "answer")
    out = Conversation(support(llm, status=None)).say("is there an outage right now")
    assert out["action_selection"] == "embedding" and "check_status" not in out["offered_actions"]
    assert all("check_status" not in listed_actions(prompt) for prompt in decide_prompts(llm))
