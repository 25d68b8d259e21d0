"""How long the insights figures take on a full outcome table: 1,000,000 synthetic turns over 13 months (the
default retention), on the embedded SQLite file and on Postgres, for 30-day windows.

    python bench/insights.py                         # 1,000,000 turns, SQLite and Postgres (127.0.0.1:5432)
    python bench/insights.py --turns 200000 --engines sqlite
    DESKMATE_BENCH_POSTGRES=postgresql://postgres@host:5432/postgres python bench/insights.py

What is timed is what GET /admin/insights runs in SQL (app/insights/figures.py: volume by day/hour/channel,
outcomes, deflection per conversation, tickets, articles incl. walkthroughs ending in a ticket and never
cited, the gap questions), for windows ending on random days of the last year: p50 / p95 / max over the
repeats. The gap clustering is timed apart (it embeds the window's unanswered questions once, then reads its
cache): with the real embedding model, cold and warm.

The turns are conversations of 1–4 turns with an outcome mix like a soak's (most answered, some walkthroughs,
unanswered questions, offered and created tickets), channels web/api/cli, 200 articles with a long tail, 5 %
voted; questions are kept only for the last 14 days (the trace retention), as the store keeps them.
Postgres: a database of its own is created on the server and dropped at the end.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
import uuid
from datetime import date, timedelta
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from app.insights import figures  # noqa: E402
from app.insights.figures import Window  # noqa: E402
from app.insights.gaps import MAX_QUESTIONS, knowledge_gaps  # noqa: E402
from app.storage import Database  # noqa: E402
from app.storage.schema import turn_outcomes  # noqa: E402

DAY = 86400
COLUMNS = [c.name for c in turn_outcomes.columns]
OUTCOME_MIX = (
    ("answered", 50),
    ("walkthrough_step", 14),
    ("resolved", 4),
    ("abstained", 5),
    ("ticket_offered", 7),
    ("ticket_created", 4),
    ("handoff", 1),
    ("out_of_scope", 2),
    ("clarified", 5),
    ("conversation", 8),
)
TOPICS = (
    "book a meeting room",
    "order a new monitor",
    "get a parking permit",
    "reset the printer queue on floor {n}",
    "install the design software",
    "join the guest wifi",
    "claim my phone bill",
    "set up a shared calendar",
)
WORDINGS = ("How do I {t}?", "can someone tell me how to {t}", "I need to {t} today", "where do I go to {t}")


def synthetic_rows(turns: int, days: int, end_day: int, rng: random.Random):
    """Rows of `turns` turns over the `days` days ending `end_day`, conversation by conversation."""
    outcomes, weights = zip(*OUTCOME_MIX, strict=True)
    docs = [(uuid.UUID(int=rng.getrandbits(128)).hex[:16], f"Article {i}") for i in range(200)]
    made = 0
    while made < turns:
        session = uuid.UUID(int=rng.getrandbits(128)).hex
        asker = uuid.UUID(int=rng.getrandbits(128)).hex[:16]
        channel = rng.choices(("web", "api", "cli"), (70, 20, 10))[0]
        ts = (end_day - rng.randrange(days)) * DAY + rng.gauss(13, 3) % 24 * 3600
        for _ in range(min(rng.choice((1, 1, 2, 2, 3, 4)), turns - made)):
            ts += rng.uniform(10, 120)
            outcome = rng.choices(outcomes, weights)[0]
            doc_id, title = docs[min(int(rng.paretovariate(1.2)) - 1, len(docs) - 1)]
            cites = outcome in ("answered", "walkthrough_step", "resolved")
            gap = outcome in ("abstained", "ticket_offered", "out_of_scope")
            created = outcome == "ticket_created"
            question = None
            if gap and ts > (end_day - 14) * DAY:
                question = rng.choice(WORDINGS).format(t=rng.choice(TOPICS).format(n=rng.randrange(1, 9)))
            yield {
                "trace_id": uuid.UUID(int=rng.getrandbits(128)).hex,
                "ts": ts,
                "day": int(ts // DAY),
                "hour": int(ts % DAY // 3600),
                "channel": channel,
                "collection": "",
                "session_id": session,
                "asker": asker,
                "action": "answer",
                "outcome": outcome,
                "doc_id": doc_id if cites else None,
                "doc_title": title if cites else None,
                "section": f"Section {rng.randrange(6)}" if cites else None,
                "cited": "[]",
                "confidence": round(rng.random(), 3),
                "vote": rng.choice(("up", "up", "down")) if cites and rng.random() < 0.05 else None,
                "ticket_id": f"DM-{rng.randrange(16**6):06X}" if created else None,
                "ticket_priority": rng.choice(("low", "medium", "medium", "high")) if created else None,
                "ticket_category": rng.choice(("incident", "incident", "request")) if created else None,
                "language": "",
                "latency_ms": round(rng.uniform(40, 900), 1),
                "gap": int(gap),
                "question": question,
            }
            made += 1


def fill(db: Database, turns: int, days: int, end_day: int, seed: int) -> float:
    started = time.perf_counter()
    rng = random.Random(seed)
    batch: list[tuple] = []
    raw = db.engine.raw_connection()
    try:
        cursor = raw.cursor()
        if db.is_postgres:
            with cursor.copy(f"COPY turn_outcomes ({', '.join(COLUMNS)}) FROM STDIN") as copy:
                for row in synthetic_rows(turns, days, end_day, rng):
                    copy.write_row([row[c] for c in COLUMNS])
        else:
            statement = f"INSERT INTO turn_outcomes ({', '.join(COLUMNS)}) VALUES ({', '.join('?' * len(COLUMNS))})"
            for row in synthetic_rows(turns, days, end_day, rng):
                batch.append(tuple(row[c] for c in COLUMNS))
                if len(batch) == 20_000:
                    cursor.executemany(statement, batch)
                    batch.clear()
            if batch:
                cursor.executemany(statement, batch)
        raw.commit()
        if db.is_postgres:  # what autovacuum does after a bulk load: statistics and the visibility map
            raw.driver_connection.autocommit = True
            raw.driver_connection.execute("VACUUM ANALYZE turn_outcomes")
        else:
            cursor.execute("ANALYZE")
            raw.commit()
    finally:
        raw.close()
    return time.perf_counter() - started


def time_figures(db: Database, window: Window, documents: list[dict]) -> dict[str, float]:
    spent: dict[str, float] = {}
    with db.connect() as conn:
        for name, run in (
            ("volume", lambda: figures.volume(conn, window)),
            ("deflection", lambda: figures.deflection(conn, window)),
            ("tickets", lambda: figures.tickets(conn, window)),
            ("articles", lambda: figures.articles(conn, window, documents)),
            ("gap_questions", lambda: figures.gap_questions(conn, window, MAX_QUESTIONS)),
        ):
            started, cpu = time.perf_counter(), time.process_time()
            run()
            spent[name] = (time.perf_counter() - started) * 1000
            spent[f"{name}_cpu"] = (time.process_time() - cpu) * 1000
    spent["total"] = sum(spent[name] for name in PARTS)
    spent["total_cpu"] = sum(spent[f"{name}_cpu"] for name in PARTS)
    return spent


PARTS = ("volume", "deflection", "tickets", "articles", "gap_questions")


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def run_engine(name: str, url: str, args, documents: list[dict]) -> dict:
    db = Database.open(url)
    try:
        end_day = (date.today() - date(1970, 1, 1)).days
        filled = fill(db, args.turns, args.days, end_day, args.seed)
        print(f"\n{name}: {args.turns:,} turns over {args.days} days written in {filled:.1f} s")
        rng = random.Random(args.seed + 1)
        samples = []
        for i in range(args.repeats):
            last = date.today() - timedelta(days=0 if i == 0 else rng.randrange(args.days - args.window))
            window = Window.of(last - timedelta(days=args.window - 1), last)
            samples.append(time_figures(db, window, documents))
        totals = [s["total"] for s in samples]
        cpu = [s["total_cpu"] for s in samples]
        print(
            f"  figures SQL, {args.window}-day window, {args.repeats} windows: p50 {statistics.median(totals):.0f} ms, "
            f"p95 {pct(totals, 0.95):.0f} ms, max {max(totals):.0f} ms (target p95 ≤ 500 ms); load average "
            f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
        )
        if not db.is_postgres:  # in-process: the CPU the queries took, whatever else the machine was doing
            print(f"  CPU of this process for them: p50 {statistics.median(cpu):.0f} ms, p95 {pct(cpu, 0.95):.0f} ms")
        for part in PARTS:
            values = [s[part] for s in samples]
            print(f"    {part:14} p50 {statistics.median(values):6.0f} ms  p95 {pct(values, 0.95):6.0f} ms")
        result = {"fill_s": filled, "p50": statistics.median(totals), "p95": pct(totals, 0.95)}
        if args.cluster:
            from app.adapters.embeddings import SentenceTransformerEmbedder

            embedder = SentenceTransformerEmbedder()
            today = date.today()
            window = Window.of(today - timedelta(days=args.window - 1), today)
            with db.connect() as conn:
                rows = figures.gap_questions(conn, window, MAX_QUESTIONS)
            first, last = window.days
            for label in ("cold", "warm"):
                started = time.perf_counter()
                gaps = knowledge_gaps(rows, embedder, first_day=first, last_day=last)
                ms = (time.perf_counter() - started) * 1000
                print(f"  gap clustering ({label} cache): {len(rows)} questions → {len(gaps)} clusters in {ms:.0f} ms")
                result[f"cluster_{label}_ms"] = ms
        return result
    finally:
        db.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=1_000_000)
    parser.add_argument("--days", type=int, default=396, help="spread over this many days (default: 13 months)")
    parser.add_argument("--window", type=int, default=30)
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--engines", default="sqlite,postgres")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--no-cluster", dest="cluster", action="store_false", help="skip timing the gap clustering")
    args = parser.parse_args()
    documents = [{"doc_id": uuid.UUID(int=i).hex[:16], "title": f"Article {i}"} for i in range(300)]
    engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    if "sqlite" in engines:
        with tempfile.TemporaryDirectory() as tmp:
            run_engine("SQLite", f"sqlite:///{Path(tmp) / 'deskmate.sqlite'}", args, documents)
    if "postgres" in engines:
        import psycopg
        from sqlalchemy.engine import make_url

        admin = os.environ.get("DESKMATE_BENCH_POSTGRES", "postgresql://postgres@127.0.0.1:5432/postgres")
        name = f"deskmate_bench_{uuid.uuid4().hex[:10]}"
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        try:
            run_engine(
                "Postgres", make_url(admin).set(database=name).render_as_string(hide_password=False), args, documents
            )
        finally:
            with psycopg.connect(admin, autocommit=True) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
