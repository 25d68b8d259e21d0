"""The local ticket store: always written first, the record of truth for deskmate's tickets.

It lives in the relational store (app/storage): the embedded SQLite file, or Postgres in server mode, where
every replica sees the same tickets (the same escalation on another replica finds the open one).

It stores exactly what the (already redacted) draft holds plus ids, timestamps and the Jira link;
nothing else about the user reaches it.
"""

from __future__ import annotations

import builtins
import json
import logging
import secrets
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Iterator

from sqlalchemy import select, update
from sqlalchemy.engine import Connection
from sqlalchemy.exc import IntegrityError, SQLAlchemyError

from app.storage import Database, DatabaseUnavailable
from app.storage.schema import ticket_comments, tickets
from core.errors import TicketStoreError
from core.records import Ticket, TicketDraft

log = logging.getLogger(__name__)

# Crockford's base32: no I, L, O or U, so an id read out over the phone cannot be misheard
ID_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
ID_PREFIX = "DM-"
ID_LENGTH = 6
_ID_ATTEMPTS = 8
MAX_LISTED = 200

_JIRA_FIELDS = ("jira_key", "jira_url", "jira_error", "jira_status")


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def new_ticket_id() -> str:
    return ID_PREFIX + "".join(secrets.choice(ID_ALPHABET) for _ in range(ID_LENGTH))


def normalise_ticket_id(text: str) -> str | None:
    """'dm-1a2b3c' → 'DM-1A2B3C'; None when it cannot be a deskmate ticket id."""
    candidate = text.strip().upper()
    body = candidate[len(ID_PREFIX) :]
    if not candidate.startswith(ID_PREFIX) or len(body) != ID_LENGTH or any(c not in ID_ALPHABET for c in body):
        return None
    return candidate


class TicketStore:
    """Tickets and their comments in the relational store (a path: an SQLite file of its own, for tools)."""

    def __init__(self, db: Database | Path | str) -> None:
        try:
            self.db = db if isinstance(db, Database) else Database.open(f"sqlite:///{Path(db).resolve()}")
        except (SQLAlchemyError, DatabaseUnavailable, OSError) as exc:
            raise TicketStoreError(f"The ticket store at {db} cannot be opened: {exc}") from exc
        self.path = self.db.describe()

    # --- writing --------------------------------------------------------------------------
    def create(self, draft: TicketDraft, *, session_id: str, user_id: str) -> Ticket:
        """Store a new open ticket under a fresh, unused id."""
        now = utc_now()
        row = {
            "status": "open",
            "session_id": session_id,
            "user_id": user_id,
            "summary": draft["summary"],
            "description": draft["description"],
            "priority": draft["priority"],
            "topic": draft["topic"],
            "os": draft["os"],
            "steps_tried": json.dumps(list(draft["steps_tried"]), ensure_ascii=False),
            "conversation": json.dumps(list(draft["conversation"]), ensure_ascii=False),
            "created_at": now,
            "updated_at": now,
        }
        for _ in range(_ID_ATTEMPTS):
            ticket_id = new_ticket_id()
            try:
                with self._transaction() as conn:
                    conn.execute(tickets.insert().values(id=ticket_id, **row))
                break
            except IntegrityError:  # id already taken: 1 in ~10⁹ per existing ticket, draw again
                continue
        else:
            raise TicketStoreError(f"No free ticket id after {_ID_ATTEMPTS} attempts.")
        ticket = self.get(ticket_id)
        assert ticket is not None
        return ticket

    def close(self, ticket_id: str, comment: str) -> Ticket | None:
        """Mark the ticket closed and add `comment`; a ticket already closed is returned unchanged."""
        with self._transaction() as conn:
            status = conn.execute(select(tickets.c.status).where(tickets.c.id == ticket_id)).scalar()
            if status is None:
                return None
            if status != "closed":
                now = utc_now()
                conn.execute(update(tickets).where(tickets.c.id == ticket_id).values(status="closed", updated_at=now))
                if comment.strip():
                    conn.execute(
                        ticket_comments.insert().values(ticket_id=ticket_id, body=comment.strip(), created_at=now)
                    )
        return self.get(ticket_id)

    def add_comment(self, ticket_id: str, body: str) -> bool:
        with self._transaction() as conn:
            if conn.execute(select(tickets.c.id).where(tickets.c.id == ticket_id)).first() is None:
                return False
            now = utc_now()
            conn.execute(ticket_comments.insert().values(ticket_id=ticket_id, body=body.strip(), created_at=now))
            conn.execute(update(tickets).where(tickets.c.id == ticket_id).values(updated_at=now))
        return True

    def set_jira(self, ticket_id: str, **fields: str | None) -> Ticket | None:
        """Update the Jira link columns (jira_key, jira_url, jira_error, jira_status)."""
        unknown = set(fields) - set(_JIRA_FIELDS)
        if unknown:
            raise ValueError(f"not Jira fields: {sorted(unknown)}")
        if fields:
            with self._transaction() as conn:
                conn.execute(update(tickets).where(tickets.c.id == ticket_id).values(**fields))
        return self.get(ticket_id)

    # --- reading --------------------------------------------------------------------------
    def get(self, ticket_id: str) -> Ticket | None:
        rows = self._select([tickets.c.id == ticket_id], limit=1)
        return rows[0] if rows else None

    def list(
        self,
        *,
        user_id: str | None = None,
        session_id: str | None = None,
        status: str | None = None,
        limit: int = MAX_LISTED,
    ) -> list[Ticket]:
        """Tickets matching every given filter, newest first (at most `limit`, capped at MAX_LISTED)."""
        clauses = [
            tickets.c[column] == value
            for column, value in (("user_id", user_id), ("session_id", session_id), ("status", status))
            if value is not None
        ]
        return self._select(clauses, limit=max(1, min(limit, MAX_LISTED)))

    def close_connection(self) -> None:
        self.db.close()

    # --- internals ------------------------------------------------------------------------
    def _select(self, clauses: builtins.list, *, limit: int) -> builtins.list[Ticket]:
        query = select(tickets).where(*clauses).order_by(tickets.c.created_at.desc(), tickets.c.id.desc()).limit(limit)
        try:
            with self.db.connect() as conn:
                rows = [dict(row) for row in conn.execute(query).mappings()]
                comments: dict[str, list[str]] = {row["id"]: [] for row in rows}
                if rows:
                    for ticket_id, body in conn.execute(
                        select(ticket_comments.c.ticket_id, ticket_comments.c.body)
                        .where(ticket_comments.c.ticket_id.in_(list(comments)))
                        .order_by(ticket_comments.c.id)
                    ):
                        comments[ticket_id].append(body)
        except (SQLAlchemyError, DatabaseUnavailable) as exc:
            raise TicketStoreError(f"The ticket store ({self.path}) cannot be read: {exc}") from exc
        return [_ticket(row, comments[row["id"]]) for row in rows]

    @contextmanager
    def _transaction(self) -> Iterator[Connection]:
        try:
            with self.db.begin() as conn:
                yield conn
        except IntegrityError:
            raise
        except (SQLAlchemyError, DatabaseUnavailable) as exc:
            raise TicketStoreError(f"The ticket store ({self.path}) cannot be written: {exc}") from exc


SqliteTicketStore = TicketStore  # the name tools and older code import


def _ticket(row: dict, comments: list[str]) -> Ticket:
    data: dict[str, Any] = dict(row)
    data["steps_tried"] = json.loads(data["steps_tried"])
    data["conversation"] = json.loads(data["conversation"])
    data["comments"] = comments
    return Ticket(**data)  # type: ignore[typeddict-item]
