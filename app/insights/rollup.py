"""The per-day rollups of the outcome rows (app/storage/schema.py `insight_*`): what the insights figures read,
so a window of days costs its days' few summary rows instead of its turns.

Each turn is counted in as it is written (`add_turn`, in the transaction that writes its outcome row) and a vote
moves its counts when it arrives or changes (`change_vote`); a ticket created later is a turn of its own. Every
rollup column is a sum, or the latest / earliest time of something — so the counts stay exact whatever order
turns and votes arrive in. `rebuild` recomputes a range of days from `turn_outcomes` in bulk (after a bulk load,
and what the migration that adds the rollups does), `prune` drops the days past the retention.

The figures counted from the rollups are the same numbers as counted from the outcome rows themselves
(app/insights/reference.py; tests/storage/test_insights_rollup.py compares them)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy import ColumnElement, case, delete, func, or_, select
from sqlalchemy.engine import Connection

from app.storage import Database
from app.storage.schema import (
    INSIGHT_ROLLUPS,
    insight_articles,
    insight_conversations,
    insight_counts,
    insight_sections,
    insight_walkthroughs,
    turn_outcomes,
)

T = turn_outcomes
# what counts as an answer a user got: a cited answer or a walkthrough from an article
ANSWERED = frozenset({"answered", "walkthrough_step", "resolved"})
UNANSWERED = ("abstained", "ticket_offered", "handoff", "out_of_scope")


def _later(current: Any, new: Any) -> ColumnElement:
    """The later of two times either of which may be NULL (SQLite's max(a, NULL) is NULL, Postgres' greatest
    ignores it: spelt out, the same on both)."""
    return case((new.is_(None), current), (or_(current.is_(None), new > current), new), else_=current)


def _earlier(current: Any, new: Any) -> ColumnElement:
    return case((new < current, new), else_=current)


def _key(row: Mapping[str, Any]) -> dict[str, Any]:
    return {"day": int(row["day"]), "collection": row.get("collection") or ""}


def _add(db: Database, conn: Connection, table, key: dict[str, Any], counts: dict[str, int]) -> None:
    """Add `counts` to the row `key` of a rollup (created at these counts when it is not there yet)."""
    statement = db.insert(table).values(**key, **counts)
    conn.execute(
        statement.on_conflict_do_update(
            index_elements=list(key),
            set_={name: table.c[name] + statement.excluded[name] for name in counts},
        )
    )


def _confirms(outcome: str, vote: str | None) -> int:
    """A turn on which the user said it works: resolved, or its answer voted Helpful."""
    return int(outcome == "resolved" or vote == "up")


def add_turn(db: Database, conn: Connection, row: Mapping[str, Any]) -> None:
    """Count a newly written outcome row (`row`: its columns) into every rollup it belongs to."""
    key = _key(row)
    outcome = row["outcome"]
    vote = row.get("vote")
    ticket = outcome == "ticket_created"
    _add(
        db,
        conn,
        insight_counts,
        key
        | {
            "channel": row["channel"],
            "hour": int(row["hour"]),
            "outcome": outcome,
            "ticket_category": (row.get("ticket_category") or "") if ticket else "",
            "ticket_priority": (row.get("ticket_priority") or "") if ticket else "",
        },
        {"turns": 1},
    )
    doc = row.get("doc_id") or ""
    cites, up, down = int(outcome in ANSWERED), int(vote == "up"), int(vote == "down")
    if cites or up or down:
        _add(
            db, conn, insight_articles, key | {"doc_id": doc}, {"citations": cites, "helpful": up, "not_helpful": down}
        )
    if up or down:
        section = row.get("section") or ""
        _add(
            db, conn, insight_sections, key | {"doc_id": doc, "section": section}, {"helpful": up, "not_helpful": down}
        )
    if outcome != "conversation":
        ts = float(row["ts"])
        C = insight_conversations
        statement = db.insert(C).values(
            **key,
            session_id=row["session_id"],
            tickets=int(ticket),
            confirmations=_confirms(outcome, vote),
            answered_at=ts if outcome in ANSWERED else None,
            unanswered_at=ts if outcome in UNANSWERED else None,
            last_ticket=ts if ticket else None,
        )
        new = statement.excluded
        conn.execute(
            statement.on_conflict_do_update(
                index_elements=["day", "collection", "session_id"],
                set_={
                    "tickets": C.c.tickets + new.tickets,
                    "confirmations": C.c.confirmations + new.confirmations,
                    "answered_at": _later(C.c.answered_at, new.answered_at),
                    "unanswered_at": _later(C.c.unanswered_at, new.unanswered_at),
                    "last_ticket": _later(C.c.last_ticket, new.last_ticket),
                },
            )
        )
    if outcome == "walkthrough_step":
        W = insight_walkthroughs
        statement = db.insert(W).values(**key, session_id=row["session_id"], doc_id=doc, first_step=float(row["ts"]))
        conn.execute(
            statement.on_conflict_do_update(
                index_elements=["day", "collection", "session_id", "doc_id"],
                set_={"first_step": _earlier(W.c.first_step, statement.excluded.first_step)},
            )
        )


def change_vote(db: Database, conn: Connection, before: Mapping[str, Any], vote: str | None) -> None:
    """Move the counts of a turn whose vote changes from `before["vote"]` to `vote` (`before`: the turn's row
    as it was, at least day, collection, session_id, outcome, doc_id, section and vote)."""
    old = before.get("vote")
    if old == vote:
        return
    key = _key(before)
    up = int(vote == "up") - int(old == "up")
    down = int(vote == "down") - int(old == "down")
    doc = before.get("doc_id") or ""
    if up or down:
        _add(db, conn, insight_articles, key | {"doc_id": doc}, {"citations": 0, "helpful": up, "not_helpful": down})
        section = before.get("section") or ""
        _add(
            db, conn, insight_sections, key | {"doc_id": doc, "section": section}, {"helpful": up, "not_helpful": down}
        )
    outcome = before["outcome"]
    confirms = _confirms(outcome, vote) - _confirms(outcome, old)
    if outcome != "conversation" and confirms:
        C = insight_conversations
        conn.execute(
            C.update()
            .where(C.c.day == key["day"], C.c.collection == key["collection"], C.c.session_id == before["session_id"])
            .values(confirmations=C.c.confirmations + confirms)
        )


def _days(table, first: int | None, last: int | None) -> list:
    clauses = []
    if first is not None:
        clauses.append(table.c.day >= first)
    if last is not None:
        clauses.append(table.c.day <= last)
    return clauses


def rebuild(conn: Connection, first: int | None = None, last: int | None = None) -> None:
    """Recompute the rollups of days `first` .. `last` (UTC day numbers, both included; None: unbounded) from
    the outcome rows, in bulk: one grouped INSERT … SELECT per rollup."""
    for table in INSIGHT_ROLLUPS:
        conn.execute(delete(table).where(*_days(table, first, last)))
    within = _days(T, first, last)
    ticket = T.c.outcome == "ticket_created"
    doc = func.coalesce(T.c.doc_id, "")
    category = func.coalesce(case((ticket, T.c.ticket_category)), "")
    priority = func.coalesce(case((ticket, T.c.ticket_priority)), "")
    grouped = (T.c.day, T.c.collection, T.c.channel, T.c.hour, T.c.outcome, category, priority)
    conn.execute(
        insight_counts.insert().from_select(
            ["day", "collection", "channel", "hour", "outcome", "ticket_category", "ticket_priority", "turns"],
            select(*grouped, func.count()).where(*within).group_by(*grouped),
        )
    )
    answered = T.c.outcome.in_(sorted(ANSWERED))
    cites = func.sum(case((answered, 1), else_=0))
    up = func.sum(case((T.c.vote == "up", 1), else_=0))
    down = func.sum(case((T.c.vote == "down", 1), else_=0))
    conn.execute(
        insight_articles.insert().from_select(
            ["day", "collection", "doc_id", "citations", "helpful", "not_helpful"],
            select(T.c.day, T.c.collection, doc, cites, up, down)
            .where(*within, or_(answered, T.c.vote.in_(("up", "down"))))
            .group_by(T.c.day, T.c.collection, doc),
        )
    )
    section = func.coalesce(T.c.section, "")
    conn.execute(
        insight_sections.insert().from_select(
            ["day", "collection", "doc_id", "section", "helpful", "not_helpful"],
            select(T.c.day, T.c.collection, doc, section, up, down)
            .where(*within, T.c.vote.in_(("up", "down")))
            .group_by(T.c.day, T.c.collection, doc, section),
        )
    )
    conn.execute(
        insight_conversations.insert().from_select(
            ["day", "collection", "session_id", "tickets", "confirmations", "answered_at", "unanswered_at"]
            + ["last_ticket"],
            select(
                T.c.day,
                T.c.collection,
                T.c.session_id,
                func.sum(case((ticket, 1), else_=0)),
                func.sum(case((T.c.outcome == "resolved", 1), (T.c.vote == "up", 1), else_=0)),
                func.max(case((answered, T.c.ts))),
                func.max(case((T.c.outcome.in_(UNANSWERED), T.c.ts))),
                func.max(case((ticket, T.c.ts))),
            )
            .where(*within, T.c.outcome != "conversation")
            .group_by(T.c.day, T.c.collection, T.c.session_id),
        )
    )
    conn.execute(
        insight_walkthroughs.insert().from_select(
            ["day", "collection", "session_id", "doc_id", "first_step"],
            select(T.c.day, T.c.collection, T.c.session_id, doc, func.min(T.c.ts))
            .where(*within, T.c.outcome == "walkthrough_step")
            .group_by(T.c.day, T.c.collection, T.c.session_id, doc),
        )
    )


def prune(conn: Connection, before_day: int) -> None:
    """Drop the rollups of the days before `before_day` (the outcome rows' retention)."""
    for table in INSIGHT_ROLLUPS:
        conn.execute(delete(table).where(table.c.day < before_day))
