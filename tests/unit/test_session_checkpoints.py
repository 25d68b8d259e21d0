"""What a conversation leaves in the SQLite session store (real SQLite, the compiled support graph)."""

import json
import sqlite3
import uuid

from langgraph.checkpoint.sqlite import SqliteSaver

from app.adapters.memory import LEGACY_TURN_CHANNELS, CompressedSerializer, SessionStore
from graphs.support import PER_TURN_CHANNELS, build_support_graph, turn_input, turn_result
from tests.conftest import FIXTURES


def _say(graph, session_id, context, text, user_os=None):
    return turn_result(
        graph.invoke(
            turn_input(text, user_os), {"configurable": {"thread_id": session_id}}, context=context, durability="exit"
        )
    )


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
    tmp_path, fake_kb_context
):
    context, session = fake_kb_context(), uuid.uuid4().hex
    sessions = SessionStore(tmp_path / "sessions.sqlite")
    first = _say(build_support_graph(sessions.checkpointer), session, context, "my vpn is not working")
    sessions.close()
    raw = sqlite3.connect(tmp_path / "sessions.sqlite")
    kind, blob = raw.execute("SELECT type, checkpoint FROM checkpoints WHERE thread_id = ?", (session,)).fetchone()
    raw.close()
    assert kind == "msgpack+z"
    saved = CompressedSerializer().loads_typed((kind, blob))
    # the reply lives on in the history; the turn record (the search, the decision, the reply) is not saved
    assert not PER_TURN_CHANNELS & set(saved["channel_values"]) and "messages" in saved["channel_values"]
    assert "turn" in saved["channel_versions"] and "intent" not in saved["channel_values"]
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
    config = {
        "configurable": {"thread_id": session, "user_id": "alice"},
        "metadata": {"deskmate_trace_id": "t" * 32, "langfuse_session_id": session},
    }
    graph.invoke(turn_input("how do I connect to the vpn"), config, context=context, durability="exit")
    raw = sqlite3.connect(tmp_path / "sessions.sqlite")
    [(metadata,)] = raw.execute("SELECT metadata FROM checkpoints WHERE thread_id = ?", (session,)).fetchall()
    raw.close()
    assert set(json.loads(metadata)) <= {"source", "step", "parents"} and "step" in json.loads(metadata)
    assert graph.invoke(turn_input("im on linux"), config, context=context, durability="exit")["user_os"] == "linux"
    sessions.close()


# Sessions saved by the flat state (every per-turn key its own channel), before the turn record, kept as they
# were written: tests/fixtures/checkpoints/. Both stopped at step 1 of the VPN walkthrough, OS windows.
def _copy_fixture(name, tmp_path):
    target = tmp_path / name
    target.write_bytes((FIXTURES / "checkpoints" / name).read_bytes())
    return target


def test_a_session_store_checkpoint_saved_by_the_flat_state_continues_its_walkthrough(tmp_path, fake_kb_context):
    context = fake_kb_context()
    sessions = SessionStore(_copy_fixture("flat-session-store.sqlite", tmp_path))
    graph = build_support_graph(sessions.checkpointer)
    config = {"configurable": {"thread_id": "flat-walkthrough"}}
    before = graph.get_state(config).values
    # the session comes back; the old flat per-turn values (the leaked `intent` among them) are not read
    assert before["troubleshooting"]["status"] == "in_progress" and before["troubleshooting"]["current"] == 0
    assert before["user_os"] == "windows" and before["turn_count"] == 1 and len(before["messages"]) == 2
    assert not before.get("turn") and "intent" not in before
    out = _say(graph, "flat-walkthrough", context, "still broken")
    assert out["action"] == "troubleshoot" and out["troubleshooting"]["current"] == 1
    assert "Step 2 of" in out["answer"] and out["search_count"] == 0 and out["confidence"] is None
    after = graph.get_state(config)
    assert after.values["turn_count"] == 2 and len(after.values["messages"]) == 4
    # saved again: without the flat state's channels, their versions or what each node saw of them
    saved = sessions.checkpointer.get_tuple(after.config).checkpoint
    assert not LEGACY_TURN_CHANNELS & (set(saved["channel_values"]) | set(saved["channel_versions"]))
    assert not any(LEGACY_TURN_CHANNELS & set(seen) for seen in saved["versions_seen"].values())
    sessions.close()


def test_a_langgraph_checkpoint_saved_by_the_flat_state_loads_and_continues(tmp_path, fake_kb_context):
    """LangGraph's own saver and serializer, every channel kept (as the Postgres saver keeps them)."""
    context = fake_kb_context()
    conn = sqlite3.connect(_copy_fixture("flat-langgraph-stock.sqlite", tmp_path), check_same_thread=False)
    stock = SqliteSaver(conn)
    config = {"configurable": {"thread_id": "flat-walkthrough"}}
    old = stock.get_tuple(config).checkpoint["channel_values"]
    assert old["action"] == "troubleshoot" and old["intent"] == "troubleshooting"  # the flat shape, as written
    graph = build_support_graph(stock)
    before = graph.get_state(config).values
    assert before["troubleshooting"]["current"] == 0 and not before.get("turn") and "action" not in before
    out = _say(graph, "flat-walkthrough", context, "still broken")
    assert out["action"] == "troubleshoot" and out["troubleshooting"]["current"] == 1
    assert out["search_count"] == 0 and out["retrieved_chunks"] == [] and out["question_type"] == ""
    conn.close()


def test_a_new_message_starts_from_a_fresh_turn_record_not_the_last_ones(tmp_path, fake_kb_context):
    context, session = fake_kb_context(), uuid.uuid4().hex
    graph = build_support_graph(SqliteSaver(sqlite3.connect(tmp_path / "s.sqlite", check_same_thread=False)))
    graph.checkpointer.setup()
    first = _say(graph, session, context, "my vpn is not working")
    assert first["search_count"] == 1 and first["retrieved_chunks"] and first["confidence"] is not None
    second = _say(graph, session, context, "it didn't help")  # a reply to the step: no search this time
    assert second["search_count"] == 0 and second["retrieved_chunks"] == [] and second["confidence"] is None
    assert second["question_type"] == "" and second["articles"] == []
    saved = graph.get_state({"configurable": {"thread_id": session}}).values["turn"]
    assert saved["search_count"] == 0 and saved["decision_reasoning"].startswith("reply to troubleshooting")
