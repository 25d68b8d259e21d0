"""The turn record (graphs/support.py): one type, its fresh values defined once beside it, and what is derived
from the two — the graph's input and output, the flat turn result, the chat envelope."""

import types
import typing

from langgraph.types import Overwrite

from app.chat_service import ENVELOPE_ONLY_FIELDS, ChatTurn, envelope
from app.schemas import ChatResponse
from graphs.support import (
    SESSION_KEYS,
    TURN_DEFAULTS,
    Session,
    SupportInput,
    SupportOutput,
    SupportState,
    Turn,
    TurnResult,
    build_support_graph,
    fresh_turn,
    merge_turn,
    turn_input,
    turn_result,
)


def test_the_fresh_turn_defines_every_key_of_the_turn_type_and_nothing_else():
    assert set(TURN_DEFAULTS) == set(Turn.__annotations__)
    assert Turn.__required_keys__ == frozenset(Turn.__annotations__)  # a literal missing a key is a type error too


def _conforms(value, hint) -> bool:
    """`value` is of the annotated type: plain types, None, Literal, unions, list[...] and dict / TypedDict."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint is type(None) or hint is None:
        return value is None
    if origin is typing.Literal:
        return value in args
    if origin in (typing.Union, types.UnionType):
        return any(_conforms(value, arg) for arg in args)
    if origin is list:
        return isinstance(value, list) and all(_conforms(item, args[0]) for item in value)
    if origin is dict or typing.is_typeddict(hint):
        return isinstance(value, dict)
    if hint is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, hint)


def test_every_fresh_value_has_the_type_its_key_declares():
    hints = typing.get_type_hints(Turn)
    assert {key: value for key, value in TURN_DEFAULTS.items() if not _conforms(value, hints[key])} == {}
    assert not _conforms("0", hints["search_count"]) and not _conforms("maybe", hints["intent"])  # it can fail


def test_the_session_and_the_turn_share_no_key():
    assert not SESSION_KEYS & set(Turn.__annotations__)
    assert "turn" not in SESSION_KEYS and "messages" not in SESSION_KEYS


def test_the_graphs_input_and_output_are_the_turn_record_and_the_session():
    graph = build_support_graph()
    assert set(typing.get_type_hints(SupportInput)) == {"turn", "user_os"}
    assert set(typing.get_type_hints(SupportOutput)) == {"turn"} | set(Session.__annotations__)
    assert set(typing.get_type_hints(SupportState)) == {"turn", "messages"} | set(Session.__annotations__)
    assert set(graph.output_channels) == {"turn"} | SESSION_KEYS
    assert set(TurnResult.__annotations__) == set(Turn.__annotations__) | SESSION_KEYS


def test_a_new_message_replaces_the_whole_record_and_a_step_merges_its_keys():
    last = {**TURN_DEFAULTS, "query": "my vpn drops", "intent": "troubleshooting", "search_count": 2}
    assert merge_turn(last, {"answer": "Step 1"}) == {**last, "answer": "Step 1"}
    update = turn_input("thanks", "linux", {"context_type": ["how-to"]}, response_mode="RAG_ONLY")
    assert isinstance(update["turn"], Overwrite) and update["user_os"] == "linux"
    assert update["turn"].value == {
        **TURN_DEFAULTS,
        "query": "thanks",
        "search_filters": {"context_type": ["how-to"]},
        "response_mode": "RAG_ONLY",
    }
    assert fresh_turn("hi")["intent"] == "informative" and "user_os" not in turn_input("hi")


def test_a_turn_result_reads_the_turn_record_and_the_session_flat():
    output = {"turn": {**TURN_DEFAULTS, "answer": "Done"}, "user_os": "macos", "turn_count": 3}
    flat = turn_result(output)
    assert flat["answer"] == "Done" and flat["user_os"] == "macos" and flat["turn_count"] == 3 and "turn" not in flat


def test_every_envelope_field_is_a_turn_or_session_key_or_one_the_service_adds():
    known = set(Turn.__annotations__) | SESSION_KEYS | ENVELOPE_ONLY_FIELDS
    assert set(ChatResponse.model_fields) - known == set()


def test_the_envelope_copies_the_turn_record_and_shapes_the_session():
    flow = {
        "issue": "VPN drops",
        "topic": "vpn",
        "steps": [{"step": "Restart", "outcome": "failed"}, {"step": "Reinstall", "outcome": "pending"}],
        "current": 1,
        "failed": 1,
        "asked_outcome": False,
        "status": "in_progress",
        "source": {},
        "os": "",
    }
    out = turn_result(
        {
            "turn": {**TURN_DEFAULTS, "answer": "Step 2", "action": "troubleshoot", "answer_policy": {"rule": "x"}},
            "troubleshooting": flow,
            "user_os": "windows",
        }
    )
    reply = envelope(ChatTurn("s1", "t" * 32, out, warnings=("ignored",)))
    assert reply.answer == "Step 2" and reply.action == "troubleshoot" and reply.user_os == "windows"
    assert (reply.troubleshooting.step, reply.troubleshooting.total) == (2, 2)
    assert reply.answer_path is None and reply.integration is None and reply.question_type is None  # "" → null
    assert reply.answer_policy is None and reply.directive_warnings == ["ignored"]  # without debug: no policy
    assert envelope(ChatTurn("s1", "t" * 32, out, debug=True)).answer_policy == {"rule": "x"}
