"""One row per action (nodes/support/actions.py) and per dialogue act (nodes/support/dialogue_acts.py): every
other list is made from them, and adding one is one row and its function, driven here through the graph."""

import json
import re
import typing
import uuid

from langgraph.checkpoint.memory import InMemorySaver

from app.chat_service import REPLY_NODES, TOKEN_NODES
from graphs.support import Action, DialogueAct, SmallTalk, build_support_graph, turn_input, turn_result
from nodes.support import actions, dialogue_acts
from nodes.support.actions import ACTIONS, BUILTIN_NAMES, ActionRow, builtin_catalogue
from nodes.support.catalogue import ActionSpec
from nodes.support.dialogue_acts import _I, ACTS, ActSpec, _matches, _no_topic, act_spec, dialogue_act
from tests.fakes import ScriptedChatModel


def test_the_type_checkers_literals_name_exactly_the_registered_acts_and_actions():
    assert set(typing.get_args(DialogueAct)) == {""} | {spec.act for spec in ACTS}
    assert set(typing.get_args(SmallTalk)) == {""} | {spec.act for spec in ACTS if spec.small_talk}
    assert set(typing.get_args(Action)) == {row.name for row in ACTIONS}
    assert len({spec.act for spec in ACTS}) == len(ACTS) and len({row.node for row in ACTIONS}) == len(ACTIONS)


def test_the_graph_decides_into_every_registered_node_and_nothing_else():
    drawn = build_support_graph().get_graph()
    from_decide = {edge.target for edge in drawn.edges if edge.source == "decide"}
    assert from_decide == {row.node for row in ACTIONS}
    assert all(row.node in drawn.nodes for row in ACTIONS)


def test_the_decider_and_the_chat_service_read_their_lists_from_the_rows():
    assert BUILTIN_NAMES == tuple(row.name for row in ACTIONS if row.offer is not None)
    assert builtin_catalogue().names == BUILTIN_NAMES
    assert TOKEN_NODES == {"answer", "clarify", "use_integration"}
    assert REPLY_NODES == {
        "answer",
        "clarify",
        "converse",
        "troubleshoot",
        "ticket",
        "search_tickets",
        "use_integration",
        "localize",
    }


def test_every_act_is_answered_by_a_registered_action_and_a_converse_act_has_a_reply():
    for spec in ACTS:
        assert spec.handled_by in {row.name for row in ACTIONS}
        if spec.handled_by == "converse":
            assert spec.closes or spec.reply is not None, spec.act


def _conversation(context):
    graph = build_support_graph(InMemorySaver())
    config = {"configurable": {"thread_id": uuid.uuid4().hex}}

    def say(text: str) -> dict:
        return turn_result(graph.invoke(turn_input(text), config, context=context, durability="exit"))

    return say


def test_a_registered_dialogue_act_is_recognised_routed_and_answered_through_the_graph(monkeypatch, fake_kb_context):
    praise = ActSpec(  # the worked example of docs/architecture.md
        "praise",
        _matches(re.compile(r"\byou(?:'re| are) (?:great|awesome|the best)\b", _I), _no_topic),
        ("you're great, deskmate", "you are the best"),
        ("is the great firewall blocking my VPN?",),
        reply=lambda state, ctx: "Thank you! Anything else I can help with?",
        switches=True,
    )
    monkeypatch.setattr(dialogue_acts, "ACTS", (praise, *ACTS))
    assert [dialogue_act(text) for text in praise.examples] == ["praise", "praise"]
    assert not any(praise.holds(text) for text in praise.counter_examples) and act_spec("praise") is praise
    say = _conversation(fake_kb_context())
    first = say("my vpn is not working")
    assert first["action"] == "troubleshoot" and first["troubleshooting"]["status"] == "in_progress"
    out = say("you're great, deskmate")
    assert out["dialogue_act"] == "praise" and out["action"] == "converse" and out["search_count"] == 0
    assert out["answer"].startswith("Thank you! Anything else I can help with?")
    assert out["troubleshooting"]["status"] == "paused" and 'say "continue"' in out["answer"]  # it switches


def test_a_registered_action_is_offered_to_the_llm_chosen_and_carried_out_through_the_graph(
    monkeypatch, fake_kb_context
):
    def reset_password(state, runtime):
        return {"turn": {"answer": "I've sent a reset link to your phone.", "sources": [], "needs_input": False}}

    row = ActionRow(
        "reset_password",
        node="reset_password",
        step=reset_password,
        offer=ActionSpec("reset_password", "send the employee a password reset link", ("I forgot my password",)),
    )
    monkeypatch.setattr(actions, "ACTIONS", (*ACTIONS, row))
    llm = ScriptedChatModel([json.dumps({"action": "reset_password", "reasoning": "a reset is what they need"})])
    say = _conversation(fake_kb_context(llm=llm))
    out = say("I forgot my password for the laptop login")
    assert out["action"] == "reset_password" and out["decided_by"] == "llm"
    assert out["answer"] == "I've sent a reset link to your phone."
    decide_prompt = llm.history[0][-1].content
    assert "- reset_password: send the employee a password reset link" in decide_prompt
