"""The relational store on both engines: migrations, and replicas (two Database instances on one Postgres
database, as two `deskmate serve` processes have) that see each other's tickets, votes, traces and sessions."""

from __future__ import annotations

import threading
import time

import pytest
from alembic.script import ScriptDirectory
from sqlalchemy import inspect

from app.adapters.feedback import CitedChunk, FeedbackStore
from app.adapters.memory import SessionStore
from app.adapters.redactor import PatternRedactor
from app.adapters.ticket_store import TicketStore
from app.adapters.traces import RecordingTracer, TraceStore
from app.adapters.tracing import NullTracer
from app.chat_service import ChatService
from app.storage import Database, SessionBusy
from app.storage.database import MIGRATIONS
from app.storage.schema import metadata
from graphs.support import build_support_graph
from tests.fakes import HashingEmbedder
from tests.unit.test_ticket_store import draft

EMBED = HashingEmbedder().embed_query
HEAD = ScriptDirectory(str(MIGRATIONS)).get_current_head()


def replica(url: str, tmp_path, name: str) -> dict:
    """What one `deskmate serve` builds over the database: its own engine, pools and stores."""
    db = Database.open(url)
    sessions = SessionStore(db, checkpoints=tmp_path / f"{name}-sessions.sqlite", lock_wait_s=0.5)
    traces = TraceStore(db, redactor=PatternRedactor())
    return {
        "db": db,
        "sessions": sessions,
        "traces": traces,
        "tickets": TicketStore(db),
        "feedback": FeedbackStore(db, embed=EMBED, min_votes=1, max_multiplier=2.0, similarity=0.0),
    }


def close(stores: dict) -> None:
    stores["traces"].close()
    stores["sessions"].close()
    stores["db"].close()


@pytest.fixture
def two_replicas(postgres_url, tmp_path):
    a, b = replica(postgres_url, tmp_path, "a"), replica(postgres_url, tmp_path, "b")
    yield a, b
    close(a)
    close(b)


def test_the_migrations_create_exactly_the_tables_and_columns_the_schema_declares(database_url):
    db = Database.open(database_url)
    try:
        found = inspect(db.engine)
        tables = set(found.get_table_names()) - {"alembic_version"}
        assert tables == set(metadata.tables)
        for name, table in metadata.tables.items():
            assert {c["name"] for c in found.get_columns(name)} == {c.name for c in table.columns}, name
        assert db.revision() == HEAD
        assert db.upgrade() == HEAD  # a second run (the next start-up) changes nothing
    finally:
        db.close()


def test_two_replicas_starting_together_migrate_the_database_once(postgres_url):
    errors, revisions = [], []

    def start():
        try:
            db = Database.open(postgres_url)
            revisions.append(db.revision())
            db.close()
        except Exception as exc:  # noqa: BLE001 - the assertion below shows it
            errors.append(exc)

    threads = [threading.Thread(target=start) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert errors == [] and revisions == [HEAD] * 3


def test_a_ticket_raised_on_one_replica_is_found_and_closed_on_the_other(two_replicas):
    a, b = two_replicas
    ticket = a["tickets"].create(draft(), session_id="s-1", user_id="alice")
    found = b["tickets"].list(session_id="s-1", status="open")
    assert [t["id"] for t in found] == [ticket["id"]]
    closed = b["tickets"].close(ticket["id"], "works now")
    assert closed["status"] == "closed" and closed["comments"] == ["works now"]
    assert a["tickets"].get(ticket["id"])["status"] == "closed"


def test_a_vote_on_one_replica_for_an_answer_given_on_the_other_counts(two_replicas):
    a, b = two_replicas
    chunk = CitedChunk(key="doc:abc", chunk_id="c1", label="VPN › Connect", source="kb/vpn.md")
    a["feedback"].record_answer("m-1", "s-1", "how do I connect to the vpn", [chunk])
    result = b["feedback"].vote("m-1", "s-1", "up", "clear steps")
    assert result.status == "recorded" and result.chunks == 1
    assert b["feedback"].vote("m-1", "s-1", "down").status == "updated"
    stats = a["feedback"].stats()
    assert stats["votes"] == {"up": 0, "down": 1, "total": 1}
    assert a["feedback"].multipliers(["doc:abc"]) == {"doc:abc": pytest.approx(2**-0.5, abs=1e-3)}


def test_the_trace_of_a_run_on_one_replica_opens_on_the_other(two_replicas, fake_kb_context):
    a, b = two_replicas
    chat = ChatService(
        build_support_graph(a["sessions"].checkpointer),
        fake_kb_context(),
        a["sessions"],
        RecordingTracer(NullTracer(), a["traces"]),
    )
    turn = chat.ask("how do I connect to the vpn on linux")
    assert a["traces"].flush()
    record = b["traces"].get(turn.trace_id)
    assert record is not None and record["session_id"] == turn.session_id
    assert [t["trace_id"] for t in b["traces"].list(session_id=turn.session_id)] == [turn.trace_id]
    b["traces"].record_feedback(turn.trace_id, "up", None)
    assert b["traces"].flush()
    assert a["traces"].get(turn.trace_id)["feedback"] == {"rating": "up", "reason": None}


def test_a_conversation_continues_alternating_replicas_with_its_history_in_order(two_replicas, fake_kb_context):
    a, b = two_replicas
    chats = [
        ChatService(
            build_support_graph(r["sessions"].checkpointer),
            fake_kb_context(),
            r["sessions"],
            RecordingTracer(NullTracer(), r["traces"]),
        )
        for r in (a, b)
    ]
    messages = ["It's not working", "the vpn on linux", "it still fails", "thanks"]
    session = None
    for i, message in enumerate(messages):
        session = chats[i % 2].ask(message, session_id=session, user_id="alice").session_id
    history = chats[0].history(session)
    assert [m["content"] for m in history if m["role"] == "user"] == messages
    assert chats[1].history(session) == history
    # the owner is shared too: another caller gets neither replica to continue it
    assert chats[1].owner(session) == "alice" and not b["sessions"].claim(session, "mallory")
    # and only the newest checkpoint is kept, whichever replica wrote it
    with a["sessions"].checkpoint_db.connect() as conn:
        assert conn.exec_driver_sql("SELECT COUNT(*) FROM checkpoints WHERE thread_id = %s", (session,)).scalar() == 1


def test_a_turn_waits_for_the_same_session_on_another_replica_then_gets_session_busy(two_replicas):
    a, b = two_replicas
    held, release = threading.Event(), threading.Event()

    def long_turn():
        with a["sessions"].turn_lock("s-1"):
            held.set()
            release.wait(10)

    thread = threading.Thread(target=long_turn)
    thread.start()
    assert held.wait(10)
    started = time.monotonic()
    with pytest.raises(SessionBusy):
        with b["sessions"].turn_lock("s-1", wait_s=0.3):
            pass
    assert time.monotonic() - started >= 0.3
    with b["sessions"].turn_lock("s-2", wait_s=0.3):  # another session is not held up
        pass
    release.set()
    thread.join(10)
    with b["sessions"].turn_lock("s-1", wait_s=1):  # released: the other replica takes it
        pass


def test_aliases_reached_by_two_sessions_on_two_replicas_continue_neither(two_replicas):
    a, b = two_replicas
    a["sessions"].add_alias("fp-1", "s-1")
    assert b["sessions"].find_alias("fp-1") == "s-1"
    b["sessions"].add_alias("fp-1", "s-2")
    assert a["sessions"].find_alias("fp-1") is None
    b["sessions"].forget_aliases("s-1")


def test_retention_on_postgres_expires_idle_sessions_of_every_replica_and_keeps_live_ones_whole(
    two_replicas, fake_kb_context
):
    from app.retention import run_retention

    a, b = two_replicas
    chat = ChatService(
        build_support_graph(a["sessions"].checkpointer),
        fake_kb_context(),
        a["sessions"],
        RecordingTracer(NullTracer(), a["traces"]),
    )
    idle = chat.ask("It's not working", user_id="alice").session_id
    live = chat.ask("It's not working", user_id="bob").session_id
    chat.ask("the vpn on linux", session_id=live, user_id="bob")
    a["sessions"].add_alias("fp-idle", idle)
    a["sessions"].prune(idle, now=time.time() - 40 * 86400)  # its last turn, long ago
    report = run_retention(b["sessions"], b["traces"], session_idle_s=30 * 86400, vacuum=True)
    assert report.sessions_expired == 1
    assert not a["sessions"].exists(idle) and a["sessions"].owner(idle) is None
    assert a["sessions"].find_alias("fp-idle") is None
    assert [m["content"] for m in chat.history(live) if m["role"] == "user"] == ["It's not working", "the vpn on linux"]
    assert b["sessions"].count() == 1
    b["sessions"].ping()
