"""The insights figures, counted by SQL on the per-day rollups of the outcome rows (app/insights/rollup.py,
app/storage/schema.py `insight_*`): every query reads a window's summary rows by the primary key's leading
`day` and returns a bounded number of rows, so nothing loops over turns — in Python or in SQL — and the same
statements run on SQLite and Postgres. The gap questions and the titles of the few articles shown are read
from the outcome rows themselves, through their indexes.

The numbers equal those counted turn by turn (app/insights/reference.py), which the tests check.

A window is a range of UTC days, both ends included; `collection` narrows it to the turns asked of one
knowledge collection ("" is the turns that named none)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any

from sqlalchemy import and_, case, desc, distinct, func, select, union_all
from sqlalchemy.engine import Connection

from app.storage.schema import (
    OUTCOMES,
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
TOP_ARTICLES = 10
TOP_SECTIONS = 20
MAX_WINDOW_DAYS = 400  # a little over the default retention: a year compared with the year before


@dataclass(frozen=True)
class Window:
    """UTC days `first` .. `last`, both included, optionally one collection's turns."""

    first: date
    last: date
    collection: str | None = None

    @classmethod
    def of(cls, start: date | None, end: date | None, collection: str | None = None, *, days: int = 30) -> Window:
        """From/to as given; a missing end is today (UTC), a missing start `days` before the end. ValueError for
        a start after the end or a window longer than MAX_WINDOW_DAYS."""
        end = end or datetime.now(UTC).date()
        start = start or end - timedelta(days=days - 1)
        if start > end:
            raise ValueError(f"'from' ({start}) is after 'to' ({end})")
        if (end - start).days + 1 > MAX_WINDOW_DAYS:
            raise ValueError(f"the window is {(end - start).days + 1} days long; at most {MAX_WINDOW_DAYS}")
        return cls(start, end, collection)

    @property
    def days(self) -> tuple[int, int]:
        epoch = date(1970, 1, 1)
        return (self.first - epoch).days, (self.last - epoch).days

    @property
    def length(self) -> int:
        return (self.last - self.first).days + 1

    def where(self, table=T) -> list:
        first, last = self.days
        clauses = [table.c.day >= first, table.c.day <= last]
        if self.collection is not None:
            clauses.append(table.c.collection == self.collection)
        return clauses


def day_label(day: int) -> str:
    return (date(1970, 1, 1) + timedelta(days=int(day))).isoformat()


def _share(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def _absent(column) -> Any:
    """A rollup key with "" for a missing value, as the outcome rows have it (NULL): read and ordered as NULL,
    so the rows and their order are the ones counting the outcome rows gives on either engine."""
    return func.nullif(column, "")


def volume(conn: Connection, window: Window) -> dict:
    """Turns per day and per hour of day (UTC), by channel; and per outcome."""
    R, H = insight_outcomes, insight_hours
    by_day = conn.execute(
        select(R.c.day, R.c.channel, func.sum(R.c.turns))
        .where(*window.where(R))
        .group_by(R.c.day, R.c.channel)
        .order_by(R.c.day, R.c.channel)
    ).all()
    by_hour = conn.execute(
        select(H.c.hour, H.c.channel, func.sum(H.c.turns))
        .where(*window.where(H))
        .group_by(H.c.hour, H.c.channel)
        .order_by(H.c.hour, H.c.channel)
    ).all()
    by_outcome: dict[str, int] = {
        outcome: int(n)
        for outcome, n in conn.execute(
            select(R.c.outcome, func.sum(R.c.turns)).where(*window.where(R)).group_by(R.c.outcome)
        )
    }
    return {
        "turns": sum(int(n) for _, _, n in by_day),
        "by_day": [{"day": day_label(d), "channel": c, "turns": int(n)} for d, c, n in by_day],
        "by_hour": [{"hour": h, "channel": c, "turns": int(n)} for h, c, n in by_hour],
        "by_outcome": {outcome: int(by_outcome.get(outcome, 0)) for outcome in OUTCOMES},
    }


def deflection(conn: Connection, window: Window) -> dict:
    """Per conversation: did it end answered or resolved without a ticket (deflected), and did the user say so
    ("it works", a Helpful vote)? Shares of the conversations that asked something (not only small talk): the
    conversations of one day as their day counted them, those spanning days or collections merged over the
    window's days of them."""
    D = insight_deflection
    lone = conn.execute(
        select(
            func.sum(D.c.conversations), func.sum(D.c.deflected), func.sum(D.c.confirmed), func.sum(D.c.ticketed)
        ).where(*window.where(D))
    ).one()
    C = insight_conversations
    per_conversation = (
        select(
            C.c.session_id,
            func.max(case((C.c.tickets > 0, 1), else_=0)).label("ticketed"),
            func.max(C.c.answered_at).label("answered_at"),
            func.max(C.c.unanswered_at).label("unanswered_at"),
            func.max(case((C.c.confirmations > 0, 1), else_=0)).label("confirmed"),
        )
        .where(*window.where(C), C.c.alone == 0)
        .group_by(C.c.session_id)
        .subquery()
    )
    c = per_conversation.c
    ended_answered = and_(
        c.ticketed == 0, c.answered_at.is_not(None), (c.unanswered_at.is_(None)) | (c.answered_at > c.unanswered_at)
    )
    spanning = conn.execute(
        select(
            func.count(),
            func.coalesce(func.sum(case((ended_answered, 1), else_=0)), 0),
            func.coalesce(func.sum(case((and_(c.confirmed == 1, c.ticketed == 0), 1), else_=0)), 0),
            func.coalesce(func.sum(c.ticketed), 0),
        ).select_from(per_conversation)
    ).one()
    conversations, deflected, confirmed, ticketed = (int(a or 0) + int(b or 0) for a, b in zip(lone, spanning))
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
    R = insight_outcomes
    rows = conn.execute(
        select(R.c.ticket_category, R.c.ticket_priority, func.sum(R.c.turns))
        .where(*window.where(R), R.c.outcome == "ticket_created")
        .group_by(R.c.ticket_category, R.c.ticket_priority)
    ).all()
    by_category: dict[str, int] = {}
    by_priority: dict[str, int] = {}
    for category, priority, n in rows:
        by_category[category or "incident"] = by_category.get(category or "incident", 0) + int(n)
        by_priority[priority or "unknown"] = by_priority.get(priority or "unknown", 0) + int(n)
    return {"created": sum(by_category.values()), "by_category": by_category, "by_priority": by_priority}


def _cited(rows, limit: int) -> list:
    """The grouped rows of an article, without the group of turns that cited none."""
    return [row for row in rows if row[0] is not None][:limit]


def _titles(conn: Connection, doc_ids: set[str], documents: list[dict] | None) -> dict[str, str]:
    """Each article's title: as the knowledge base names it now, else as it was when it was last cited (a
    deleted article) — one indexed probe per article, never a scan."""
    titles = {d["doc_id"]: d["title"] for d in documents or [] if d.get("title")}
    for doc_id in sorted(doc_ids - titles.keys()):
        stored = conn.execute(
            select(T.c.doc_title).where(T.c.doc_id == doc_id).order_by(T.c.day.desc()).limit(1)
        ).scalar()
        titles[doc_id] = stored or doc_id
    return titles


def articles(conn: Connection, window: Window, documents: list[dict] | None = None) -> dict:
    """Most cited articles; Helpful / Not helpful per article and per section; the articles whose walkthroughs
    most often end in a ticket; and (given the collection's documents) the ones never cited in the window.
    Each reads a rollup's window of days; titles are looked up for the few rows shown."""
    A, S, W, C = insight_articles, insight_sections, insight_walkthroughs, insight_conversations
    doc = _absent(A.c.doc_id)
    citations = func.sum(A.c.citations)
    # the group of turns that cited no article (doc_id "") is read like the others, as None, and dropped here
    # (hence a row more than shown)
    cited = _cited(
        conn.execute(
            select(doc, citations.label("n"))
            .where(*window.where(A))
            .group_by(A.c.doc_id)
            .having(citations > 0)
            .order_by(desc("n"), doc)
            .limit(TOP_ARTICLES + 1)
        ).all(),
        TOP_ARTICLES,
    )
    up, down = func.sum(A.c.helpful), func.sum(A.c.not_helpful)
    by_article = _cited(
        conn.execute(
            select(doc, up.label("up"), down.label("down"))
            .where(*window.where(A))
            .group_by(A.c.doc_id)
            .having(up + down > 0)
            .order_by((up + down).desc(), doc)
            .limit(TOP_ARTICLES + 1)
        ).all(),
        TOP_ARTICLES,
    )
    section_doc, section = _absent(S.c.doc_id), _absent(S.c.section)
    up, down = func.sum(S.c.helpful), func.sum(S.c.not_helpful)
    by_section = _cited(
        conn.execute(
            select(section_doc, section, up, down)
            .where(*window.where(S))
            .group_by(S.c.doc_id, S.c.section)
            .having(up + down > 0)
            .order_by(down.desc(), up.desc(), section_doc, section)
            .limit(TOP_SECTIONS + 1)
        ).all(),
        TOP_SECTIONS,
    )
    # a conversation whose walkthrough from the article was followed by a ticket in the same conversation: the
    # window's (and the next day's) last ticket of each conversation, against its first step from the article
    first, last = window.days
    ticketed = (
        select(C.c.session_id, func.max(C.c.last_ticket).label("last_ticket"))
        .where(C.c.last_ticket.is_not(None), C.c.day >= first, C.c.day <= last + 1)
        .group_by(C.c.session_id)
        .subquery("ticketed")
    )
    # conversations of one day as their day counted them; those spanning days merged over the window's days
    L = insight_walkthrough_days
    lone = select(
        L.c.doc_id.label("doc_id"),
        L.c.walkthroughs.label("walkthroughs"),
        L.c.ended_in_ticket.label("ticketed"),
    ).where(*window.where(L))
    spanning = (
        select(
            W.c.doc_id,
            func.count(distinct(W.c.session_id)),
            func.count(distinct(case((ticketed.c.last_ticket > W.c.first_step, W.c.session_id)))),
        )
        .select_from(W.outerjoin(ticketed, ticketed.c.session_id == W.c.session_id))
        .where(*window.where(W), W.c.alone == 0)
        .group_by(W.c.doc_id)
    )
    both = union_all(lone, spanning).subquery("walked")
    walked_doc = _absent(both.c.doc_id)
    walked, ended = func.sum(both.c.walkthroughs), func.sum(both.c.ticketed)
    walkthroughs = conn.execute(
        select(walked_doc, walked.label("walkthroughs"), ended.label("ticketed"))
        .group_by(both.c.doc_id)
        .having(walked > 0)
        .order_by(desc("ticketed"), desc("walkthroughs"), walked_doc)
        .limit(TOP_ARTICLES + 1)
    ).all()
    walkthroughs = _cited(walkthroughs, TOP_ARTICLES)
    ever: set[str | None] = set()
    if documents is not None:
        ever = {
            doc_id
            for (doc_id,) in conn.execute(
                select(doc).where(*window.where(A)).group_by(A.c.doc_id).having(citations > 0)
            ).all()
        }
    shown = {row[0] for rows in (cited, by_article, by_section, walkthroughs) for row in rows}
    title = _titles(conn, shown, documents)
    figures: dict[str, Any] = {
        "most_cited": [{"doc_id": d, "title": title[d], "citations": int(n)} for d, n in cited],
        "votes_by_article": [
            {"doc_id": d, "title": title[d], "helpful": int(u), "not_helpful": int(n)} for d, u, n in by_article
        ],
        "votes_by_section": [
            {"doc_id": d, "title": title[d], "section": s or "", "helpful": int(u), "not_helpful": int(n)}
            for d, s, u, n in by_section
        ],
        "walkthroughs_ending_in_ticket": [
            {
                "doc_id": d,
                "title": title[d],
                "walkthroughs": int(w),
                "ended_in_ticket": int(k),
                "rate": _share(int(k), int(w)),
            }
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


def gap_questions(conn: Connection, window: Window, limit: int) -> list[dict]:
    """The newest `limit` questions of the window that went unanswered or were voted Not helpful."""
    rows = conn.execute(
        select(T.c.question, T.c.asker, T.c.day)
        .where(T.c.question.is_not(None), *window.where(), T.c.gap == 1)
        .order_by(T.c.ts.desc())
        .limit(limit)
    ).all()
    return [{"question": q, "asker": a, "day": d} for q, a, d in rows]
