"""How long the insights figures take on a full outcome table: 1,000,000 synthetic turns over 13 months (the
default retention), on the embedded SQLite file and on Postgres, for 30-day windows.

    python bench/insights.py                         # 1,000,000 turns, SQLite and Postgres (127.0.0.1:5432)
    python bench/insights.py --turns 200000 --engines sqlite
    DESKMATE_BENCH_POSTGRES=postgresql://postgres@host:5432/postgres python bench/insights.py

The fill is a bulk load (the outcome table's secondary indexes dropped, COPY on Postgres, executemany in
batches of 50,000 on SQLite, the indexes built again), then the per-day rollups are built in bulk from it as
the server rebuilds them (app/insights/rollup.py `rebuild`); both are timed.

What is timed is what GET /admin/insights runs in SQL (app/insights/figures.py, on the rollups: volume by
day/hour/channel, outcomes, deflection per conversation, tickets, articles incl. walkthroughs ending in a
ticket and never cited; the gap questions on the outcome rows), for windows ending on random days of the last
year: p50 / p95 / max over the repeats. `--reference` also times the same figures counted from the outcome
rows turn by turn (app/insights/reference.py, what the server read before the rollups) and checks both agree. The gap clustering is timed apart (it embeds the window's unanswered questions once, then reads its
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

from sqlalchemy import func, select

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


from app.insights import figures, reference, rollup  # noqa: E402
from app.insights.figures import Window  # noqa: E402
from app.insights.gaps import MAX_QUESTIONS, knowledge_gaps  # noqa: E402
from app.storage import Database  # noqa: E402
from app.storage.schema import INSIGHT_ROLLUPS, turn_outcomes  # noqa: E402

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
    """Bulk-load the synthetic turns: the outcome table's secondary indexes dropped, the rows streamed in (COPY on
    Postgres, executemany in batches of 50,000 on SQLite), the indexes built again, statistics gathered."""
    started = time.perf_counter()
    rng = random.Random(seed)
    indexes = sorted(turn_outcomes.indexes, key=lambda index: str(index.name))
    with db.begin() as conn:
        for index in indexes:
            index.drop(conn)
    raw = db.engine.raw_connection()
    try:
        cursor = raw.cursor()
        if db.is_postgres:
            with cursor.copy(f"COPY turn_outcomes ({', '.join(COLUMNS)}) FROM STDIN") as copy:
                for row in synthetic_rows(turns, days, end_day, rng):
                    copy.write_row([row[c] for c in COLUMNS])
        else:
            cursor.execute("PRAGMA cache_size = -524288")  # 512 MB: the random primary key stays in memory
            statement = f"INSERT INTO turn_outcomes ({', '.join(COLUMNS)}) VALUES ({', '.join('?' * len(COLUMNS))})"
            batch: list[tuple] = []
            for row in synthetic_rows(turns, days, end_day, rng):
                batch.append(tuple(row[c] for c in COLUMNS))
                if len(batch) == 50_000:
                    cursor.executemany(statement, batch)
                    batch.clear()
            if batch:
                cursor.executemany(statement, batch)
        raw.commit()
    finally:
        raw.close()
    with db.begin() as conn:
        for index in indexes:
            index.create(conn)
    analyze(db, "turn_outcomes")
    return time.perf_counter() - started


def analyze(db: Database, *tables: str) -> None:
    """What autovacuum does after a bulk load on Postgres (statistics and the visibility map); ANALYZE on SQLite."""
    raw = db.engine.raw_connection()
    try:
        if db.is_postgres:
            raw.driver_connection.autocommit = True
            raw.driver_connection.execute(f"VACUUM ANALYZE {', '.join(tables)}")
        else:
            raw.cursor().execute("ANALYZE")
            raw.commit()
    finally:
        raw.close()


def build_rollups(db: Database) -> float:
    """The per-day rollups of every loaded turn, in bulk, as the server rebuilds them (app/insights/rollup.py)."""
    started = time.perf_counter()
    with db.begin() as conn:
        rollup.rebuild(conn)
    analyze(db, *(table.name for table in INSIGHT_ROLLUPS))
    return time.perf_counter() - started


def time_figures(db: Database, window: Window, documents: list[dict], counted=figures) -> dict[str, float]:
    """Each figure's SQL for one window, wall and CPU ms; `counted`: the rollups (app/insights/figures.py) or
    the outcome rows turn by turn (app/insights/reference.py)."""
    spent: dict[str, float] = {}
    with db.connect() as conn:
        for name, run in (
            ("volume", lambda: counted.volume(conn, window)),
            ("deflection", lambda: counted.deflection(conn, window)),
            ("tickets", lambda: counted.tickets(conn, window)),
            ("articles", lambda: counted.articles(conn, window, documents)),
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
        print(
            f"\n{name}: {args.turns:,} turns over {args.days} days written in {filled:.1f} s "
            f"({args.turns / filled:,.0f} turns/s; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)"
        )
        built = build_rollups(db)
        with db.connect() as conn:
            sizes = {t.name: conn.execute(select(func.count()).select_from(t)).scalar() for t in INSIGHT_ROLLUPS}
        print(
            f"  rollups rebuilt in bulk in {built:.1f} s: "
            + ", ".join(f"{table} {n:,}" for table, n in sizes.items())
            + f" rows (load average {os.getloadavg()[0]:.1f})"
        )
        rng = random.Random(args.seed + 1)
        windows = []
        for i in range(args.repeats):
            last = date.today() - timedelta(days=0 if i == 0 else rng.randrange(args.days - args.window))
            windows.append(Window.of(last - timedelta(days=args.window - 1), last))
        result: dict = {"fill_s": filled, "rollups_s": built}
        for label, counted in (("rollups", figures), ("outcome rows, turn by turn", reference)):
            if counted is reference and not args.reference:
                continue
            samples = [time_figures(db, window, documents, counted) for window in windows]
            totals = [s["total"] for s in samples]
            cpu = [s["total_cpu"] for s in samples]
            print(
                f"  figures SQL from the {label}, {args.window}-day window, {args.repeats} windows: "
                f"p50 {statistics.median(totals):.0f} ms, p95 {pct(totals, 0.95):.0f} ms, max {max(totals):.0f} ms "
                f"(target p95 ≤ 500 ms); load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
            )
            if not db.is_postgres:  # in-process: the CPU the queries took, whatever else the machine was doing
                print(
                    f"  CPU of this process for them: p50 {statistics.median(cpu):.0f} ms, p95 {pct(cpu, 0.95):.0f} ms"
                )
            for part in PARTS:
                values = [s[part] for s in samples]
                print(f"    {part:14} p50 {statistics.median(values):6.0f} ms  p95 {pct(values, 0.95):6.0f} ms")
            result[label] = {"p50": statistics.median(totals), "p95": pct(totals, 0.95)}
        if args.reference:  # the two ways of counting give the same figures
            with db.connect() as conn:
                for window in windows[:3]:
                    same = all(
                        getattr(figures, part)(conn, window) == getattr(reference, part)(conn, window)
                        for part in ("volume", "deflection", "tickets")
                    ) and figures.articles(conn, window, documents) == reference.articles(conn, window, documents)
                    print(f"  {window.first} … {window.last}: rollups and rows agree: {same}")
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
    parser.add_argument(
        "--reference",
        action="store_true",
        help="also time the figures counted from the outcome rows turn by turn (app/insights/reference.py), and "
        "check that both give the same figures",
    )
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
