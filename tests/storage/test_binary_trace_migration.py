"""The binary-trace-record revision on both engines: runs written before it (their whole record as base85
text) read as before after the upgrade, new runs are written slim into the binary column and read back
whole, the size cap counts both, and going back down leaves a table the older code reads."""

from __future__ import annotations

import base64
import json
import time
import zlib

import sqlalchemy as sa
from alembic import command

from app.adapters.redactor import PatternRedactor
from app.adapters.traces import _ZDICT, TraceStore
from app.storage import Database

BEFORE = "0006"  # the revision whose runs kept the whole record as text


def _record(trace_id: str, started: float) -> dict:
    node = {
        "seq": 0,
        "name": "redact",
        "start_ms": 0.5,
        "end_ms": 1.25,
        "duration_ms": 0.75,
        "input_keys": ["query"],
        "output_keys": ["query"],
        "output": {"query": "vpn drops"},
        "error": None,
    }
    return {
        "trace_id": trace_id,
        "graph": "support",
        "status": "ok",
        "session_id": "s-1",
        "user_id": "alice",
        "tags": ["chat"],
        "started_ts": started,
        "duration_ms": 2.5,
        "action": "answer",
        "intent": "informative",
        "input": {"query": "vpn drops"},
        "output": {"answer": "Restart it."},
        "path": ["redact"],
        "nodes": [node],
        "decisions": [],
        "retrieval": [],
        "llm_calls": [],
        "errors": [],
        "fallbacks": [],
        "timings": {"total_ms": 2.5},
    }


def _old_row(db: Database, record: dict) -> None:
    packer = zlib.compressobj(9, zdict=_ZDICT)
    text = "z:" + base64.b85encode(packer.compress(json.dumps(record).encode()) + packer.flush()).decode()
    runs = sa.table(
        "runs",
        *[
            sa.column(c)
            for c in ("trace_id", "graph", "status", "started_at", "summary", "path", "record", "session_id", "user_id")
        ],
    )
    with db.begin() as conn:
        conn.execute(
            runs.insert().values(
                trace_id=record["trace_id"],
                graph="support",
                status="ok",
                started_at=record["started_ts"],
                summary="vpn drops",
                path='["redact"]',
                record=text,
                session_id="s-1",
                user_id="alice",
            )
        )


def test_runs_from_before_the_binary_column_read_as_before_and_new_ones_read_back_whole(database_url):
    db = Database(database_url)
    try:
        assert db.upgrade(BEFORE) == BEFORE
        now = time.time()
        _old_row(db, _record("old-1", now - 60) | {"started_at": "then"})
        db.upgrade()
        store = TraceStore(db, redactor=PatternRedactor())
        assert store.get("old-1")["started_at"] == "then"  # the old row's own record, untouched
        new = _record("new-1", now)
        store.submit(new)
        assert store.flush(10)
        record = store.get("new-1")
        assert {k: record[k] for k in new if k != "started_ts"} == {k: v for k, v in new.items() if k != "started_ts"}
        assert [r["trace_id"] for r in store.list()] == ["new-1", "old-1"]
        with db.connect() as conn:
            text, packed = conn.execute(sa.text("SELECT record, packed FROM runs WHERE trace_id = 'new-1'")).first()
            used = store._bytes_used(conn)
        assert text == "" and bytes(packed)[:1] == b"\x01"
        assert used > len(packed)
        store.close()
        with db.connect() as conn:  # and back down: every row left has its record as text, as older code reads
            command.downgrade(db._alembic_config(conn), BEFORE)
            conn.commit()
            left = conn.execute(sa.text("SELECT trace_id, record FROM runs")).all()
        assert [row[0] for row in left] == ["old-1"] and left[0][1].startswith("z:")
    finally:
        db.close()
