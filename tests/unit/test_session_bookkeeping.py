"""The session store's per-turn bookkeeping: owning a new conversation, and what a finished turn leaves."""

from __future__ import annotations

from sqlalchemy import select, text

from app.adapters.memory import SessionStore


def test_a_freshly_drawn_session_id_belongs_to_its_caller_and_to_nobody_else(tmp_path):
    sessions = SessionStore(tmp_path / "sessions.sqlite")
    try:
        assert sessions.claim("s-new", "alice", minted=True)
        assert sessions.owner("s-new") == "alice"
        assert not sessions.claim("s-new", "bob")
        # an id claimed as freshly drawn that is in fact taken is looked up, never handed over
        assert not sessions.claim("s-new", "bob", minted=True)
        assert sessions.claim("s-new", "alice", minted=True)
        assert sessions.owner("s-new") == "alice"
    finally:
        sessions.close()


def test_a_finished_turn_forgets_the_aliases_of_its_session_and_only_those(tmp_path):
    sessions = SessionStore(tmp_path / "sessions.sqlite")
    try:
        sessions.add_alias("fp-1", "s-1")
        sessions.add_alias("fp-2", "s-2")
        sessions.after_turn("s-1")
        assert sessions.find_alias("fp-1") is None
        assert sessions.find_alias("fp-2") == "s-2"
    finally:
        sessions.close()


def test_the_first_turn_of_a_new_session_notes_its_time_and_keeps_its_one_checkpoint(tmp_path, fake_kb_context):
    from app.storage.schema import session_activity
    from graphs.support import build_support_graph, turn_input

    sessions = SessionStore(tmp_path / "sessions.sqlite")
    try:
        graph = build_support_graph(checkpointer=sessions.checkpointer)
        config = {"configurable": {"thread_id": "s-new"}}
        graph.invoke(turn_input("how do I connect to the vpn"), config, context=fake_kb_context(), durability="exit")
        sessions.after_turn("s-new", new=True)
        assert sessions.count() == 1
        with sessions.checkpoint_db.connect() as conn:  # the run wrote one checkpoint: nothing to prune
            assert conn.execute(text("SELECT COUNT(*) FROM checkpoints WHERE thread_id = 's-new'")).scalar() == 1
        with sessions.db.connect() as conn:
            assert conn.execute(select(session_activity.c.thread_id)).scalars().all() == ["s-new"]
        # its next turn is pruned as every other: one checkpoint again
        graph.invoke(turn_input("and on a mac?"), config, context=fake_kb_context(), durability="exit")
        sessions.after_turn("s-new")
        with sessions.checkpoint_db.connect() as conn:
            assert conn.execute(text("SELECT COUNT(*) FROM checkpoints WHERE thread_id = 's-new'")).scalar() == 1
    finally:
        sessions.close()
