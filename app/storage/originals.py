"""Uploaded originals in the relational store: any replica serves the download, any worker indexes them.

A row is one version of one document (its content version, as the index records it). An upload stores its
version before the job runs; the job drops the older versions once the new one is active, and its own
version when it failed or was cancelled and that version never became active. Files that older deskmates
wrote to data/uploads are still read by the download (app/routers/documents.py), so an upgrade loses none.
"""

from __future__ import annotations

import time

from sqlalchemy import delete, select

from app.storage.database import Database
from app.storage.schema import document_originals


class OriginalStore:
    def __init__(self, database: Database) -> None:
        self.database = database

    def put(self, doc_id: str, version: str, filename: str, data: bytes) -> None:
        """Store one version (the same version again changes nothing)."""
        statement = self.database.insert(document_originals).values(
            doc_id=doc_id, version=version, filename=filename, data=data, size_bytes=len(data), created_at=time.time()
        )
        # the same version again is the newest upload of it (what keep_only measures "older" by)
        statement = statement.on_conflict_do_update(
            index_elements=["doc_id", "version"], set_={"created_at": statement.excluded.created_at}
        )
        with self.database.begin() as conn:
            conn.execute(statement)

    def get(self, doc_id: str, version: str) -> tuple[str, bytes] | None:
        """(filename, bytes) of that version, or None."""
        with self.database.connect() as conn:
            row = conn.execute(
                select(document_originals.c.filename, document_originals.c.data).where(
                    document_originals.c.doc_id == doc_id, document_originals.c.version == version
                )
            ).first()
        return (row.filename, bytes(row.data)) if row is not None else None

    def drop_older(self, doc_id: str, version: str) -> int:
        """Drop the versions stored before this one (now active); a newer upload still queued stays."""
        table = document_originals
        with self.database.begin() as conn:
            mine = conn.execute(
                select(table.c.created_at).where(table.c.doc_id == doc_id, table.c.version == version)
            ).scalar()
            if mine is None:
                return 0
            return conn.execute(
                delete(table).where(table.c.doc_id == doc_id, table.c.version != version, table.c.created_at <= mine)
            ).rowcount

    def drop(self, doc_id: str, version: str | None = None) -> int:
        """Drop one version, or (version None) every version of the document."""
        condition = document_originals.c.doc_id == doc_id
        if version is not None:
            condition = condition & (document_originals.c.version == version)
        with self.database.begin() as conn:
            return conn.execute(delete(document_originals).where(condition)).rowcount
