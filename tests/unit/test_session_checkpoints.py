"""What a conversation leaves in the SQLite session store (real SQLite, the compiled support graph)."""

import json
import sqlite3
import uuid

from langgraph.checkpoint.sqlite import SqliteSaver

from app.adapters.memory import CompressedSerializer, SessionStore
from graphs.state import TURN_KEYS, turn_input
from graphs.support import build_support_graph


def _say(graph, session_id, context, text, user_os=None):
    return graph.invoke(turn_input(text, user_os), {"configurable": {"thread_id": session_id}}, context=context,
                        durability="exit")


def test_a_saved_conversation_versions_its_channels_with_small_integers_and_resumes(tmp_path, fake_kb_context):
    context, session = fake_kb_context(), uuid.uuid4().hex
    sessions = SessionStore(tmp_path / "sessions.sqlite")
    _say(build_support_graph(sessions.checkpointer), session, context, "how do I connect to the vpn")
    sessions.close()
    sessions = SessionStore(tmp_path / "sessions.sqlite")  # a restart: the next turn reads the saved one
    graph = build_support_graph(sessions.checkpointer)
    out = _say(graph, session, context, "im on linux")
    assert "sudo openconnect vpn.example.test" in out["answer"]
    latest = graph.get_state({"configurable": {"thread_id": session}}).config
    saved = sessions.checkpointer.get_tuple(latest).checkpoint
    assert saved["channel_versions"] and all(isinstance(v, int) for v in saved["channel_versions"].values())
    sessions.close()


def test_a_session_saved_with_string_versions_continues_where_it_was(tmp_path, fake_kb_context):
    context, session = fake_kb_context(), uuid.uuid4().hex
    conn = sqlite3.connect(tmp_path / "sessions.sqlite", check_same_thread=False)
    stock = SqliteSaver(conn)  # how every session was saved before
    stock.setup()
    _say(build_support_graph(stock), session, context, "how do I connect to the vpn")
    conn.close()
    sessions = SessionStore(tmp_path / "sessions.sqlite")
    graph = build_support_graph(sessions.checkpointer)
    out = _say(graph, session, context, "im on linux")
    assert "sudo openconnect vpn.example.test" in out["answer"]
    state = graph.get_state({"configurable": {"thread_id": session}})
    assert state.values["turn_count"] == 2 and state.values["active_topic"] == "how do I connect to the vpn"
    saved = sessions.checkpointer.get_tuple(state.config).checkpoint
    assert all(isinstance(v, str) for v in saved["channel_versions"].values())
    sessions.close()


def test_a_saved_session_keeps_only_its_own_channels_compressed_and_continues_a_troubleshooting_flow(
        tmp_path, fake_kb_context):
    context, session = fake_kb_context(), uuid.uuid4().hex
    sessions = SessionStore(tmp_path / "sessions.sqlite")
    first = _say(build_support_graph(sessions.checkpointer), session, context, "my vpn is not working")
    sessions.close()
    raw = sqlite3.connect(tmp_path / "sessions.sqlite")
    kind, blob = raw.execute("SELECT type, checkpoint FROM checkpoints WHERE thread_id = ?", (session,)).fetchone()
    raw.close()
    assert kind == "msgpack+z"
    saved = CompressedSerializer().loads_typed((kind, blob))
    # the reply lives on in the history; the search, the decision and the reply's own channel are not saved
    assert not TURN_KEYS & set(saved["channel_values"]) and "messages" in saved["channel_values"]
    assert {"retrieved_chunks", "answer", "decision_reasoning"} <= set(saved["channel_versions"])
    sessions = SessionStore(tmp_path / "sessions.sqlite")  # a restart
    graph = build_support_graph(sessions.checkpointer)
    out = _say(graph, session, context, "it still does not work")
    assert first["action"] == out["action"] == "troubleshoot"
    assert out["troubleshooting"]["current"] == first["troubleshooting"]["current"] + 1
    state = graph.get_state({"configurable": {"thread_id": session}}).values
    assert state["turn_count"] == 2 and [m.type for m in state["messages"]] == ["human", "ai", "human", "ai"]
    assert state["messages"][-1].content == out["answer"]
    sessions.close()


def test_a_saved_checkpoint_carries_no_copy_of_the_runs_tracing_metadata(tmp_path, fake_kb_context):
    context, session = fake_kb_context(), uuid.uuid4().hex
    sessions = SessionStore(tmp_path / "sessions.sqlite")
    graph = build_support_graph(sessions.checkpointer)
    config = {"configurable": {"thread_id": session, "user_id": "alice"},
              "metadata": {"deskmate_trace_id": "t" * 32, "langfuse_session_id": session}}
    graph.invoke(turn_input("how do I connect to the vpn"), config, context=context, durability="exit")
    raw = sqlite3.connect(tmp_path / "sessions.sqlite")
    [(metadata,)] = raw.execute("SELECT metadata FROM checkpoints WHERE thread_id = ?", (session,)).fetchall()
    raw.close()
    assert set(json.loads(metadata)) <= {"source", "step", "parents"} and "step" in json.loads(metadata)
    assert graph.invoke(turn_input("im on linux"), config, context=context, durability="exit")["user_os"] == "linux"
    sessions.close()
