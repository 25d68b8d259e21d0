"""Retention over the real SQLite stores: idle sessions expire, each session keeps only its latest checkpoint,
traces are kept under a size; tickets are not the pass's business."""

import base64
import hashlib
import operator
import time
from typing import Annotated, TypedDict

from langgraph.graph import END, START, StateGraph

from app.adapters.memory import SessionStore
from app.adapters.redactor import PatternRedactor
from app.adapters.traces import TraceStore
from app.retention import run_retention

DAY = 86400.0


class Counter(TypedDict):
    turns: Annotated[list[str], operator.add]


def _graph(store: SessionStore):
    builder = StateGraph(Counter)
    builder.add_node("turn", lambda state: {"turns": [f"turn {len(state.get('turns', [])) + 1}"]})
    builder.add_edge(START, "turn")
    builder.add_edge("turn", END)
    return builder.compile(checkpointer=store.checkpointer)


def _checkpoints(store: SessionStore, thread_id: str) -> int:
    with store.checkpoint_db.connect() as conn:
        return conn.exec_driver_sql("SELECT COUNT(*) FROM checkpoints WHERE thread_id = ?", (thread_id,)).scalar()


def _set_last_turn(store: SessionStore, thread_id: str, last_ts: float) -> None:
    with store.db.begin() as conn:  # the activity table lives in the relational store, beside owners and aliases
        conn.exec_driver_sql("INSERT OR REPLACE INTO session_activity VALUES (?, ?)", (thread_id, last_ts))


def test_idle_sessions_expire_and_active_ones_keep_only_their_latest_checkpoint(tmp_path):
    store = SessionStore(tmp_path / "sessions.sqlite")
    graph = _graph(store)
    now = time.time()
    for thread, last_turn in (("old", now - 40 * DAY), ("recent", now - 2 * DAY)):
        store.claim(thread, "ana")
        for _ in range(3):
            graph.invoke({"turns": []}, {"configurable": {"thread_id": thread}})
        _set_last_turn(store, thread, last_turn)
    store.add_alias("fingerprint-of-old", "old")
    assert _checkpoints(store, "recent") > 1  # LangGraph keeps every step

    report = run_retention(store, None, session_idle_s=30 * DAY, now=now)

    assert report.sessions_expired == 1 and report.checkpoints_pruned > 0
    assert not store.exists("old") and store.owner("old") is None and store.find_alias("fingerprint-of-old") is None
    assert _checkpoints(store, "recent") == 1 and store.owner("recent") == "ana"
    # the latest turn is what a fourth turn continues from
    state = graph.invoke({"turns": []}, {"configurable": {"thread_id": "recent"}})
    assert state["turns"] == ["turn 1", "turn 2", "turn 3", "turn 4"]
    store.close()


def test_a_session_from_before_activity_was_recorded_is_given_a_full_idle_period(tmp_path):
    store = SessionStore(tmp_path / "sessions.sqlite")
    graph = _graph(store)
    graph.invoke({"turns": []}, {"configurable": {"thread_id": "legacy"}})
    with store.db.begin() as conn:  # the activity table lives in the relational store, beside owners and aliases
        conn.exec_driver_sql("DELETE FROM session_activity")
    assert run_retention(store, None, session_idle_s=30 * DAY).sessions_expired == 0
    assert store.exists("legacy")
    assert run_retention(store, None, session_idle_s=30 * DAY, now=time.time() + 31 * DAY).sessions_expired == 1
    store.close()


def _trace(i: int, started: float) -> dict:
    # about 0.9 KB of output that compression cannot shrink (records are stored compressed): the sizes stay real
    output = " ".join(base64.b64encode(hashlib.sha256(f"{i}:{k}".encode()).digest()).decode() for k in range(20))
    return {
        "trace_id": f"{i:032x}",
        "graph": "support",
        "session_id": f"s{i}",
        "status": "ok",
        "started_ts": started,
        "duration_ms": 12.0,
        "action": "answer",
        "nodes": [{"node": "answer", "output": output}],
    }


def test_traces_are_kept_under_their_size_limit_newest_first(tmp_path):
    filler = TraceStore(tmp_path / "traces.sqlite", redactor=PatternRedactor())  # as if the cap had just been lowered
    now = time.time()
    for i in range(400):
        filler.submit(_trace(i, now - 400 + i))
    assert filler.flush(120)
    filler.close()
    store = TraceStore(tmp_path / "traces.sqlite", redactor=PatternRedactor(), max_bytes=256 * 1024)
    import sqlite3

    with sqlite3.connect(store.path) as db:
        before = TraceStore.trace_table_bytes(db)
    pruned = run_retention(SessionStore(tmp_path / "sessions.sqlite"), store, session_idle_s=DAY).traces_pruned
    with sqlite3.connect(store.path) as db:
        after = TraceStore.trace_table_bytes(db)
        newest = db.execute("SELECT MAX(started_at) FROM runs").fetchone()[0]
    assert before > 256 * 1024 >= after and pruned > 0
    assert newest == now - 1  # the oldest went first
    assert store.get(f"{399:032x}") is not None and store.get(f"{0:032x}") is None
    store.close()


def test_the_pass_forgets_answers_nobody_voted_on_once_their_vote_window_has_passed(tmp_path):
    from app.adapters.feedback import CitedChunk, FeedbackStore
    from app.storage.schema import answers
    from tests.fakes import HashingEmbedder

    sessions = SessionStore(tmp_path / "deskmate.sqlite")
    feedback = FeedbackStore(sessions.db, embed=HashingEmbedder().embed_query, vote_window_s=3600)
    cited = [CitedChunk(key="doc:vpn", chunk_id="c1", label="VPN", source="kb/vpn.md")]
    for message_id in ("voted", "unvoted", "recent"):
        feedback.record_answer(message_id, "s-1", "vpn on linux", cited)
    feedback.vote("voted", "s-1", "up")
    with sessions.db.begin() as conn:  # two answers from two hours ago
        conn.execute(
            answers.update()
            .where(answers.c.message_id.in_(["voted", "unvoted"]))
            .values(created_at="2000-01-01T00:00:00+00:00")
        )
    report = run_retention(sessions, None, session_idle_s=DAY, answers=feedback)
    assert report.answers_pruned == 1
    with sessions.db.connect() as conn:
        assert set(conn.execute(answers.select().with_only_columns(answers.c.message_id)).scalars()) == {
            "voted",
            "recent",
        }
    sessions.close()


def test_the_background_pass_hands_the_pages_it_freed_back_to_the_disk_without_a_full_vacuum(tmp_path):
    filler = TraceStore(tmp_path / "traces.sqlite", redactor=PatternRedactor())  # no size cap while filling
    now = time.time()
    for i in range(400):
        filler.submit(_trace(i, now - 400 + i))
    assert filler.flush(120)
    filler.close()
    # the file's other tables keep pages of their own however empty (about 400 KB): the floor of the size
    empty = TraceStore(tmp_path / "empty.sqlite", redactor=PatternRedactor())
    empty.reclaim()
    floor = empty.path.stat().st_size
    empty.close()
    # a cap well under the traces' size
    store = TraceStore(tmp_path / "traces.sqlite", redactor=PatternRedactor(), max_bytes=64 * 1024)
    store.reclaim()  # the WAL into the file: the size below is the file's own
    before = store.path.stat().st_size
    report = run_retention(SessionStore(tmp_path / "sessions.sqlite"), store, session_idle_s=DAY)  # no vacuum
    assert report.traces_pruned > 0
    assert store.path.stat().st_size - floor < (before - floor) / 2
    store.close()


def test_a_write_ahead_log_grown_behind_a_long_reader_is_cut_back_once_it_restarts(tmp_path):
    from sqlalchemy import text

    from app.storage import Database
    from app.storage.database import WAL_SIZE_LIMIT_BYTES

    db = Database.open(f"sqlite:///{tmp_path / 'deskmate.sqlite'}")
    wal = tmp_path / "deskmate.sqlite-wal"
    with db.begin() as conn:
        conn.execute(text("CREATE TABLE filler (body BLOB)"))
    with db.connect() as reader:
        reader.execute(text("BEGIN"))
        reader.execute(text("SELECT COUNT(*) FROM filler")).scalar()  # holds its snapshot: no checkpoint can finish
        for _ in range(24):
            with db.begin() as conn:
                conn.execute(text("INSERT INTO filler VALUES (:b)"), {"b": b"x" * 1024 * 1024})
        assert wal.stat().st_size > WAL_SIZE_LIMIT_BYTES
        reader.execute(text("COMMIT"))
    for _ in range(2):  # the first write checkpoints the whole log, the next starts it over
        with db.begin() as conn:
            conn.execute(text("DELETE FROM filler"))
    assert wal.stat().st_size <= WAL_SIZE_LIMIT_BYTES
    db.close()


def test_a_busy_trace_store_keeps_near_its_size_cap_between_retention_passes(tmp_path):
    store = TraceStore(tmp_path / "traces.sqlite", redactor=PatternRedactor(), max_bytes=256 * 1024)
    now = time.time()
    for i in range(400):  # about 1.6 MB of records, within seconds: no retention pass, no ten minutes gone
        store.submit(_trace(i, now - 400 + i))
    assert store.flush(120)
    import sqlite3

    with sqlite3.connect(store.path) as db:
        records = db.execute("SELECT SUM(LENGTH(record) + COALESCE(LENGTH(packed), 0)) FROM runs").fetchone()[0]
    assert records <= 256 * 1024 * (1 + 0.1) + 8 * 1024  # the cap, the share written between prunes, one batch
    assert store.get(f"{399:032x}") is not None
    store.close()


def test_the_pass_deletes_turn_outcomes_past_their_retention_and_clears_old_questions(tmp_path):
    from sqlalchemy import select

    from app.insights.outcomes import OutcomeStore, outcome_row
    from app.storage.schema import turn_outcomes

    sessions = SessionStore(tmp_path / "deskmate.sqlite")
    now = time.time()
    outcomes = OutcomeStore(sessions.db, retention_days=396, question_days=14, clock=lambda: now)
    unanswered = {"action": "create_ticket", "ticket_event": "offered", "search_count": 1, "query": "book a room?"}
    for trace_id, age_days in (("old", 400), ("month", 30), ("today", 0)):
        row = outcome_row(
            unanswered,
            trace_id=trace_id,
            session_id=trace_id,
            user_id=None,
            channel="web",
            latency_ms=50.0,
            ts=now - age_days * DAY,
        )
        assert outcomes.record(row)
    report = run_retention(sessions, None, session_idle_s=DAY, outcomes=outcomes)
    assert report.outcomes_pruned == 1
    with sessions.db.connect() as conn:
        kept = dict(conn.execute(select(turn_outcomes.c.trace_id, turn_outcomes.c.question)).all())
    assert kept == {"month": None, "today": "book a room?"}  # the row stays a year, its question two weeks
    sessions.close()
