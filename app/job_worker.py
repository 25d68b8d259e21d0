"""Runs ingestion jobs: an upload's indexing, a source sync, the bundled KB sync.

One `JobWorker` runs one job at a time. While a job runs, a heartbeat thread renews its lease and records
its progress (chunks embedded of total) about once a second, and reads whether an admin cancelled it; the
indexing graph's embed step reports every batch, and that is where a cancelled (or abandoned) job stops —
before its store step, so the index keeps the document's previous version (the atomic version switch).
The in-process worker (a thread started by the FastAPI lifespan) and `deskmate worker` are this class.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Callable

from app.includes import IncludeResolver
from app.indexing_service import IndexingService, has_bundled_kb, sync_bundled_kb
from app.storage.database import DatabaseUnavailable
from app.storage.jobs import JobLost, JobQueue, worker_name
from app.storage.originals import OriginalStore
from core.errors import DeskmateError, DocumentRejected, IndexUnavailable
from nodes.indexing.steps import content_version, document_id

log = logging.getLogger(__name__)
HEARTBEAT_S = 1.0
KB_SYNC_LOCK = "deskmate:sync-kb"


class JobInterrupted(BaseException):
    """Stops a running job at its next embedding batch. A BaseException, like asyncio's CancelledError, so
    that code which records any Exception as a failure (a source sync does) lets it through."""


class JobCancelled(JobInterrupted):
    """An admin cancelled the job (DELETE /jobs/{id})."""


class WorkerStopping(JobInterrupted):
    """The worker is shutting down: the job goes back to the queue for another worker."""


class JobLeaseLost(JobInterrupted):
    """Another worker took the job over (this one missed its lease): stop without recording anything."""


class JobWorker:
    def __init__(
        self, resources, queue: JobQueue, originals: OriginalStore, *, name: str | None = None, poll_s: float = 1.0
    ) -> None:
        self.resources = resources
        self.queue = queue
        self.originals = originals
        self.name = name or worker_name()
        self.poll_s = poll_s
        self.stopping = threading.Event()
        self.waking = threading.Event()  # set by an in-process enqueue: look at the queue now
        self.current: str | None = None  # the id of the job running now

    # --- the loop -------------------------------------------------------------------------------------
    def serve(self) -> None:
        """Run jobs until `stopping` is set; a database that is down is waited out, not fatal."""
        log.info("job worker %s started", self.name)
        while not self.stopping.is_set():
            try:
                ran = self.run_next()
            except (DeskmateError, DatabaseUnavailable) as exc:  # Chroma or the database is down: pause, retry
                log.warning("job worker %s: %s; retrying in %g s", self.name, exc, self.poll_s * 5)
                self.stopping.wait(self.poll_s * 5)
                continue
            except Exception:
                log.exception("job worker %s: unexpected error between jobs", self.name)
                self.stopping.wait(self.poll_s * 5)
                continue
            if not ran:
                self.waking.wait(self.poll_s)
                self.waking.clear()
        log.info("job worker %s stopped", self.name)

    def wake(self) -> None:
        """A job was just queued in this process: claim it without waiting for the next poll."""
        self.waking.set()

    def stop(self) -> None:
        """Stop after the current job, or hand it back to the queue at its next embedding batch."""
        self.stopping.set()
        self.waking.set()

    def run_next(self, ids: list[str] | None = None) -> bool:
        """Claim and run one queued job (one of `ids`, when given); False when there was none."""
        job = self.queue.claim(self.name, ids=ids)
        if job is None:
            return False
        self.run(job)
        return True

    def start_thread(self) -> threading.Thread:
        thread = threading.Thread(target=self.serve, name="job-worker", daemon=True)
        thread.start()
        return thread

    # --- one job --------------------------------------------------------------------------------------
    def run(self, job: dict) -> dict | None:
        """Run a job this worker has claimed to its end; the job as recorded (None when it was given up)."""
        handler = {"index_upload": self._index_upload, "sync_source": self._sync_source, "sync_kb": self._sync_kb}[
            job["kind"]
        ]
        beat = _Heartbeat(self.queue, job["id"], self.name, self.stopping)
        self.current = job["id"]
        started = time.monotonic()
        log.info("job %s (%s) started by %s, attempt %d", job["id"], job["kind"], self.name, job["attempts"])
        beat.start()
        try:
            try:
                result = handler(job, beat.progress)
            finally:
                beat.stop()  # its last write records the final progress, before the outcome
        except JobCancelled:
            reason = self.queue.get(job["id"]).get("error")  # superseded: why (the document was deleted)
            outcome = self.queue.finish(
                job["id"],
                self.name,
                "cancelled",
                error=reason or "Cancelled while it ran; the knowledge base was left as it was before.",
            )
        except WorkerStopping:
            self.queue.release(job["id"], self.name)
            log.info("job %s handed back to the queue: this worker is stopping", job["id"])
            return None
        except JobLeaseLost:
            log.warning("job %s was taken over by another worker; this run gave it up", job["id"])
            return None
        except DocumentRejected as exc:
            outcome = self.queue.finish(job["id"], self.name, "failed", error=exc.reason, error_kind=exc.kind)
        except IndexUnavailable as exc:
            log.error("job %s: the knowledge base is unreachable: %s", job["id"], exc)
            outcome = self.queue.finish(
                job["id"],
                self.name,
                "failed",
                error_kind="unavailable",
                error="The knowledge base was unreachable while this job ran; try again in a minute.",
            )
        except Exception as exc:  # a job records why it failed instead of vanishing with it
            log.exception("job %s (%s) failed", job["id"], job["kind"])
            outcome = self.queue.finish(
                job["id"],
                self.name,
                "failed",
                error_kind="error",
                error=f"The job stopped unexpectedly ({type(exc).__name__}); see the worker's log.",
            )
        else:
            outcome = self.queue.finish(job["id"], self.name, "done", result=result)
        finally:
            self.current = None
        if outcome["state"] != "done" and job["kind"] == "index_upload":
            forget_unused_original(self.resources, job["payload"])
        if outcome["state"] != "done" and job["kind"] == "sync_source":
            end_source_sync(self.resources, outcome)
        log.info("job %s (%s) %s in %.1f s", job["id"], job["kind"], outcome["state"], time.monotonic() - started)
        return outcome

    # --- the kinds ------------------------------------------------------------------------------------
    def _indexer(self, collection: str | None) -> IndexingService:
        indexer = self.resources.indexer_for(collection or None)
        if indexer is None:
            raise DocumentRejected(
                f"The collection '{collection}' is no longer configured; upload the document "
                "again to a configured one.",
                kind="unknown_collection",
            )
        return indexer

    def _index_upload(self, job: dict, progress: Callable[[int, int], None]) -> dict:
        payload = job["payload"]
        stored = self.originals.get(payload["doc_id"], payload["version"])
        if stored is None:
            raise DocumentRejected(
                f"The uploaded file {payload['filename']} is no longer stored (the document was "
                "deleted meanwhile?); upload it again.",
                kind="gone",
            )
        indexer = self._indexer(payload.get("collection")).observed(progress)
        result = indexer.index_bytes(payload["source"], stored[1], payload.get("document_context") or {})
        if result.status != "unchanged":
            self.originals.drop_older(payload["doc_id"], payload["version"])
        return {"status": result.status, "document": result.document}

    def _sync_source(self, job: dict, progress: Callable[[int, int], None]) -> dict:
        from app.connectors.registry import build_connector
        from app.source_sync import sync_source

        source_id = job["payload"]["source_id"]
        store = self.resources.sources
        try:
            return sync_source(
                source_id,
                store=store,
                indexer=self.resources.indexer.observed(progress),
                build_connector=build_connector,
            )
        except JobCancelled:
            store.update(source_id, status="error", last_error="The sync was cancelled.")
            raise
        except WorkerStopping:  # the job goes back to the queue: the source waits for it, as queued
            store.update(source_id, status="queued", last_error="The sync was interrupted; it runs again.")
            raise
        # JobLeaseLost: another worker runs this sync now and records its state; nothing to write here

    def _sync_kb(self, job: dict, progress: Callable[[int, int], None]) -> dict:

        # every replica starts one; the lock makes them run one after the other, and the later ones find
        # every file unchanged (content-hash versions), so the KB is indexed once
        with self.resources.database.named_lock(KB_SYNC_LOCK, wait_s=self.resources.settings.jobs.kb_sync_wait_s):
            return {"counts": sync_bundled_kb(self.resources, indexer=self.resources.indexer.observed(progress))}


def forget_unused_original(resources, payload: dict) -> None:
    """A failed or cancelled upload's file goes, unless that version is the active one (it was unchanged) or a
    queued or running upload of the same bytes still needs it (the employee uploaded it again)."""
    try:
        indexer = resources.indexer_for(payload.get("collection") or None) or resources.indexer
        active = indexer.index.get_document(payload["doc_id"])
        wanted = any(
            job["payload"].get("version") == payload["version"] for job in resources.jobs.uploads_of(payload["doc_id"])
        )
        if not wanted and (active is None or active["version"] != payload["version"]):
            resources.originals.drop(payload["doc_id"], payload["version"])
    except (DeskmateError, DatabaseUnavailable) as exc:  # kept; the next upload of the document replaces it
        log.warning("could not drop the unused upload of %s: %s", payload["doc_id"], exc)


SUPERSEDE_WAIT_S = 30.0  # how long a delete waits for a running upload of its document to stop
DELETED_WHILE_QUEUED = (
    "The document was deleted (DELETE /documents/{doc_id}) while this upload was queued or "
    "running; it was not indexed. Upload it again to add it back."
)


def delete_with_uploads(resources, indexer: IndexingService, doc_id: str) -> bool:
    """Delete a document and cancel the queued or running uploads of it, so none adds it back when it ends.

    Each such job ends `cancelled`, its error saying the document was deleted: a queued one now, a running one
    at its next chunk batch (or before its switch, which reads the flag itself). A running job is waited for
    (at most SUPERSEDE_WAIT_S); one that switched just before it saw the flag has its document deleted again
    and is recorded as cancelled too. False when there was neither a document nor an upload of it."""
    reason = DELETED_WHILE_QUEUED.format(doc_id=doc_id)
    uploads = [
        job
        for job in resources.jobs.uploads_of(doc_id)
        if (resources.indexer_for(job["payload"].get("collection") or None) or resources.indexer) is indexer
    ]
    superseded = [resources.jobs.supersede(job["id"], reason) for job in uploads]
    deleted = indexer.delete(doc_id)
    for job in superseded:
        if job["state"] != "running":
            continue
        ended = resources.jobs.wait(job["id"], SUPERSEDE_WAIT_S, poll_s=0.2)
        if ended["state"] == "done" and resources.jobs.supersede_finished(job["id"], reason):
            indexer.delete(doc_id)  # it switched before it read the flag: undone
            log.info("upload job %s finished as its document %s was deleted; deleted again", job["id"], doc_id)
        elif ended["state"] == "running":
            log.warning(
                "upload job %s of deleted document %s still runs after %g s; it stops at its next batch",
                job["id"],
                doc_id,
                SUPERSEDE_WAIT_S,
            )
    for job in superseded:
        log.info("upload job %s cancelled: its document %s was deleted", job["id"], doc_id)
    return deleted or bool(superseded)


def end_source_sync(resources, job: dict) -> None:
    """A `sync_source` job that failed or was cancelled without the sync recording it (a worker killed for the
    last time, an error before the sync began): its source shows the job's error instead of "syncing"."""
    if job["kind"] != "sync_source" or job["state"] not in ("failed", "cancelled") or resources.sources is None:
        return
    source_id = job["payload"].get("source_id")
    error = job.get("error") or f"The sync's job {job['state']}."
    if source_id and resources.sources.end_sync(source_id, f"{error} (job {job['id']})"):
        log.warning("source %s: its sync job %s %s: %s", source_id, job["id"], job["state"], error)


def enqueue_index(
    resources, source: str, filename: str, data: bytes, document_context: dict, *, collection: str | None = None
) -> dict:
    """Store a file (any replica or worker reads it from the database) and queue its `index_upload` job."""
    # the version the index will record: the bytes with their includes resolved (alone: left out)
    version = content_version(IncludeResolver.from_bytes({source: data}).expand(source, data))
    doc_id = document_id(source)
    resources.originals.put(doc_id, version, filename, data)
    job = resources.jobs.enqueue(
        "index_upload",
        {
            "doc_id": doc_id,
            "version": version,
            "source": source,
            "filename": filename,
            "collection": collection,
            "document_context": document_context,
        },
    )
    # the same bytes uploaded again just as an earlier upload of them failed: that job's clean-up may have dropped
    # the file between the two writes above (it spares a version that a queued job still needs)
    if resources.originals.get(doc_id, version) is None:
        resources.originals.put(doc_id, version, filename, data)
    return job


def sync_kb_at_start(resources) -> dict | None:
    """The start-up sync of the bundled KB, as a `sync_kb` job this process runs itself (recorded in the job
    list like any other). None when there is no bundled KB folder."""

    if not has_bundled_kb(resources.settings):
        return None
    worker = JobWorker(resources, resources.jobs, resources.originals)
    job = resources.jobs.enqueue("sync_kb", {"kb_dir": str(resources.settings.storage.kb_dir)}, worker=worker.name)
    outcome = worker.run(job)
    if outcome is not None and outcome["state"] == "failed":
        log.error("the bundled knowledge base was not synced: %s", outcome["error"])
    return outcome


class _Heartbeat:
    """Renews a running job's lease and records its progress about once a second, on a thread of its own (a
    long parse or a large Chroma write reports no progress, but the worker is alive)."""

    def __init__(self, queue: JobQueue, job_id: str, worker: str, stopping: threading.Event) -> None:
        self.queue, self.job_id, self.worker, self.stopping = queue, job_id, worker, stopping
        self.done = self.total = 0
        self._base = 0  # chunks of the documents finished earlier in this job (a sync indexes many)
        self._last_total = 0
        self.cancelled = False
        self.lost = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, name=f"job-heartbeat-{job_id[:8]}", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def progress(self, done: int, total: int) -> None:
        """The indexing graph's report after each embedding batch; where a job stops when asked to."""
        if done == 0:  # a new document of this job begins
            self._base += self._last_total
        self._last_total = total
        self.done, self.total = self._base + done, self._base + total
        if total and done == total:  # the last batch: read a cancellation now, not at the next beat, so a job
            self._beat_once()  # whose document was deleted a moment ago does not switch to it
        if self.lost:
            raise JobLeaseLost(self.job_id)
        if self.cancelled:
            raise JobCancelled(self.job_id)
        if self.stopping.is_set():
            raise WorkerStopping(self.job_id)

    def _beat_once(self) -> bool:
        """Renew the lease and read the cancel flag; False once the job is lost (taken over)."""
        try:
            self.cancelled = self.queue.heartbeat(self.job_id, self.worker, done=self.done, total=self.total)
        except JobLost:
            self.lost = True
            return False
        except (DeskmateError, DatabaseUnavailable) as exc:  # the database blinked: the lease has room for a few misses
            log.warning("job %s: heartbeat failed: %s", self.job_id, exc)
        return True

    def _beat(self) -> None:
        interval = min(HEARTBEAT_S, self.queue.lease_s / 3)
        while not self._stop.wait(interval):
            if not self._beat_once():
                return
        try:  # the final count, so a finished job shows all its chunks
            self.queue.heartbeat(self.job_id, self.worker, done=self.done, total=self.total)
        except (JobLost, DeskmateError, DatabaseUnavailable):
            pass  # the job was taken over, or the database is down: the outcome is what counts
