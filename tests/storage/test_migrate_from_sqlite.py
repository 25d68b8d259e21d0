"""`deskmate db migrate-from-sqlite PATH`: an embedded data dir copied into Postgres loses no session,
ticket, vote or trace, and its conversations continue there."""

from __future__ import annotations

import json
import sqlite3

from sqlalchemy import func, select

from app.adapters.feedback import CitedChunk, FeedbackStore
from app.adapters.memory import SessionStore
from app.adapters.redactor import PatternRedactor
from app.adapters.ticket_store import TicketStore
from app.adapters.traces import RecordingTracer, TraceStore
from app.adapters.tracing import NullTracer
from app.chat_service import ChatService
from app.cli import main
from app.storage import Database
from app.storage.schema import metadata
from graphs.support import build_support_graph
from tests.fakes import HashingEmbedder
from tests.unit.test_ticket_store import draft


def chat_over(sessions: SessionStore, traces: TraceStore, context) -> ChatService:
    return ChatService(
        build_support_graph(sessions.checkpointer), context, sessions, RecordingTracer(NullTracer(), traces)
    )


def counts(db: Database) -> dict[str, int]:
    with db.connect() as conn:
        return {
            name: conn.execute(select(func.count()).select_from(table)).scalar()
            for name, table in metadata.tables.items()
        }


def test_an_embedded_data_dir_moves_to_postgres_whole_and_its_conversations_continue(
    tmp_path, postgres_url, fake_kb_context, monkeypatch, capsys
):
    source = tmp_path / "embedded"
    db = Database.open(f"sqlite:///{source / 'deskmate.sqlite'}")
    sessions = SessionStore(db, checkpoints=source / "sessions.sqlite")
    traces = TraceStore(db, redactor=PatternRedactor())
    chat = chat_over(sessions, traces, fake_kb_context())
    first = chat.ask("It's not working", user_id="alice")
    chat.ask("the vpn on linux", session_id=first.session_id, user_id="alice")
    other = chat.ask("how do I connect to the vpn", user_id="bob")
    sessions.add_alias("fp-bob", other.session_id)
    TicketStore(db).create(draft(), session_id=first.session_id, user_id="alice")
    TicketStore(db).add_comment(TicketStore(db).list()[0]["id"], "called the help desk")
    feedback = FeedbackStore(db, embed=HashingEmbedder().embed_query)
    feedback.record_answer(
        "m-1",
        other.session_id,
        "how do I connect to the vpn",
        [CitedChunk(key="doc:1", chunk_id="c1", label="VPN", source="kb/vpn.md")],
    )
    feedback.vote("m-1", other.session_id, "up", "clear")
    traces.record_feedback(other.trace_id, "up", None)
    assert traces.flush()
    before = counts(db)
    history = chat.history(first.session_id)
    traces.close()
    sessions.close()
    db.close()

    monkeypatch.setenv("DESKMATE_DATABASE_URL", postgres_url)
    target_dir = tmp_path / "server"
    assert main(["--data-dir", str(target_dir), "db", "migrate-from-sqlite", str(source)]) == 0
    printed = capsys.readouterr().out
    assert "sessions: 2 of 2 conversation(s) copied" in printed and "tickets: 1 of 1 row(s) copied" in printed

    target = Database.open(postgres_url)
    try:
        assert counts(target) == before and before["runs"] == 3 and before["votes"] == 1
        pg_sessions = SessionStore(target)
        pg_traces = TraceStore(target, redactor=PatternRedactor())
        pg_chat = chat_over(pg_sessions, pg_traces, fake_kb_context())
        assert pg_chat.history(first.session_id) == history
        assert pg_chat.owner(first.session_id) == "alice" and pg_chat.session_for("fp-bob") == other.session_id
        assert (
            FeedbackStore(target, embed=HashingEmbedder().embed_query).vote("m-1", other.session_id, "down").status
            == "updated"
        )
        turn = pg_chat.ask("it still fails", session_id=first.session_id, user_id="alice")
        assert [m["content"] for m in pg_chat.history(turn.session_id) if m["role"] == "user"] == [
            "It's not working",
            "the vpn on linux",
            "it still fails",
        ]
        pg_traces.close()
        pg_sessions.close()
        # a second run copies nothing twice
        assert main(["--data-dir", str(target_dir), "db", "migrate-from-sqlite", str(source)]) == 0
        assert "sessions: 0 of 2 conversation(s) copied" in capsys.readouterr().out
        assert counts(target)["tickets"] == 1
    finally:
        target.close()


def test_the_older_one_file_per_store_layout_is_read_too(tmp_path, postgres_url, monkeypatch):
    source = tmp_path / "old"
    source.mkdir()
    record = {"trace_id": "t" * 32, "graph": "support", "path": ["redact", "classify", "respond"]}
    with sqlite3.connect(source / "traces.sqlite") as conn:
        conn.execute(
            "CREATE TABLE runs (trace_id TEXT PRIMARY KEY, graph TEXT NOT NULL, session_id TEXT, "
            "user_id TEXT, action TEXT, intent TEXT, status TEXT NOT NULL, started_at REAL NOT NULL, "
            "duration_ms REAL, summary TEXT NOT NULL, record TEXT NOT NULL)"
        )
        conn.execute(
            "INSERT INTO runs VALUES (?, 'support', 's-1', 'alice', 'answer', 'question', 'ok', 1.5e9, 12.0, 'vpn', ?)",
            ("t" * 32, json.dumps(record)),
        )
    TicketStore(source / "tickets.sqlite").create(draft(), session_id="s-1", user_id="alice")
    with sqlite3.connect(source / "feedback.sqlite") as conn:  # a row per cited passage, as votes were kept then
        conn.execute(
            "CREATE TABLE answers (message_id TEXT PRIMARY KEY, session_id TEXT NOT NULL, query TEXT NOT NULL, "
            "created_at TEXT NOT NULL)"
        )
        conn.execute(
            "CREATE TABLE answer_chunks (message_id TEXT, key TEXT, chunk_id TEXT NOT NULL, label TEXT NOT "
            "NULL, source TEXT NOT NULL, PRIMARY KEY (message_id, key))"
        )
        conn.execute("INSERT INTO answers VALUES ('m-1', 's-1', 'vpn on linux', '2026-11-01T10:00:00+00:00')")
        conn.executemany(
            "INSERT INTO answer_chunks VALUES ('m-1', ?, ?, 'VPN › Linux', 'kb/vpn.md')",
            [("doc:1", "c1"), ("doc:2", "c2")],
        )
    monkeypatch.setenv("DESKMATE_DATABASE_URL", postgres_url)
    assert main(["--data-dir", str(tmp_path / "server"), "db", "migrate-from-sqlite", str(source)]) == 0
    target = Database.open(postgres_url)
    try:
        feedback = FeedbackStore(target, embed=HashingEmbedder().embed_query, min_votes=1, similarity=0.0)
        assert feedback.vote("m-1", "s-1", "up").chunks == 2  # the answer still knows what it cited
        assert set(feedback.multipliers(["doc:1", "doc:2"])) == {"doc:1", "doc:2"}
        assert {c["label"] for c in feedback.stats()["top_boosted"]} == {"VPN › Linux"}
        store = TraceStore(target, redactor=PatternRedactor())
        assert store.list(session_id="s-1")[0]["path"] == ["redact", "classify", "respond"]
        store.close()
        assert len(TicketStore(target).list(user_id="alice")) == 1
    finally:
        target.close()


def test_a_source_that_is_not_a_folder_is_refused_with_what_to_give(tmp_path, postgres_url, monkeypatch, capsys):
    monkeypatch.setenv("DESKMATE_DATABASE_URL", postgres_url)
    assert main(["--data-dir", str(tmp_path / "server"), "db", "migrate-from-sqlite", str(tmp_path / "nope")]) == 2
    assert "is not a folder" in capsys.readouterr().err


def test_an_embedded_data_dir_from_before_the_single_database_keeps_its_tickets_and_traces_after_the_upgrade(tmp_path):
    from app.resources import LEGACY_IMPORTED, _import_legacy_stores
    from app.settings import Settings

    data = tmp_path / "data"
    data.mkdir()
    record = {"trace_id": "u" * 32, "graph": "support", "path": ["redact", "respond"]}
    with sqlite3.connect(data / "traces.sqlite") as conn:
        conn.execute(
            "CREATE TABLE runs (trace_id TEXT PRIMARY KEY, graph TEXT NOT NULL, session_id TEXT, "
            "user_id TEXT, action TEXT, intent TEXT, status TEXT NOT NULL, started_at REAL NOT NULL, "
            "duration_ms REAL, summary TEXT NOT NULL, record TEXT NOT NULL)"
        )
        conn.execute(
            "INSERT INTO runs VALUES (?, 'support', 's-9', 'bob', 'answer', 'question', 'ok', 1.5e9, "
            "12.0, 'printer', ?)",
            ("u" * 32, json.dumps(record)),
        )
    TicketStore(data / "tickets.sqlite").create(draft(), session_id="s-9", user_id="bob")
    settings = Settings(_env_file=None, data_dir=data)
    database = Database.open(f"sqlite:///{data / 'deskmate.sqlite'}")
    try:
        _import_legacy_stores(settings, database)
        assert len(TicketStore(database).list(user_id="bob")) == 1
        store = TraceStore(database, redactor=PatternRedactor())
        assert store.list(session_id="s-9")[0]["path"] == ["redact", "respond"]
        store.close()
        assert (data / LEGACY_IMPORTED).exists()
        before = counts(database)
        _import_legacy_stores(settings, database)  # the next start: nothing copied twice
        assert counts(database) == before
    finally:
        database.close()
