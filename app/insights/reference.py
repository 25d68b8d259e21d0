"""The insights figures counted from the outcome rows themselves (`turn_outcomes`), turn by turn in SQL: the
reference the rollup-based figures (app/insights/figures.py) must equal — tests/storage/test_insights_rollup.py
compares the two over random turns on both engines. Not what the server reads: on a year of turns these scan a
window's every turn.

A window is a range of UTC days, both ends included; `collection` narrows it to the turns asked of one
knowledge collection ("" is the turns that named none)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import and_, case, desc, distinct, func, select
from sqlalchemy.engine import Connection

from app.insights.figures import TOP_ARTICLES, TOP_SECTIONS, Window, _cited, _share, _titles, day_label
from app.insights.rollup import ANSWERED, UNANSWERED
from app.storage.schema import OUTCOMES, turn_outcomes

T = turn_outcomes


def volume(conn: Connection, window: Window) -> dict:
    """Turns per day and per hour of day (UTC), by channel; and per outcome."""
    where = window.where()
    by_day = conn.execute(
        select(T.c.day, T.c.channel, func.count())
        .where(*where)
        .group_by(T.c.day, T.c.channel)
        .order_by(T.c.day, T.c.channel)
    ).all()
    by_hour = conn.execute(
        select(T.c.hour, T.c.channel, func.count())
        .where(*where)
        .group_by(T.c.hour, T.c.channel)
        .order_by(T.c.hour, T.c.channel)
    ).all()
    by_outcome: dict[str, int] = {
        outcome: n for outcome, n in conn.execute(select(T.c.outcome, func.count()).where(*where).group_by(T.c.outcome))
    }
    return {
        "turns": sum(n for _, _, n in by_day),
        "by_day": [{"day": day_label(d), "channel": c, "turns": n} for d, c, n in by_day],
        "by_hour": [{"hour": h, "channel": c, "turns": n} for h, c, n in by_hour],
        "by_outcome": {outcome: int(by_outcome.get(outcome, 0)) for outcome in OUTCOMES},
    }


def deflection(conn: Connection, window: Window) -> dict:
    """Per conversation: did it end answered or resolved without a ticket (deflected), and did the user say so
    ("it works", a Helpful vote)? Shares of the conversations that asked something (not only small talk)."""
    answered = tuple(sorted(ANSWERED))
    per_conversation = (
        select(
            T.c.session_id,
            func.max(case((T.c.outcome == "ticket_created", 1), else_=0)).label("ticketed"),
            func.max(case((T.c.outcome.in_(answered), T.c.ts))).label("answered_at"),
            func.max(case((T.c.outcome.in_(UNANSWERED), T.c.ts))).label("unanswered_at"),
            func.max(case((T.c.outcome == "resolved", 1), (T.c.vote == "up", 1), else_=0)).label("confirmed"),
        )
        .where(*window.where(), T.c.outcome != "conversation")
        .group_by(T.c.session_id)
        .subquery()
    )
    c = per_conversation.c
    ended_answered = and_(
        c.ticketed == 0, c.answered_at.is_not(None), (c.unanswered_at.is_(None)) | (c.answered_at > c.unanswered_at)
    )
    row = conn.execute(
        select(
            func.count(),
            func.coalesce(func.sum(case((ended_answered, 1), else_=0)), 0),
            func.coalesce(func.sum(case((and_(c.confirmed == 1, c.ticketed == 0), 1), else_=0)), 0),
            func.coalesce(func.sum(c.ticketed), 0),
        ).select_from(per_conversation)
    ).one()
    conversations, deflected, confirmed, ticketed = (int(v or 0) for v in row)
    return {
        "conversations": conversations,
        "deflected": deflected,
        "deflection_rate": _share(deflected, conversations),
        "resolved_by_user": confirmed,
        "resolved_by_user_rate": _share(confirmed, conversations),
        "with_ticket": ticketed,
    }


def tickets(conn: Connection, window: Window) -> dict:
    """Tickets created through deskmate, by category (incident, request, handoff) and priority."""
    rows = conn.execute(
        select(T.c.ticket_category, T.c.ticket_priority, func.count())
        .where(*window.where(), T.c.outcome == "ticket_created")
        .group_by(T.c.ticket_category, T.c.ticket_priority)
    ).all()
    by_category: dict[str, int] = {}
    by_priority: dict[str, int] = {}
    for category, priority, n in rows:
        by_category[category or "incident"] = by_category.get(category or "incident", 0) + n
        by_priority[priority or "unknown"] = by_priority.get(priority or "unknown", 0) + n
    return {"created": sum(by_category.values()), "by_category": by_category, "by_priority": by_priority}


def articles(conn: Connection, window: Window, documents: list[dict] | None = None) -> dict:
    """Most cited articles; Helpful / Not helpful per article and per section; the articles whose walkthroughs
    most often end in a ticket; and (given the collection's documents) the ones never cited in the window.
    Each query reads a covering index (app/storage/schema.py); titles are looked up for the few rows shown."""
    where = window.where()
    answered = T.c.outcome.in_(tuple(sorted(ANSWERED)))
    # no "doc_id IS NOT NULL" in the WHERE: SQLite would then read the rows through the doc_id index; the one
    # group of turns without an article is dropped here instead (hence a row more than shown)
    cited = _cited(
        conn.execute(
            select(T.c.doc_id, func.count().label("n"))
            .where(answered, *where)
            .group_by(T.c.doc_id)
            .order_by(desc("n"), T.c.doc_id)
            .limit(TOP_ARTICLES + 1)
        ).all(),
        TOP_ARTICLES,
    )
    up = func.sum(case((T.c.vote == "up", 1), else_=0))
    down = func.sum(case((T.c.vote == "down", 1), else_=0))
    voted = [T.c.vote.in_(("up", "down")), *where]
    by_article = _cited(
        conn.execute(
            select(T.c.doc_id, up.label("up"), down.label("down"))
            .where(*voted)
            .group_by(T.c.doc_id)
            .order_by((up + down).desc(), T.c.doc_id)
            .limit(TOP_ARTICLES + 1)
        ).all(),
        TOP_ARTICLES,
    )
    by_section = _cited(
        conn.execute(
            select(T.c.doc_id, T.c.section, up, down)
            .where(*voted)
            .group_by(T.c.doc_id, T.c.section)
            .order_by(down.desc(), up.desc(), T.c.doc_id, T.c.section)
            .limit(TOP_SECTIONS + 1)
        ).all(),
        TOP_SECTIONS,
    )
    # a conversation whose walkthrough from the article was followed by a ticket in the same conversation: the
    # window's (and the next day's) tickets, one row per conversation, joined to its walkthrough steps
    first, last = window.days
    ticketed = (
        select(T.c.session_id, func.max(T.c.ts).label("last_ticket"))
        .where(T.c.outcome == "ticket_created", T.c.day >= first, T.c.day <= last + 1)
        .group_by(T.c.session_id)
        .subquery("ticketed")
    )
    walkthroughs = conn.execute(
        select(
            T.c.doc_id,
            func.count(distinct(T.c.session_id)).label("walkthroughs"),
            func.count(distinct(case((ticketed.c.last_ticket > T.c.ts, T.c.session_id)))).label("ticketed"),
        )
        .select_from(T.outerjoin(ticketed, ticketed.c.session_id == T.c.session_id))
        .where(T.c.outcome == "walkthrough_step", *where)
        .group_by(T.c.doc_id)
        .order_by(desc("ticketed"), desc("walkthroughs"), T.c.doc_id)
        .limit(TOP_ARTICLES + 1)
    ).all()
    walkthroughs = _cited(walkthroughs, TOP_ARTICLES)
    ever: set[str | None] = set()
    if documents is not None:
        ever = {doc_id for (doc_id,) in conn.execute(select(T.c.doc_id).where(answered, *where).distinct()).all()}
    shown = {row[0] for rows in (cited, by_article, by_section, walkthroughs) for row in rows}
    title = _titles(conn, shown, documents)
    figures: dict[str, Any] = {
        "most_cited": [{"doc_id": d, "title": title[d], "citations": n} for d, n in cited],
        "votes_by_article": [
            {"doc_id": d, "title": title[d], "helpful": int(u), "not_helpful": int(n)} for d, u, n in by_article
        ],
        "votes_by_section": [
            {"doc_id": d, "title": title[d], "section": s or "", "helpful": int(u), "not_helpful": int(n)}
            for d, s, u, n in by_section
        ],
        "walkthroughs_ending_in_ticket": [
            {"doc_id": d, "title": title[d], "walkthroughs": w, "ended_in_ticket": k, "rate": _share(k, w)}
            for d, w, k in walkthroughs
            if k
        ],
    }
    if documents is not None:
        figures["never_cited"] = [
            {"doc_id": d["doc_id"], "title": d.get("title") or d.get("source") or d["doc_id"]}
            for d in documents
            if d["doc_id"] not in ever
        ]
    return figures
