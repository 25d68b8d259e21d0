"""One sync of one source: a plain function an ingestion job (or a background task) calls.

changes since the cursor → fetch → index (unchanged content is not embedded again: content-hash versions);
ids gone from the source → their documents removed; every known document's permissions re-read, and a page
whose audience changed is indexed again with it. The cursor advances only when the whole sync succeeded,
so a failed sync is simply run again.

Fetched documents are indexed in batches (`IndexingService.index_many`): the chunks of many small pages are
embedded in full encoder batches and written to the index in a few writes, while each document still switches
to its new version atomically.
"""

from __future__ import annotations

import logging
import time
from typing import Callable

from app.adapters.source_store import SourceStore, utc_now
from app.connectors.base import Connector, ConnectorError, DocumentRef, RemoteDocument, ResponseTooLarge, Unreadable
from app.indexing_service import IndexingService, PendingDocument
from core.errors import DocumentRejected
from core.filters import AUDIENCE_FIELD
from nodes.indexing.steps import document_id

log = logging.getLogger(__name__)
MAX_REPORTED_FAILURES = 5
BATCH_DOCUMENTS = 128  # fetched documents held (bytes and chunks) before they are indexed together …
BATCH_BYTES = 64 * 1024 * 1024  # … or fewer when they are large files


def sync_source(
    source_id: str, *, store: SourceStore, indexer: IndexingService, build_connector: Callable[[dict], Connector]
) -> dict:
    """Run one sync; returns the counts also stored on the source (added, updated, unchanged, deleted …)."""
    source = store.get(source_id)
    if source is None:
        raise KeyError(source_id)
    started = time.monotonic()
    store.update(source_id, status="syncing", last_error=None)
    counts = {
        "added": 0,
        "updated": 0,
        "unchanged": 0,
        "deleted": 0,
        "failed": 0,
        "permissions_changed": 0,
        "withheld": 0,
        "chunks_embedded": 0,
    }
    failures: list[str] = []
    connector = None
    try:
        connector = build_connector(source)
        known = store.documents(source_id)
        changes = connector.list_changed(source.get("cursor"))
        seen: set[str] = set()
        fetched: set[str] = set()
        batch = _Batch(connector, store, indexer, source_id, counts, failures)
        for ref in changes.changed:
            seen.add(ref.external_id)
            prior = known.get(ref.external_id)
            if prior is not None and prior["version"] == ref.version and ref.version:
                counts["unchanged"] += 1
                continue
            fetched.add(ref.external_id)
            batch.add(ref, prior)
        batch.flush()
        gone = connector.list_deleted(set(known) - seen) if known else set()
        for external_id in sorted(gone):
            indexer.delete(known[external_id]["doc_id"])
            store.drop_document(source_id, external_id)
            counts["deleted"] += 1
        for external_id, prior in known.items():  # permissions change without touching the page
            if external_id in fetched or external_id in gone:
                continue
            try:
                audience = connector.current_audience(external_id)
            except Unreadable as exc:
                batch.withhold(DocumentRef(external_id, prior["version"]), prior, exc.reason)
                continue
            if audience is not None and audience != prior["audience"]:
                counts["permissions_changed"] += 1
                batch.add(DocumentRef(external_id, prior["version"]), prior)
        batch.flush()
        error = None
        if failures:
            error = f"{counts['failed']} document(s) could not be indexed: " + "; ".join(failures)
        store.update(
            source_id,
            status="ok" if not failures else "error",
            cursor=changes.cursor,
            last_sync_at=utc_now(),
            last_error=error,
            last_counts=counts,
        )
    except ConnectorError as exc:
        log.warning("sync of source %s failed: %s", source_id, exc.reason)
        store.update(source_id, status="error", last_sync_at=utc_now(), last_error=exc.reason, last_counts=counts)
    except Exception as exc:  # a job must record its failure, not vanish with it
        log.exception("sync of source %s failed", source_id)
        store.update(
            source_id,
            status="error",
            last_sync_at=utc_now(),
            last_error=f"The sync stopped unexpectedly ({type(exc).__name__}); see the server log.",
            last_counts=counts,
        )
    finally:
        if connector is not None:
            connector.close()
    log.info("source %s synced in %.1f s: %s", source_id, time.monotonic() - started, counts)
    return counts


class _Batch:
    """Fetched documents waiting to be indexed together; flushed every BATCH_DOCUMENTS and at the end."""

    def __init__(
        self,
        connector: Connector,
        store: SourceStore,
        indexer: IndexingService,
        source_id: str,
        counts: dict,
        failures: list[str],
    ) -> None:
        self._connector, self._store, self._indexer, self._source_id = connector, store, indexer, source_id
        self._counts, self._failures = counts, failures
        self._waiting: list[tuple[DocumentRef, dict | None, RemoteDocument, list[str] | None]] = []
        self._bytes = 0

    def add(self, ref: DocumentRef, prior: dict | None) -> None:
        try:
            document: RemoteDocument = self._connector.fetch(ref)
            audience = self._connector.audience(document)
        except (DocumentRejected, ResponseTooLarge) as exc:  # this document is skipped, the sync goes on
            self._fail(ref, exc.reason)
            return
        except Unreadable as exc:
            self.withhold(ref, prior, exc.reason)
            return
        self._waiting.append((ref, prior, document, audience))
        self._bytes += len(document.data)
        if len(self._waiting) >= BATCH_DOCUMENTS or self._bytes >= BATCH_BYTES:
            self.flush()

    def flush(self) -> None:
        waiting, self._waiting, self._bytes = self._waiting, [], 0
        if not waiting:
            return
        results = self._indexer.index_many(
            [
                PendingDocument(
                    document.url,
                    document.data,
                    {AUDIENCE_FIELD: audience} if audience else {},
                    filename=document.filename,
                )
                for _, _, document, audience in waiting
            ]
        )
        for (ref, prior, document, audience), result in zip(waiting, results):
            if result.status == "failed":
                self._fail(ref, result.error or "it could not be indexed")
                continue
            if prior is not None and prior["doc_id"] != document_id(document.url):
                self._indexer.delete(prior["doc_id"])  # moved: its old address goes
            if result.status == "unchanged":
                self._counts["unchanged"] += 1
            else:
                self._counts["added" if prior is None else "updated"] += 1
                self._counts["chunks_embedded"] += result.document.get("chunk_count", 0) if result.document else 0
            self._store.put_document(
                self._source_id,
                ref.external_id,
                doc_id=document_id(document.url),
                url=document.url,
                version=document.version,
                audience=audience,
                title=document.title,
            )

    def withhold(self, ref: DocumentRef, prior: dict | None, reason: str) -> None:
        """No audience may read it at the source: not indexed, and a copy indexed before goes."""
        self._counts["withheld"] += 1
        log.info("source %s: %s not indexed: %s", self._source_id, ref.external_id, reason)
        if prior is not None:
            self._indexer.delete(prior["doc_id"])
            self._store.drop_document(self._source_id, ref.external_id)

    def _fail(self, ref: DocumentRef, reason: str) -> None:
        self._counts["failed"] += 1
        if len(self._failures) < MAX_REPORTED_FAILURES:
            self._failures.append(f"{ref.title or ref.external_id}: {reason}")


def remove_source(source_id: str, *, store: SourceStore, indexer: IndexingService) -> int:
    """Delete a source and every document it indexed; returns how many documents went."""
    documents = store.documents(source_id)
    for document in documents.values():
        indexer.delete(document["doc_id"])
    store.remove(source_id)
    return len(documents)
