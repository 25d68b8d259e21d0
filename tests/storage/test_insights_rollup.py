"""The per-day rollups the insights figures read, on both engines: over random turns written one by one, votes
cast and changed afterwards and tickets created days later, every figure counted from the rollups equals the
same figure counted turn by turn from the outcome rows (app/insights/reference.py); a bulk rebuild gives the
rollups the store kept up to date; retention prunes them with the rows; the migration that adds them fills them
from the rows already written."""

from __future__ import annotations

import random
from datetime import date, timedelta

import sqlalchemy as sa
from alembic import command

from app.insights import figures, reference, rollup
from app.insights.figures import Window
from app.insights.outcomes import OutcomeStore
from app.storage import Database
from app.storage.schema import INSIGHT_ROLLUPS, turn_outcomes

DAY = 86400
FIRST_DAY = 20_000  # 2024-10-04
DAYS = 12
OUTCOMES = (
    ("answered", 40),
    ("walkthrough_step", 15),
    ("resolved", 5),
    ("abstained", 6),
    ("ticket_offered", 7),
    ("ticket_created", 8),
    ("handoff", 2),
    ("out_of_scope", 3),
    ("clarified", 5),
    ("conversation", 9),
)
DOCS = ("vpn01", "prn01", "wifi1", "mail1", "room1", None)
SECTIONS = ("Windows", "macOS", "Drivers", None)


def random_turns(rng: random.Random, conversations: int) -> list[dict]:
    """Conversations of 1–6 turns, some over several days, in three collections, some articles and sections
    missing, tickets of every category and priority (some missing)."""
    outcomes, weights = zip(*OUTCOMES, strict=True)
    rows = []
    for n in range(conversations):
        session = f"s{n}"
        collection = rng.choice(("", "", "hr", "it,hr"))
        channel = rng.choice(("web", "api", "cli", "slack"))
        ts = (FIRST_DAY + rng.randrange(DAYS)) * DAY + rng.uniform(0, DAY)
        for _ in range(rng.randint(1, 6)):
            ts += rng.choice((30.0, 600.0, 20_000.0, 2 * DAY))  # some conversations carry on the next days
            outcome = rng.choices(outcomes, weights)[0]
            created = outcome == "ticket_created"
            doc = rng.choice(DOCS)
            rows.append(
                {
                    "trace_id": f"t{len(rows)}",
                    "ts": ts,
                    "day": int(ts // DAY),
                    "hour": int(ts % DAY // 3600),
                    "channel": channel,
                    "collection": collection if rng.random() < 0.9 else "it",
                    "session_id": session,
                    "asker": f"a{n % 17}",
                    "action": "answer",
                    "outcome": outcome,
                    "doc_id": doc,
                    "doc_title": f"Title of {doc}" if doc else None,
                    "section": rng.choice(SECTIONS) if doc else None,
                    "cited": "[]",
                    "confidence": 0.5,
                    "vote": None,
                    "ticket_id": f"DM-{len(rows)}" if created else None,
                    "ticket_priority": rng.choice(("low", "high", None)) if created else None,
                    "ticket_category": rng.choice(("incident", "request", "handoff", None)) if created else None,
                    "language": "",
                    "latency_ms": 100.0,
                    "gap": 0,
                    "question": None,
                }
            )
    return rows


def windows() -> list[Window]:
    first = date(1970, 1, 1) + timedelta(days=FIRST_DAY)
    spans = [(0, DAYS + 4), (0, 0), (3, 7), (5, 5), (DAYS - 2, DAYS + 1), (DAYS + 3, DAYS + 6)]
    return [
        Window(first + timedelta(days=a), first + timedelta(days=b), collection)
        for a, b in spans
        for collection in (None, "", "hr", "it,hr", "it", "nope")
    ]


def every_figure(module, conn, window: Window) -> dict:
    documents = [{"doc_id": d, "title": d.upper()} for d in ("vpn01", "prn01", "wifi1", "mail1", "room1", "new01")]
    return {
        "volume": module.volume(conn, window),
        "deflection": module.deflection(conn, window),
        "tickets": module.tickets(conn, window),
        "articles": module.articles(conn, window, documents),
        "articles_without_documents": module.articles(conn, window),
    }


def assert_rollups_equal_the_rows(db: Database) -> None:
    with db.connect() as conn:
        for window in windows():
            assert every_figure(figures, conn, window) == every_figure(reference, conn, window), window


def rollup_rows(db: Database) -> dict[str, list]:
    """Every rollup's rows, but the counts of a day all of whose conversations went on another day (zeros)."""
    with db.connect() as conn:
        return {
            table.name: sorted(
                tuple(row)
                for row in conn.execute(sa.select(table)).all()
                if table.name not in ("insight_deflection", "insight_walkthrough_days")
                or any(row[len(table.primary_key.columns) :])
            )
            for table in INSIGHT_ROLLUPS
        }


def test_figures_from_the_rollups_equal_the_figures_from_the_rows(database_url):
    rng = random.Random(20241004)
    db = Database.open(database_url)
    try:
        store = OutcomeStore(db, clock=lambda: (FIRST_DAY + DAYS) * DAY)
        rows = random_turns(rng, 220)
        rng.shuffle(rows)  # turns of one conversation arrive in any order (a ticket's row before its offer's)
        for row in rows:
            assert store.record(row)
        assert store.record(rows[0])  # a retried write counts once
        assert_rollups_equal_the_rows(db)

        # votes after the turns: cast, changed, cast again the same, on any outcome (small talk too)
        voted = rng.sample(rows, 150)
        for row in voted:
            store.record_vote(row["trace_id"], rng.choice(("up", "down")))
        for row in voted[:60]:
            store.record_vote(row["trace_id"], rng.choice(("up", "down")))
        store.record_vote("no-such-turn", "up")
        # tickets created later in conversations that had walkthroughs, some the next day or after the window
        walked = sorted({r["session_id"] for r in rows if r["outcome"] == "walkthrough_step"})
        for i, session in enumerate(rng.sample(walked, min(25, len(walked)))):
            ts = max(r["ts"] for r in rows if r["session_id"] == session) + rng.choice((60.0, DAY, 3 * DAY))
            later = rows[0] | {
                "trace_id": f"late{i}",
                "session_id": session,
                "ts": ts,
                "day": int(ts // DAY),
                "hour": int(ts % DAY // 3600),
                "outcome": "ticket_created",
                "doc_id": None,
                "section": None,
                "ticket_category": "incident",
                "ticket_priority": "medium",
            }
            assert store.record(later)
        assert_rollups_equal_the_rows(db)

        # the bulk rebuild (a whole range, then a few days of it) gives the rollups the store kept
        kept = rollup_rows(db)
        assert kept["insight_sections"] and kept["insight_walkthroughs"]
        assert {row[-1] for row in kept["insight_conversations"]} == {0, 1}  # lone and spanning conversations
        assert {row[-1] for row in kept["insight_walkthroughs"]} == {0, 1}
        assert any(row[-1] for row in kept["insight_walkthrough_days"])  # a lone walkthrough that ended in a ticket
        with db.begin() as conn:
            rollup.rebuild(conn)
        assert rollup_rows(db) == kept
        with db.begin() as conn:
            rollup.rebuild(conn, FIRST_DAY + 3, FIRST_DAY + 5)
        assert rollup_rows(db) == kept

        # retention drops the old days from both: the figures still agree
        store = OutcomeStore(db, retention_days=DAYS - 4, clock=lambda: (FIRST_DAY + DAYS) * DAY)
        assert store.prune() > 0
        with db.connect() as conn:
            for table in INSIGHT_ROLLUPS:
                oldest = conn.execute(sa.select(sa.func.min(table.c.day))).scalar()
                assert oldest is None or oldest >= FIRST_DAY + 4
        assert_rollups_equal_the_rows(db)
    finally:
        db.close()


def test_the_migration_fills_the_rollups_from_the_rows_already_written(database_url):
    rng = random.Random(7)
    db = Database.open(database_url)
    try:
        with db.connect() as conn:
            command.downgrade(db._alembic_config(conn), "0012")
            conn.commit()
        with db.begin() as conn:  # rows written by the code before the rollups, votes included
            rows = random_turns(rng, 120)
            for row in rows:
                row["vote"] = rng.choice((None, None, "up", "down"))
            conn.execute(turn_outcomes.insert(), rows)
        assert db.upgrade() is not None
        assert_rollups_equal_the_rows(db)
        kept = rollup_rows(db)
        with db.begin() as conn:
            rollup.rebuild(conn)
        assert rollup_rows(db) == kept
    finally:
        db.close()


def test_the_cli_rebuilds_the_rollups_of_rows_written_around_the_store(tmp_path, capsys):
    from app.cli import main

    db = Database.open(f"sqlite:///{tmp_path / 'deskmate.sqlite'}")
    try:
        with db.begin() as conn:  # a restore of the outcome table alone: rows, no rollups
            conn.execute(turn_outcomes.insert(), random_turns(random.Random(3), 40))
        assert all(not rows for rows in rollup_rows(db).values())
        assert main(["--data-dir", str(tmp_path), "db", "rebuild-insights"]) == 0
        assert "rebuilt" in capsys.readouterr().out
        assert rollup_rows(db)["insight_outcomes"]
        assert_rollups_equal_the_rows(db)
    finally:
        db.close()
