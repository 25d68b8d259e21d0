"""The relational store's per-operation latency, embedded SQLite and Postgres side by side in one run.

    python bench/storage.py                        # SQLite only
    python bench/storage.py --database postgres    # plus a scratch Postgres database (created, then dropped)
    python bench/storage.py --database postgres --admin-url postgresql://postgres@127.0.0.1:5432/postgres

What a chat turn adds to the store, measured per call (p50 / p95 in ms over --n calls): the session claim
(owner lookup), the session lock taken and released, alias bookkeeping, an answer recorded for feedback, a
ticket raised and listed, a vote, a trace written (through the writer thread, flushed). No model is loaded:
votes embed with a fixed vector, so what is measured is the database.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from app.adapters.feedback import CitedChunk, FeedbackStore  # noqa: E402
from app.adapters.memory import SessionStore  # noqa: E402
from app.adapters.redactor import PatternRedactor  # noqa: E402
from app.adapters.ticket_store import TicketStore  # noqa: E402
from app.adapters.traces import TraceStore  # noqa: E402
from app.storage import Database  # noqa: E402
from core.records import TicketDraft  # noqa: E402

VECTOR = [0.1] * 384


def draft() -> TicketDraft:
    return TicketDraft(
        summary="VPN drops every few minutes",
        description="Disconnects.",
        priority="medium",
        topic="vpn",
        os="windows",
        steps_tried=[{"step": "Reconnect", "outcome": "failed"}],
        conversation=[{"role": "user", "content": "my vpn keeps disconnecting"}],
    )


def timed(call, n: int) -> tuple[float, float]:
    samples = []
    for i in range(n):
        started = time.perf_counter()
        call(i)
        samples.append((time.perf_counter() - started) * 1000)
    samples.sort()
    return statistics.median(samples), samples[int(0.95 * (len(samples) - 1))]


def measure(url: str, workdir: Path, n: int) -> dict[str, tuple[float, float]]:
    db = Database.open(url)
    sessions = SessionStore(db, checkpoints=workdir / "sessions.sqlite")
    tickets = TicketStore(db)
    feedback = FeedbackStore(db, embed=lambda _: VECTOR)
    traces = TraceStore(db, redactor=PatternRedactor())
    ids = [uuid.uuid4().hex for _ in range(n)]
    chunk = [CitedChunk(key="doc:1", chunk_id="c1", label="VPN › Connect", source="kb/vpn.md")]

    def lock(i):
        with sessions.turn_lock(ids[i], wait_s=1):
            pass

    def trace(i):
        traces.submit(
            {
                "trace_id": ids[i],
                "graph": "support",
                "status": "ok",
                "started_ts": time.time(),
                "session_id": ids[i],
                "path": ["redact", "respond"],
                "input": {"query": "vpn"},
            }
        )
        traces.flush(10)

    results = {
        "claim a new session": timed(lambda i: sessions.claim(ids[i], "alice"), n),
        "owner of a session": timed(lambda i: sessions.owner(ids[i]), n),
        "session lock take+release": timed(lock, n),
        "alias add + forget": timed(
            lambda i: (sessions.add_alias(f"fp-{ids[i]}", ids[i]), sessions.forget_aliases(ids[i])), n
        ),
        "record an answer": timed(lambda i: feedback.record_answer(ids[i], ids[i], "vpn drops", chunk), n),
        "vote": timed(lambda i: feedback.vote(ids[i], ids[i], "up"), n),
        "raise a ticket": timed(lambda i: tickets.create(draft(), session_id=ids[i], user_id="alice"), n),
        "list a session's open tickets": timed(lambda i: tickets.list(session_id=ids[i], status="open"), n),
        "write a trace (flushed)": timed(trace, n),
    }
    traces.close()
    sessions.close()
    db.close()
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--database",
        choices=["sqlite", "postgres"],
        default="sqlite",
        help="postgres: measure a scratch Postgres database beside the embedded SQLite file",
    )
    parser.add_argument("--admin-url", default="postgresql://postgres@127.0.0.1:5432/postgres")
    parser.add_argument("--n", type=int, default=200, help="calls per operation")
    args = parser.parse_args()
    columns: dict[str, dict] = {}
    with tempfile.TemporaryDirectory() as tmp:
        columns["sqlite"] = measure(f"sqlite:///{Path(tmp) / 'deskmate.sqlite'}", Path(tmp), args.n)
        if args.database == "postgres":
            import psycopg
            from sqlalchemy.engine import make_url

            name = f"deskmate_bench_{uuid.uuid4().hex[:8]}"
            with psycopg.connect(args.admin_url, autocommit=True) as admin:
                admin.execute(f'CREATE DATABASE "{name}"')
                try:
                    url = make_url(args.admin_url).set(database=name).render_as_string(hide_password=False)
                    columns["postgres"] = measure(url, Path(tmp), args.n)
                finally:
                    admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    header = f"{'operation (ms, p50 / p95)':34}" + "".join(f"{engine:>20}" for engine in columns)
    print(header)
    for operation in columns["sqlite"]:
        print(
            f"{operation:34}"
            + "".join(f"{columns[e][operation][0]:>10.2f} / {columns[e][operation][1]:<7.2f}" for e in columns)
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
