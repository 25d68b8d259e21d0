"""The per-day rollups of the outcome rows (app/storage/schema.py `insight_*`): what the insights figures read,
so a window of days costs its days' few summary rows instead of its turns.

Each turn is counted in as it is written (`add_turn`, in the transaction that writes its outcome row) and a vote
moves its counts when it arrives or changes (`change_vote`); a ticket created later is a turn of its own. The
rollup columns are sums, or the latest / earliest time of something, so the counts stay exact whatever order
turns and votes arrive in. A conversation is a row per day (and collection) it asked something in; the many
that live one day only are also counted, as they ended, in their day's `insight_deflection`, so a window's
deflection merges the rows of the few that span days only. `rebuild` recomputes a range of days from `turn_outcomes` in bulk (after a bulk load,
and what the migration that adds the rollups does), `prune` drops the days past the retention.

The figures counted from the rollups are the same numbers as counted from the outcome rows themselves
(app/insights/reference.py; tests/storage/test_insights_rollup.py compares them)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy import ColumnElement, and_, case, delete, func, or_, select, update
from sqlalchemy.engine import Connection

from app.storage import Database
from app.storage.schema import (
    INSIGHT_ROLLUPS,
    insight_articles,
    insight_conversations,
    insight_deflection,
    insight_hours,
    insight_outcomes,
    insight_sections,
    insight_walkthrough_days,
    insight_walkthroughs,
    turn_outcomes,
)

T = turn_outcomes
# what counts as an answer a user got: a cited answer or a walkthrough from an article
ANSWERED = frozenset({"answered", "walkthrough_step", "resolved"})
UNANSWERED = ("abstained", "ticket_offered", "handoff", "out_of_scope")


def _earlier(current: Any, new: Any) -> ColumnElement:
    return case((new < current, new), else_=current)


def _key(row: Mapping[str, Any]) -> dict[str, Any]:
    return {"day": int(row["day"]), "collection": row.get("collection") or ""}


def _add(db: Database, conn: Connection, table, key: dict[str, Any], counts: dict[str, int]) -> None:
    """Add `counts` to the row `key` of a rollup (created at these counts when it is not there yet)."""
    conn.execute(_upsert(db, table, tuple(key), tuple(counts)), key | counts)


_UPSERTS: dict[tuple, Any] = {}


def _upsert(db: Database, table, keys: tuple[str, ...], counts: tuple[str, ...]):
    """The statement `_add` runs, built once per rollup and set of columns: a turn's write runs a handful of
    them, and building one costs more CPU than the database takes to run it."""
    made = (db.is_postgres, table.name, keys, counts)
    if made not in _UPSERTS:
        statement = db.insert(table)
        _UPSERTS[made] = statement.on_conflict_do_update(
            index_elements=list(keys), set_={name: table.c[name] + statement.excluded[name] for name in counts}
        )
    return _UPSERTS[made]


def _confirms(outcome: str, vote: str | None) -> int:
    """A turn on which the user said it works: resolved, or its answer voted Helpful."""
    return int(outcome == "resolved" or vote == "up")


def add_turn(db: Database, conn: Connection, row: Mapping[str, Any]) -> None:
    """Count a newly written outcome row (`row`: its columns) into every rollup it belongs to."""
    key = _key(row)
    outcome = row["outcome"]
    vote = row.get("vote")
    ticket = outcome == "ticket_created"
    _add(db, conn, insight_hours, key | {"channel": row["channel"], "hour": int(row["hour"])}, {"turns": 1})
    _add(
        db,
        conn,
        insight_outcomes,
        key
        | {
            "channel": row["channel"],
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
    if outcome == "conversation":
        return
    session = row["session_id"]
    # first the conversation's rows (locked on Postgres until the transaction ends), then its walkthroughs so
    # far: (day, collection, article) → the first step, and whether it is counted per day
    lone_before, lone_after = _add_to_conversation(db, conn, row)
    W = insight_walkthroughs
    walked = {
        (r.day, r.collection, r.doc_id): (r.first_step, r.alone)
        for r in conn.execute(
            select(W.c.day, W.c.collection, W.c.doc_id, W.c.first_step, W.c.alone).where(W.c.session_id == session)
        )
    }
    now = {place: first for place, (first, _) in walked.items()}
    if outcome == "walkthrough_step":
        place = (key["day"], key["collection"], doc)
        ts = float(row["ts"])
        now[place] = min(ts, now.get(place, ts))
        statement = db.insert(W).values(
            **key, session_id=session, doc_id=doc, first_step=ts, alone=int(lone_after is not None)
        )
        conn.execute(
            statement.on_conflict_do_update(
                index_elements=["day", "collection", "session_id", "doc_id"],
                set_={"first_step": _earlier(W.c.first_step, statement.excluded.first_step)},
            )
        )
    if not now:
        return
    if lone_after is None and any(alone for _, alone in walked.values()):
        # the conversation now spans days or collections: its walkthroughs are merged per window
        conn.execute(update(W).where(W.c.session_id == session, W.c.alone == 1).values(alone=0))
    before = _lone_walkthroughs({place: first for place, (first, _) in walked.items()}, lone_before)
    after = _lone_walkthroughs(now, lone_after)
    for place in sorted(set(before) | set(after)):
        was, then = before.get(place, (0, 0)), after.get(place, (0, 0))
        if was != then:
            day, collection, doc_id = place
            _add(
                db,
                conn,
                insight_walkthrough_days,
                {"day": day, "collection": collection, "doc_id": doc_id},
                {"walkthroughs": then[0] - was[0], "ended_in_ticket": then[1] - was[1]},
            )


def _lone_walkthroughs(
    walked: dict[tuple[int, str, str], float], last_ticket: Any
) -> dict[tuple[int, str, str], tuple[int, int]]:
    """What `insight_walkthrough_days` counts of a conversation of one day (and collection) only: per article
    it walked through, (1, whether a ticket came after its first step); nothing for one that spans days
    (`last_ticket` None)."""
    if last_ticket is None:
        return {}
    ticket = last_ticket[0]
    return {place: (1, int(ticket is not None and ticket > first)) for place, first in walked.items()}


def _ended(state: Mapping[str, Any]) -> dict[str, int]:
    """How a conversation's rows (merged) say it ended, as `insight_deflection` counts it."""
    ticketed = state["tickets"] > 0
    answered_at, unanswered_at = state["answered_at"], state["unanswered_at"]
    answered = answered_at is not None and (unanswered_at is None or answered_at > unanswered_at)
    return {
        "conversations": 1,
        "deflected": int(answered and not ticketed),
        "confirmed": int(state["confirmations"] > 0 and not ticketed),
        "ticketed": int(ticketed),
    }


def _add_ended(
    db: Database, conn: Connection, key: dict[str, Any], plus: dict[str, int] | None, minus: dict[str, int] | None
) -> None:
    """Count a lone conversation's ending (`plus`) into its day instead of the one it had (`minus`)."""
    delta = {name: (plus or {}).get(name, 0) - (minus or {}).get(name, 0) for name in _ENDINGS}
    if any(delta.values()):
        _add(db, conn, insight_deflection, key, delta)


_ENDINGS = ("conversations", "deflected", "confirmed", "ticketed")


def _add_to_conversation(
    db: Database, conn: Connection, row: Mapping[str, Any]
) -> tuple[tuple[float | None] | None, tuple[float | None] | None]:
    """Merge a turn (other than small talk) into its conversation's row of the day. A conversation's only row
    is counted in its day's `insight_deflection` as it stands; once the conversation has a second row (another
    day or collection) the first leaves that count and a window merges the rows instead. Returns, before and
    after the turn, (its last ticket's time,) while the conversation has one row only, else None."""
    C = insight_conversations
    key = _key(row)
    session = row["session_id"]
    outcome = row["outcome"]
    ts = float(row["ts"])
    rows: list[dict[str, Any]] = [
        dict(r) for r in conn.execute(select(C).where(C.c.session_id == session).with_for_update()).mappings()
    ]
    lone_before = (rows[0]["last_ticket"],) if len(rows) == 1 and rows[0]["alone"] else None
    mine = next((r for r in rows if r["day"] == key["day"] and r["collection"] == key["collection"]), None)
    empty: dict[str, Any] = {"tickets": 0, "confirmations": 0, "answered_at": None, "unanswered_at": None}
    state: dict[str, Any] = dict(mine) if mine is not None else empty | {"last_ticket": None}

    def later(current: float | None, new: float | None) -> float | None:
        return current if new is None or (current is not None and current >= new) else new

    state["tickets"] += int(outcome == "ticket_created")
    state["confirmations"] += _confirms(outcome, row.get("vote"))
    state["answered_at"] = later(state["answered_at"], ts if outcome in ANSWERED else None)
    state["unanswered_at"] = later(state["unanswered_at"], ts if outcome in UNANSWERED else None)
    state["last_ticket"] = later(state["last_ticket"], ts if outcome == "ticket_created" else None)
    values = {name: state[name] for name in ("tickets", "confirmations", "answered_at", "unanswered_at")}
    values["last_ticket"] = state["last_ticket"]
    if mine is not None:
        conn.execute(
            update(C)
            .where(C.c.day == key["day"], C.c.collection == key["collection"], C.c.session_id == session)
            .values(values)
        )
        if mine["alone"]:
            _add_ended(db, conn, key, _ended(state), _ended(mine))
        return lone_before, ((state["last_ticket"],) if lone_before is not None else None)
    conn.execute(C.insert().values(**key, session_id=session, alone=int(not rows), **values))
    if not rows:
        _add_ended(db, conn, key, _ended(state), None)
        return None, (state["last_ticket"],)
    for other in rows:  # the conversation's row that was alone is now one of two
        if other["alone"]:
            conn.execute(
                update(C)
                .where(C.c.day == other["day"], C.c.collection == other["collection"], C.c.session_id == session)
                .values(alone=0)
            )
            _add_ended(db, conn, _key(other), None, _ended(other))
    return lone_before, None


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
        found = (
            conn.execute(
                select(C)
                .where(
                    C.c.day == key["day"], C.c.collection == key["collection"], C.c.session_id == before["session_id"]
                )
                .with_for_update()
            )
            .mappings()
            .first()
        )
        if found is None:
            return
        state = dict(found)
        conn.execute(
            update(C)
            .where(C.c.day == key["day"], C.c.collection == key["collection"], C.c.session_id == before["session_id"])
            .values(confirmations=C.c.confirmations + confirms)
        )
        if state["alone"]:
            changed = dict(state) | {"confirmations": state["confirmations"] + confirms}
            _add_ended(db, conn, key, _ended(changed), _ended(state))


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
    hourly = (T.c.day, T.c.collection, T.c.channel, T.c.hour)
    conn.execute(
        insight_hours.insert().from_select(
            ["day", "collection", "channel", "hour", "turns"],
            select(*hourly, func.count()).where(*within).group_by(*hourly),
        )
    )
    grouped = (T.c.day, T.c.collection, T.c.channel, T.c.outcome, category, priority)
    conn.execute(
        insight_outcomes.insert().from_select(
            ["day", "collection", "channel", "outcome", "ticket_category", "ticket_priority", "turns"],
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
    _rebuild_deflection(conn)
    conn.execute(
        insight_walkthroughs.insert().from_select(
            ["day", "collection", "session_id", "doc_id", "first_step"],
            select(T.c.day, T.c.collection, T.c.session_id, doc, func.min(T.c.ts))
            .where(*within, T.c.outcome == "walkthrough_step")
            .group_by(T.c.day, T.c.collection, T.c.session_id, doc),
        )
    )
    _rebuild_walkthrough_days(conn)


def _rebuild_deflection(conn: Connection) -> None:
    """Which conversations have one row only (over every day: a range rebuilt may have given one a second), and
    each day's count of how those ended."""
    C = insight_conversations
    spanning = select(C.c.session_id).group_by(C.c.session_id).having(func.count() > 1)
    conn.execute(update(C).values(alone=case((C.c.session_id.in_(spanning), 0), else_=1)))
    conn.execute(delete(insight_deflection))
    ticketed = C.c.tickets > 0
    answered = and_(C.c.answered_at.is_not(None), or_(C.c.unanswered_at.is_(None), C.c.answered_at > C.c.unanswered_at))
    conn.execute(
        insight_deflection.insert().from_select(
            ["day", "collection", *_ENDINGS],
            select(
                C.c.day,
                C.c.collection,
                func.count(),
                func.sum(case((and_(answered, C.c.tickets == 0), 1), else_=0)),
                func.sum(case((and_(C.c.confirmations > 0, C.c.tickets == 0), 1), else_=0)),
                func.sum(case((ticketed, 1), else_=0)),
            )
            .where(C.c.alone == 1)
            .group_by(C.c.day, C.c.collection),
        )
    )


def _rebuild_walkthrough_days(conn: Connection) -> None:
    """The walkthroughs of the conversations of one day only, per day and article (after `_rebuild_deflection`,
    whose `alone` they take)."""
    C, W = insight_conversations, insight_walkthroughs
    lone = select(C.c.session_id).where(C.c.alone == 1)
    conn.execute(update(W).values(alone=case((W.c.session_id.in_(lone), 1), else_=0)))
    conn.execute(delete(insight_walkthrough_days))
    same = and_(C.c.day == W.c.day, C.c.collection == W.c.collection, C.c.session_id == W.c.session_id)
    conn.execute(
        insight_walkthrough_days.insert().from_select(
            ["day", "collection", "doc_id", "walkthroughs", "ended_in_ticket"],
            select(
                W.c.day,
                W.c.collection,
                W.c.doc_id,
                func.count(),
                func.sum(case((C.c.last_ticket > W.c.first_step, 1), else_=0)),
            )
            .select_from(W.join(C, same))
            .where(W.c.alone == 1)
            .group_by(W.c.day, W.c.collection, W.c.doc_id),
        )
    )


def prune(conn: Connection, before_day: int) -> None:
    """Drop the rollups of the days before `before_day` (the outcome rows' retention)."""
    for table in INSIGHT_ROLLUPS:
        conn.execute(delete(table).where(table.c.day < before_day))
