"""The `sources` table: synced knowledge sources, their sync state, and which documents each one indexed.

Credentials are never stored: a source keeps the *names* of environment variables that hold them.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterator

_SCHEMA = """
CREATE TABLE IF NOT EXISTS sources (
    id             TEXT PRIMARY KEY,      -- content hash of (type, base_url, scope)
    type           TEXT NOT NULL,
    name           TEXT NOT NULL,
    base_url       TEXT NOT NULL,
    scope          TEXT NOT NULL,         -- JSON: space_keys, start_urls, kb ids … (per type)
    credential_env TEXT NOT NULL,         -- JSON: role → environment variable NAME (never a value)
    group_map      TEXT NOT NULL,         -- JSON: source group → deskmate audience group
    schedule       TEXT NOT NULL,         -- "manual" or "every <n>m|h"
    status         TEXT NOT NULL,         -- never | queued | syncing | ok | error
    cursor         TEXT,
    last_sync_at   TEXT,
    last_error     TEXT,
    last_counts    TEXT NOT NULL,         -- JSON: added, updated, unchanged, deleted, failed, embedded_chunks
    created_at     TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS source_documents (
    source_id   TEXT NOT NULL REFERENCES sources (id) ON DELETE CASCADE,
    external_id TEXT NOT NULL,
    doc_id      TEXT NOT NULL,
    url         TEXT NOT NULL,
    version     TEXT NOT NULL,
    audience    TEXT NOT NULL,            -- JSON list; [] = everyone
    title       TEXT NOT NULL,
    PRIMARY KEY (source_id, external_id)
);
"""
_JSON_FIELDS = ("scope", "credential_env", "group_map", "last_counts")


def utc_now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


class SourceStore:
    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._conn = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        self._conn.row_factory = sqlite3.Row
        self._lock = threading.Lock()
        with self._lock:  # executescript manages its own transaction
            self._conn.execute("PRAGMA foreign_keys = ON")
            self._conn.executescript(_SCHEMA)

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._conn.execute("BEGIN")
            try:
                yield self._conn
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")

    @staticmethod
    def _row(row: sqlite3.Row | None) -> dict[str, Any] | None:
        if row is None:
            return None
        record = dict(row)
        for name in _JSON_FIELDS:
            record[name] = json.loads(record[name])
        return record

    def add(self, record: dict[str, Any]) -> bool:
        """Insert a source; False when one with the same id exists."""
        values = {**record, "status": "never", "cursor": None, "last_sync_at": None, "last_error": None,
                  "last_counts": {}, "created_at": utc_now()}
        for name in _JSON_FIELDS:
            values[name] = json.dumps(values[name], sort_keys=True)
        columns = ", ".join(values)
        with self._tx() as conn:
            if conn.execute("SELECT 1 FROM sources WHERE id = ?", (record["id"],)).fetchone():
                return False
            conn.execute(f"INSERT INTO sources ({columns}) VALUES ({', '.join('?' * len(values))})",
                         tuple(values.values()))
        return True

    def get(self, source_id: str) -> dict[str, Any] | None:
        with self._lock:
            return self._row(self._conn.execute("SELECT * FROM sources WHERE id = ?", (source_id,)).fetchone())

    def list(self) -> list[dict[str, Any]]:
        with self._lock:
            rows = self._conn.execute("SELECT * FROM sources ORDER BY created_at, id").fetchall()
        return [self._row(r) for r in rows]

    def update(self, source_id: str, **fields: Any) -> None:
        for name in _JSON_FIELDS:
            if name in fields:
                fields[name] = json.dumps(fields[name], sort_keys=True)
        assignments = ", ".join(f"{name} = ?" for name in fields)
        with self._tx() as conn:
            conn.execute(f"UPDATE sources SET {assignments} WHERE id = ?", (*fields.values(), source_id))

    def claim(self, source_id: str) -> bool:
        """Mark a source as queued unless a sync of it is already queued or running (one at a time)."""
        with self._tx() as conn:
            changed = conn.execute("UPDATE sources SET status = 'queued' WHERE id = ? AND status NOT IN "
                                   "('queued', 'syncing')", (source_id,)).rowcount
        return bool(changed)

    def remove(self, source_id: str) -> None:
        with self._tx() as conn:
            conn.execute("DELETE FROM source_documents WHERE source_id = ?", (source_id,))
            conn.execute("DELETE FROM sources WHERE id = ?", (source_id,))

    # --- documents ----------------------------------------------------------------------------
    def documents(self, source_id: str) -> dict[str, dict[str, Any]]:
        with self._lock:
            rows = self._conn.execute("SELECT * FROM source_documents WHERE source_id = ?", (source_id,)).fetchall()
        return {r["external_id"]: {**dict(r), "audience": json.loads(r["audience"])} for r in rows}

    def document_count(self, source_id: str) -> int:
        with self._lock:
            return self._conn.execute("SELECT COUNT(*) FROM source_documents WHERE source_id = ?",
                                      (source_id,)).fetchone()[0]

    def put_document(self, source_id: str, external_id: str, *, doc_id: str, url: str, version: str,
                     audience: list[str], title: str) -> None:
        with self._tx() as conn:
            conn.execute("INSERT OR REPLACE INTO source_documents VALUES (?, ?, ?, ?, ?, ?, ?)",
                         (source_id, external_id, doc_id, url, version, json.dumps(audience), title))

    def drop_document(self, source_id: str, external_id: str) -> None:
        with self._tx() as conn:
            conn.execute("DELETE FROM source_documents WHERE source_id = ? AND external_id = ?",
                         (source_id, external_id))

    def close(self) -> None:
        with self._lock:
            self._conn.close()
