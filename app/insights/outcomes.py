"""The outcome record of one chat turn: what it did (answered, walkthrough step, resolved, abstained, ticket
offered or created, handoff, out of scope …), where, which article it cited, how sure it was, and — only when
the turn went unanswered — its redacted question, for the knowledge-gap clusters.

`outcome_row` reads a finished turn (the flat `TurnResult`) into one row; `OutcomeStore` writes it beside the
turn's trace (from the outcome writer's thread, app/insights/writer.py) and counts it into the per-day rollups
the figures read (app/insights/rollup.py), adds the vote an answer gets (to both, whichever is written first),
and prunes: rows and rollups after their own retention (13 months by default),
questions after the trace retention."""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections.abc import Callable, Mapping
from typing import Any

from sqlalchemy import bindparam, delete, select, update
from sqlalchemy.engine import Connection
from sqlalchemy.exc import SQLAlchemyError

from app.insights import rollup
from app.insights.rollup import ANSWERED
from app.storage import Database
from app.storage.database import DatabaseUnavailable
from app.storage.schema import CHANNELS, answers, turn_outcomes, votes
from core.ports import Redactor

log = logging.getLogger(__name__)

DEFAULT_CHANNEL = "api"
MAX_QUESTION_CHARS = 500  # a gap question is a question, not a pasted log
MAX_CITED = 10


def checked_channel(channel: str | None) -> str:
    """The channel a turn came in on; ValueError for one deskmate does not know."""
    channel = (channel or DEFAULT_CHANNEL).strip().lower()
    if channel not in CHANNELS:
        raise ValueError(f"unknown channel {channel!r}; one of {', '.join(CHANNELS)}")
    return channel


def turn_outcome(result: Mapping[str, Any]) -> str:
    """What a finished turn did, as one of app.storage.schema.OUTCOMES (the first rule that holds wins)."""
    act = result.get("dialogue_act") or ""
    event = result.get("ticket_event") or ""
    action = result.get("action") or ""
    flow = result.get("troubleshooting") or {}
    cited = bool(result.get("sources"))
    if event == "created":
        return "ticket_created"
    if act == "handoff":
        return "handoff"
    if act == "out_of_scope":
        return "out_of_scope"
    if act == "resolved" or (action == "troubleshoot" and flow.get("status") == "resolved"):
        return "resolved"
    if event == "offered":
        return "ticket_offered"
    if action == "troubleshoot" and flow.get("status") == "in_progress":
        return "walkthrough_step"
    if cited and action in ("answer", "troubleshoot"):
        return "answered"
    if action == "clarify" or result.get("is_clarifying"):
        return "clarified"
    if result.get("search_count") and not act:
        return "abstained"
    return "conversation"


def is_gap(result: Mapping[str, Any], outcome: str) -> bool:
    """A question the knowledge base did not answer: searched for and neither answered nor asked for by name
    (a ticket request or a handoff is no gap in the articles), or turned away as out of scope."""
    if outcome == "out_of_scope":
        return True
    if result.get("dialogue_act") or not result.get("search_count"):
        return False
    # the turn that creates a ticket is the user's "yes": its offer, a turn before, was the gap
    return outcome in ("abstained", "ticket_offered")


def asker_of(user_id: str | None, session_id: str) -> str:
    """Who asked, as a hash: the signed-in user, or — with sign-in off — the conversation."""
    who = f"user:{user_id}" if user_id and user_id != "anonymous" else f"session:{session_id}"
    return hashlib.sha256(who.encode()).hexdigest()[:16]


def _cited_article(result: Mapping[str, Any]) -> tuple[str | None, str | None, str | None]:
    sources = result.get("sources") or []
    if sources:
        first = sources[0]
        return first.get("doc_id") or None, first.get("title") or None, first.get("section") or None
    if result.get("action") == "troubleshoot":  # a later step of a walkthrough: the article it follows
        article = result.get("active_article") or {}
        return article.get("doc_id") or None, article.get("title") or None, article.get("section") or None
    return None, None, None


def outcome_row(
    result: Mapping[str, Any],
    *,
    trace_id: str,
    session_id: str,
    user_id: str | None,
    channel: str,
    latency_ms: float | None,
    ts: float,
) -> dict:
    """The outcome row of a finished turn (`result`: the flat turn record and session). No text but the
    (already redacted) question of a gap, which the store redacts once more with the trace policy."""
    outcome = turn_outcome(result)
    ticket = (result.get("ticket") or {}) if outcome == "ticket_created" else {}
    doc_id, title, section = _cited_article(result)
    gap = is_gap(result, outcome)
    collections = result.get("collections") or []
    return {
        "trace_id": trace_id,
        "ts": ts,
        "day": int(ts // 86400),
        "hour": int(ts % 86400 // 3600),
        "channel": checked_channel(channel),
        "collection": ",".join(collections)[:128],
        "session_id": session_id,
        "asker": asker_of(user_id, session_id),
        "action": str(result.get("action") or "")[:32],
        "outcome": outcome,
        "doc_id": doc_id,
        "doc_title": title,
        "section": section,
        "cited": json.dumps(
            [[s.get("doc_id") or "", s.get("section") or ""] for s in (result.get("sources") or [])[:MAX_CITED]]
        ),
        "confidence": result.get("confidence"),
        "vote": None,
        "ticket_id": ticket.get("id"),
        "ticket_priority": ticket.get("priority"),
        "ticket_category": (ticket.get("kind") or "incident") if ticket else None,
        "language": str(result.get("language") or "")[:8],
        "latency_ms": round(latency_ms, 1) if latency_ms is not None else None,
        "gap": int(gap),
        "question": str(result.get("query") or "")[:MAX_QUESTION_CHARS] or None if gap else None,
    }


# the vote already cast on a turn's answer, if any (locking the answer's row: see OutcomeStore)
_VOTE_CAST = (
    select(votes.c.rating)
    .select_from(answers.outerjoin(votes, votes.c.message_id == answers.c.message_id))
    .where(answers.c.message_id == bindparam("trace_id"))
    .with_for_update(of=answers)
)


def _why(exc: Exception) -> str:
    """What the database said, without the statement and its parameters SQLAlchemy appends (a row's ids, session
    and question are not log material, and the log redactor would hide the turn's id with them)."""
    return str(getattr(exc, "orig", None) or exc).splitlines()[0][:300]


class OutcomeStore:
    """The outcome rows on the relational store. A turn's row and its rollup counts are one transaction, written
    off the reply path by the outcome writer (app/insights/writer.py); a failure is logged and never fails the
    chat.

    A vote can come before its turn's row is written (the writer is behind, or the vote reached another
    replica): the vote then finds no row and the row, when written, takes the vote the feedback store already
    holds. The answer's row (`answers`, written before the reply) is the meeting point: both writes lock it on
    Postgres, as a vote's own insert does, so one of them sees the other's (SQLite has one writer at a time)."""

    def __init__(
        self,
        db: Database,
        *,
        redactor: Redactor | None = None,
        retention_days: float = 396.0,
        question_days: float = 14.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.db = db
        self._redactor = redactor  # the trace policy: a question is kept as long as, and like, a trace
        self._retention_s = retention_days * 86400
        self._question_s = question_days * 86400
        self._clock = clock
        # built once: a statement's construction costs more CPU than its run (a rowcount is -1 through some
        # Postgres drivers, hence RETURNING)
        self._insert = db.insert(turn_outcomes).on_conflict_do_nothing().returning(turn_outcomes.c.trace_id)

    def record(self, row: dict) -> bool:
        """Write a turn's outcome row; False (logged) when the database refused it."""
        return self._record_one(self._redacted(row))

    def record_many(self, rows: list[dict]) -> int:
        """Write turns' outcome rows in one transaction (the writer's batch); when that fails, row by row, so
        one row the database refuses loses only itself. Returns how many were written."""
        rows = [self._redacted(row) for row in rows]
        if len(rows) > 1:
            try:
                with self.db.begin() as conn:
                    for row in rows:
                        self._write(conn, row)
                return len(rows)
            except (SQLAlchemyError, DatabaseUnavailable) as exc:
                log.info("could not write %d outcome rows at once (%s); writing them one by one", len(rows), _why(exc))
        return sum(self._record_one(row) for row in rows)

    def _redacted(self, row: dict) -> dict:
        if not row.get("question") or self._redactor is None:
            return row
        try:
            return row | {"question": self._redactor.redact(row["question"]).text}
        except RuntimeError as exc:  # the names model failed to load: the turn counts, its wording is not kept
            log.warning("the question of turn %s is not kept: it could not be redacted (%s)", row.get("trace_id"), exc)
            return row | {"question": None}

    def _record_one(self, row: dict) -> bool:
        try:
            with self.db.begin() as conn:
                self._write(conn, row)
            return True
        except (SQLAlchemyError, DatabaseUnavailable) as exc:
            log.warning("could not record the outcome of turn %s: %s", row.get("trace_id"), _why(exc))
            return False

    def _write(self, conn: Connection, row: dict) -> None:
        written = conn.execute(self._insert, row).first()
        if written is None:  # a turn recorded twice (a retried write) is counted once
            return
        rollup.add_turn(self.db, conn, row)
        # a vote that came first: it found no row to change, so the row takes it now
        waiting = conn.execute(_VOTE_CAST, {"trace_id": row["trace_id"]}).first()
        if waiting is not None and waiting.rating is not None:
            self._apply_vote(conn, row["trace_id"], waiting.rating)

    def record_vote(self, trace_id: str, rating: str) -> None:
        """A vote on the answer of a turn. A Not helpful vote makes the question a gap candidate: its redacted
        wording is taken from the answer the vote is on (app/adapters/feedback.py keeps it)."""
        T = turn_outcomes
        question = self._voted_question(trace_id) if rating == "down" else None
        try:
            with self.db.begin() as conn:
                # a write first: the row's lock on Postgres (two votes on one turn at once move the counts one
                # after the other), the write lock on SQLite (no read-then-write upgrade to be refused)
                conn.execute(update(T).where(T.c.trace_id == trace_id).values(vote=T.c.vote))
                # then the answer's row: a turn's row being written waits for this vote, or this vote for it
                conn.execute(select(answers.c.message_id).where(answers.c.message_id == trace_id).with_for_update())
                self._apply_vote(conn, trace_id, rating, question)
        except (SQLAlchemyError, DatabaseUnavailable) as exc:
            log.warning("could not record the vote on turn %s: %s", trace_id, _why(exc))

    def _voted_question(self, trace_id: str) -> str | None:
        """The question of the answer voted on, redacted with the trace policy as every gap question is (the answer
        keeps it redacted with the memory policy only, which may leave a person's name), before any lock is taken."""
        try:
            with self.db.connect() as conn:
                asked = conn.execute(select(answers.c.query).where(answers.c.message_id == trace_id)).scalar()
        except (SQLAlchemyError, DatabaseUnavailable) as exc:
            log.warning("could not read the question of turn %s: %s", trace_id, _why(exc))
            return None
        return self._redacted({"trace_id": trace_id, "question": asked})["question"] if asked else None

    def _apply_vote(self, conn: Connection, trace_id: str, rating: str, question: str | None = None) -> None:
        """Set the vote on a turn's row and move its rollup counts (nothing when the row is not written yet)."""
        T = turn_outcomes
        values: dict[str, Any] = {"vote": rating}
        if rating == "down":
            if question is None:  # a vote that came before its turn's row: read and redact it here (rare)
                asked = conn.execute(select(answers.c.query).where(answers.c.message_id == trace_id)).scalar()
                question = self._redacted({"trace_id": trace_id, "question": asked})["question"] if asked else None
            values |= {"gap": 1, "question": question}
        before = (
            conn.execute(
                select(T.c.day, T.c.collection, T.c.session_id, T.c.outcome, T.c.doc_id, T.c.section, T.c.vote).where(
                    T.c.trace_id == trace_id
                )
            )
            .mappings()
            .first()
        )
        if before is None:
            return
        conn.execute(update(T).where(T.c.trace_id == trace_id).values(values))
        if rating == "up":  # a vote changed to Helpful: no longer a gap of an answered question
            conn.execute(
                update(T)
                .where(T.c.trace_id == trace_id, T.c.outcome.in_(sorted(ANSWERED)))
                .values(gap=0, question=None)
            )
        rollup.change_vote(self.db, conn, dict(before), rating)

    def prune(self) -> int:
        """Delete rows and their days' rollups past the outcome retention and clear questions past the trace
        retention (by UTC day: the indexed column); returns the rows deleted."""
        now = self._clock()
        oldest = int((now - self._retention_s) // 86400)
        with self.db.begin() as conn:
            removed = conn.execute(delete(turn_outcomes).where(turn_outcomes.c.day < oldest)).rowcount
            rollup.prune(conn, oldest)
            conn.execute(
                update(turn_outcomes)
                .where(
                    turn_outcomes.c.question.is_not(None),
                    turn_outcomes.c.day < int((now - self._question_s) // 86400),
                )
                .values(question=None)
            )
        if removed:
            log.info("insights: pruned %d outcome row(s)", removed)
        return removed
