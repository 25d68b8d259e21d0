"""The `sources` table: synced knowledge sources, their sync state, and which documents each one indexed.

Rows live in the relational store (app/storage: SQLite embedded, Postgres in server mode), so every replica
sees the same sources and the same sync state. Credentials are never stored: a source keeps the *names* of
environment variables that hold them.
"""

from __future__ import annotations

import builtins
import json
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import delete, func, select, update

from app.storage import Database
from app.storage.schema import source_documents, sources

_JSON_FIELDS = ("scope", "credential_env", "group_map", "last_counts")
BUSY = ("queued", "syncing")  # a sync of the source is waiting or running: no second one starts


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class SourceStore:
    def __init__(self, database: Database) -> None:
        self._db = database

    @staticmethod
    def _row(row) -> dict[str, Any] | None:
        if row is None:
            return None
        record = dict(row._mapping)
        for name in _JSON_FIELDS:
            record[name] = json.loads(record[name])
        return record

    def add(self, record: dict[str, Any]) -> bool:
        """Insert a source; False when one with the same id exists."""
        values = {
            **record,
            "status": "never",
            "cursor": None,
            "last_sync_at": None,
            "last_error": None,
            "last_counts": {},
            "created_at": utc_now(),
        }
        for name in _JSON_FIELDS:
            values[name] = json.dumps(values[name], sort_keys=True)
        with self._db.begin() as conn:
            inserted = self._db.insert(sources).values(**values).on_conflict_do_nothing().returning(sources.c.id)
            return conn.execute(inserted).first() is not None

    def get(self, source_id: str) -> dict[str, Any] | None:
        with self._db.connect() as conn:
            return self._row(conn.execute(select(sources).where(sources.c.id == source_id)).first())

    def list(self) -> list[dict[str, Any]]:
        with self._db.connect() as conn:
            rows = conn.execute(select(sources).order_by(sources.c.created_at, sources.c.id)).all()
        return [row for r in rows if (row := self._row(r)) is not None]

    def update(self, source_id: str, **fields: Any) -> None:
        for name in _JSON_FIELDS:
            if name in fields:
                fields[name] = json.dumps(fields[name], sort_keys=True)
        with self._db.begin() as conn:
            conn.execute(update(sources).where(sources.c.id == source_id).values(**fields))

    def claim(self, source_id: str, *, last_sync_at: str | None | bool = False) -> bool:
        """Mark a source as queued unless a sync of it is already queued or running (one at a time, across
        replicas: the conditional UPDATE is the lock). With `last_sync_at` (the value a scheduler read), only
        while that is still the last sync, so a replica that read a row just before another one synced it does
        not start the same due sync again."""
        claim = update(sources).where(sources.c.id == source_id, sources.c.status.not_in(BUSY))
        if last_sync_at is not False:
            claim = claim.where(
                sources.c.last_sync_at.is_(None) if last_sync_at is None else sources.c.last_sync_at == last_sync_at
            )
        with self._db.begin() as conn:
            return conn.execute(claim.values(status="queued").returning(sources.c.id)).first() is not None

    def end_sync(self, source_id: str, error: str) -> bool:
        """A sync's job ended without the sync recording its outcome (its worker died for the last time, or it
        was cancelled): the source leaves queued/syncing for `error`, so it shows why and can be synced again.
        A source no longer busy (the sync recorded its own end) is left alone; False then."""
        with self._db.begin() as conn:
            return (
                conn.execute(
                    update(sources)
                    .where(sources.c.id == source_id, sources.c.status.in_(BUSY))
                    .values(status="error", last_sync_at=utc_now(), last_error=error)
                ).rowcount
                == 1
            )

    def reset_interrupted(self) -> int:
        """Syncs left queued or running by a process that stopped are marked failed, so they can start again.
        Only for the embedded store, which one process owns: on a shared database another replica may be
        running them."""
        with self._db.begin() as conn:
            return conn.execute(
                update(sources)
                .where(sources.c.status.in_(BUSY))
                .values(
                    status="error",
                    last_error="The sync was interrupted when deskmate stopped; it runs again at its "
                    "next schedule, or press Sync.",
                )
            ).rowcount

    def remove(self, source_id: str) -> None:
        with self._db.begin() as conn:
            conn.execute(delete(source_documents).where(source_documents.c.source_id == source_id))
            conn.execute(delete(sources).where(sources.c.id == source_id))

    # --- documents ----------------------------------------------------------------------------
    def documents(self, source_id: str) -> dict[str, dict[str, Any]]:
        with self._db.connect() as conn:
            rows = conn.execute(select(source_documents).where(source_documents.c.source_id == source_id)).all()
        return {r.external_id: {**dict(r._mapping), "audience": json.loads(r.audience)} for r in rows}

    def document_count(self, source_id: str) -> int:
        with self._db.connect() as conn:
            return int(
                conn.execute(
                    select(func.count()).select_from(source_documents).where(source_documents.c.source_id == source_id)
                ).scalar_one()
            )

    def put_document(
        self,
        source_id: str,
        external_id: str,
        *,
        doc_id: str,
        url: str,
        version: str,
        audience: builtins.list[str] | None,
        title: str,
    ) -> None:
        values = {"doc_id": doc_id, "url": url, "version": version, "audience": json.dumps(audience), "title": title}
        statement = self._db.insert(source_documents).values(source_id=source_id, external_id=external_id, **values)
        with self._db.begin() as conn:
            conn.execute(statement.on_conflict_do_update(index_elements=["source_id", "external_id"], set_=values))

    def drop_document(self, source_id: str, external_id: str) -> None:
        with self._db.begin() as conn:
            conn.execute(
                delete(source_documents).where(
                    source_documents.c.source_id == source_id, source_documents.c.external_id == external_id
                )
            )

    def close(self) -> None:
        """The database belongs to the app (Resources closes it)."""
