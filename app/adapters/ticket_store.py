"""The local ticket store: SQLite, always written first, the record of truth for deskmate's tickets.

It stores exactly what the (already redacted) draft holds plus ids, timestamps and the Jira link;
nothing else about the user reaches it.
"""

from __future__ import annotations

import json
import logging
import secrets
import sqlite3
import threading
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterator

from graphs.errors import TicketStoreError
from graphs.records import Ticket, TicketDraft

log = logging.getLogger(__name__)

# Crockford's base32: no I, L, O or U, so an id read out over the phone cannot be misheard
ID_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
ID_PREFIX = "DM-"
ID_LENGTH = 6
_ID_ATTEMPTS = 8
MAX_LISTED = 200

_SCHEMA = """
CREATE TABLE IF NOT EXISTS tickets (
    id           TEXT PRIMARY KEY,
    status       TEXT NOT NULL CHECK (status IN ('open', 'closed')),
    session_id   TEXT NOT NULL,
    user_id      TEXT NOT NULL,
    summary      TEXT NOT NULL,
    description  TEXT NOT NULL,
    priority     TEXT NOT NULL,
    topic        TEXT NOT NULL,
    os           TEXT NOT NULL,
    steps_tried  TEXT NOT NULL,   -- JSON list of {step, outcome}
    conversation TEXT NOT NULL,   -- JSON list of {role, content}, redacted
    jira_key     TEXT,
    jira_url     TEXT,
    jira_error   TEXT,
    jira_status  TEXT,
    created_at   TEXT NOT NULL,   -- UTC ISO 8601
    updated_at   TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS tickets_by_session ON tickets (session_id, status);
CREATE INDEX IF NOT EXISTS tickets_by_user ON tickets (user_id, status);
CREATE TABLE IF NOT EXISTS ticket_comments (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    ticket_id  TEXT NOT NULL REFERENCES tickets (id) ON DELETE CASCADE,
    body       TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS comments_by_ticket ON ticket_comments (ticket_id, id);
"""

_JIRA_FIELDS = ("jira_key", "jira_url", "jira_error", "jira_status")


def utc_now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def new_ticket_id() -> str:
    return ID_PREFIX + "".join(secrets.choice(ID_ALPHABET) for _ in range(ID_LENGTH))


def normalise_ticket_id(text: str) -> str | None:
    """'dm-1a2b3c' → 'DM-1A2B3C'; None when it cannot be a deskmate ticket id."""
    candidate = text.strip().upper()
    body = candidate[len(ID_PREFIX):]
    if not candidate.startswith(ID_PREFIX) or len(body) != ID_LENGTH or any(c not in ID_ALPHABET for c in body):
        return None
    return candidate


class SqliteTicketStore:
    """Tickets and their comments in one SQLite file; one connection shared under a lock."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._conn = sqlite3.connect(str(self.path), check_same_thread=False)
            self._conn.row_factory = sqlite3.Row
            # closed tickets' text is overwritten on delete, not left readable in free pages
            self._conn.execute("PRAGMA secure_delete = ON")
            self._conn.execute("PRAGMA foreign_keys = ON")
            self._conn.execute("PRAGMA journal_mode = WAL")
            self._conn.execute("PRAGMA synchronous = NORMAL")
            self._conn.executescript(_SCHEMA)
            self._conn.commit()
        except (sqlite3.Error, OSError) as exc:
            raise TicketStoreError(f"The ticket store at {self.path} cannot be opened: {exc}") from exc
        self._lock = threading.Lock()

    # --- writing --------------------------------------------------------------------------
    def create(self, draft: TicketDraft, *, session_id: str, user_id: str) -> Ticket:
        """Store a new open ticket under a fresh, unused id."""
        now = utc_now()
        row = {
            "status": "open", "session_id": session_id, "user_id": user_id,
            "summary": draft["summary"], "description": draft["description"], "priority": draft["priority"],
            "topic": draft["topic"], "os": draft["os"],
            "steps_tried": json.dumps(list(draft["steps_tried"]), ensure_ascii=False),
            "conversation": json.dumps(list(draft["conversation"]), ensure_ascii=False),
            "created_at": now, "updated_at": now,
        }
        columns = ", ".join(["id", *row])
        marks = ", ".join("?" * (len(row) + 1))
        with self._transaction() as conn:
            for _ in range(_ID_ATTEMPTS):
                ticket_id = new_ticket_id()
                try:
                    conn.execute(f"INSERT INTO tickets ({columns}) VALUES ({marks})", (ticket_id, *row.values()))
                    break
                except sqlite3.IntegrityError:  # id already taken: 1 in ~10⁹ per existing ticket, draw again
                    continue
            else:
                raise TicketStoreError(f"No free ticket id after {_ID_ATTEMPTS} attempts.")
        ticket = self.get(ticket_id)
        assert ticket is not None
        return ticket

    def close(self, ticket_id: str, comment: str) -> Ticket | None:
        """Mark the ticket closed and add `comment`; a ticket already closed is returned unchanged."""
        with self._transaction() as conn:
            row = conn.execute("SELECT status FROM tickets WHERE id = ?", (ticket_id,)).fetchone()
            if row is None:
                return None
            if row["status"] != "closed":
                now = utc_now()
                conn.execute("UPDATE tickets SET status = 'closed', updated_at = ? WHERE id = ?", (now, ticket_id))
                if comment.strip():
                    conn.execute("INSERT INTO ticket_comments (ticket_id, body, created_at) VALUES (?, ?, ?)",
                                 (ticket_id, comment.strip(), now))
        return self.get(ticket_id)

    def add_comment(self, ticket_id: str, body: str) -> bool:
        with self._transaction() as conn:
            if conn.execute("SELECT 1 FROM tickets WHERE id = ?", (ticket_id,)).fetchone() is None:
                return False
            now = utc_now()
            conn.execute("INSERT INTO ticket_comments (ticket_id, body, created_at) VALUES (?, ?, ?)",
                         (ticket_id, body.strip(), now))
            conn.execute("UPDATE tickets SET updated_at = ? WHERE id = ?", (now, ticket_id))
        return True

    def set_jira(self, ticket_id: str, **fields: str | None) -> Ticket | None:
        """Update the Jira link columns (jira_key, jira_url, jira_error, jira_status)."""
        unknown = set(fields) - set(_JIRA_FIELDS)
        if unknown:
            raise ValueError(f"not Jira fields: {sorted(unknown)}")
        if fields:
            assignments = ", ".join(f"{name} = ?" for name in fields)
            with self._transaction() as conn:
                conn.execute(f"UPDATE tickets SET {assignments} WHERE id = ?", (*fields.values(), ticket_id))
        return self.get(ticket_id)

    # --- reading --------------------------------------------------------------------------
    def get(self, ticket_id: str) -> Ticket | None:
        rows = self._select("WHERE id = ?", (ticket_id,), limit=1)
        return rows[0] if rows else None

    def list(self, *, user_id: str | None = None, session_id: str | None = None, status: str | None = None,
             limit: int = MAX_LISTED) -> list[Ticket]:
        """Tickets matching every given filter, newest first (at most `limit`, capped at MAX_LISTED)."""
        clauses, params = [], []
        for column, value in (("user_id", user_id), ("session_id", session_id), ("status", status)):
            if value is not None:
                clauses.append(f"{column} = ?")
                params.append(value)
        where = ("WHERE " + " AND ".join(clauses)) if clauses else ""
        return self._select(where, tuple(params), limit=max(1, min(limit, MAX_LISTED)))

    def close_connection(self) -> None:
        with self._lock:
            self._conn.close()

    # --- internals ------------------------------------------------------------------------
    def _select(self, where: str, params: tuple, *, limit: int) -> list[Ticket]:
        sql = f"SELECT * FROM tickets {where} ORDER BY created_at DESC, rowid DESC LIMIT ?"
        try:
            with self._lock:
                rows = self._conn.execute(sql, (*params, limit)).fetchall()
                comments: dict[str, list[str]] = {row["id"]: [] for row in rows}
                if rows:
                    marks = ", ".join("?" * len(comments))
                    for comment in self._conn.execute(
                            f"SELECT ticket_id, body FROM ticket_comments WHERE ticket_id IN ({marks}) ORDER BY id",
                            tuple(comments)):
                        comments[comment["ticket_id"]].append(comment["body"])
        except sqlite3.Error as exc:
            raise TicketStoreError(f"The ticket store at {self.path} cannot be read: {exc}") from exc
        return [_ticket(row, comments[row["id"]]) for row in rows]

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            try:
                yield self._conn
                self._conn.commit()
            except sqlite3.Error as exc:
                self._conn.rollback()
                raise TicketStoreError(f"The ticket store at {self.path} cannot be written: {exc}") from exc
            except BaseException:
                self._conn.rollback()
                raise


def _ticket(row: sqlite3.Row, comments: list[str]) -> Ticket:
    data: dict[str, Any] = dict(row)
    data["steps_tried"] = json.loads(data["steps_tried"])
    data["conversation"] = json.loads(data["conversation"])
    data["comments"] = comments
    return Ticket(**data)  # type: ignore[typeddict-item]
