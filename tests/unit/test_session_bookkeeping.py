"""The session store's per-turn bookkeeping: owning a new conversation, and what a finished turn leaves."""

from __future__ import annotations

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
