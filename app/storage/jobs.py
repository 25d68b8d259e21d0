"""The ingestion job queue, on the relational store deskmate already has (no queue service).

A job is a row: queued → running → done | failed | cancelled. A worker claims the oldest queued job with
`SELECT … FOR UPDATE SKIP LOCKED` on Postgres (two workers never take the same row, and neither waits for
the other); on SQLite (one process per data dir) the claim is a conditional UPDATE in a transaction. A running
job carries a lease its worker renews; a lease that ran out means the worker died, and the next claim puts
the job back in the queue to be run again from the start (content-hash versions make that safe), up to
`max_attempts` times, then it fails with a message saying so.
"""

from __future__ import annotations

import builtins
import json
import logging
import os
import socket
import threading
import time
import uuid
from typing import Any, Callable

from sqlalchemy import and_, delete, or_, select, update

from app.storage.database import Database
from app.storage.schema import JOB_KINDS, jobs

log = logging.getLogger(__name__)
TERMINAL = ("done", "failed", "cancelled")
MAX_LISTED = 200


class JobNotFound(KeyError):
    """No job with this id."""


class JobLost(RuntimeError):
    """This worker no longer holds the job (its lease ran out and another worker took it over)."""


def worker_name() -> str:
    """host:pid:thread — who runs a job, for the admin list and the log."""
    return f"{socket.gethostname()}:{os.getpid()}:{threading.get_ident() % 100000}"


class JobQueue:
    """Enqueue, claim, report progress, finish and cancel jobs."""

    def __init__(
        self,
        database: Database,
        *,
        lease_s: float = 60.0,
        max_attempts: int = 3,
        on_given_up: Callable[[dict], None] | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.database = database
        # the wall clock leases are measured on (a test passes its own, so a loaded machine cannot expire a lease)
        self._clock = clock
        self.lease_s = lease_s
        self.max_attempts = max_attempts
        # told about every job the lease sweep ends for good (failed after max_attempts, or cancelled): no
        # worker is left to record what the job was doing (a source shown "syncing" is settled here)
        self.on_given_up = on_given_up

    # --- producers ------------------------------------------------------------------------------------
    def enqueue(self, kind: str, payload: dict[str, Any], *, worker: str | None = None) -> dict:
        """A new queued job (or, with `worker`, one already claimed by that worker: run in place)."""
        if kind not in JOB_KINDS:
            raise ValueError(f"unknown job kind {kind!r}; known: {', '.join(JOB_KINDS)}")
        now = self._clock()
        row = {
            "id": uuid.uuid4().hex,
            "kind": kind,
            "state": "queued",
            "payload": json.dumps(payload),
            "progress_done": 0,
            "progress_total": 0,
            "attempts": 0,
            "cancel_requested": 0,
            "created_at": now,
        }
        if worker is not None:
            row.update(
                state="running",
                attempts=1,
                worker=worker,
                started_at=now,
                heartbeat_at=now,
                lease_until=now + self.lease_s,
            )
        with self.database.begin() as conn:
            conn.execute(jobs.insert().values(**row))
        return self.get(str(row["id"]))

    def get(self, job_id: str) -> dict:
        with self.database.connect() as conn:
            row = conn.execute(select(jobs).where(jobs.c.id == job_id)).mappings().first()
        if row is None:
            raise JobNotFound(job_id)
        return _job(row)

    def list(self, *, limit: int = 50, state: str | None = None, kind: str | None = None) -> list[dict]:
        """The most recent jobs first."""
        query = select(jobs).order_by(jobs.c.created_at.desc()).limit(max(1, min(limit, MAX_LISTED)))
        if state:
            query = query.where(jobs.c.state == state)
        if kind:
            query = query.where(jobs.c.kind == kind)
        with self.database.connect() as conn:
            return [_job(row) for row in conn.execute(query).mappings()]

    def active(self, kind: str) -> builtins.list[dict]:
        """Queued or running jobs of one kind."""
        with self.database.connect() as conn:
            rows = conn.execute(
                select(jobs)
                .where(jobs.c.kind == kind, jobs.c.state.in_(("queued", "running")))
                .order_by(jobs.c.created_at)
            ).mappings()
            return [_job(row) for row in rows]

    def cancel(self, job_id: str) -> dict:
        """A queued job is cancelled now; a running one is asked to stop at its next chunk batch."""
        now = self._clock()
        with self.database.begin() as conn:
            conn.execute(
                update(jobs)
                .where(jobs.c.id == job_id, jobs.c.state == "queued")
                .values(state="cancelled", finished_at=now, error="Cancelled before it started.")
            )
            conn.execute(update(jobs).where(jobs.c.id == job_id, jobs.c.state == "running").values(cancel_requested=1))
        return self.get(job_id)

    def uploads_of(self, doc_id: str) -> builtins.list[dict]:
        """Queued or running `index_upload` jobs of one document id (in any collection)."""
        return [job for job in self.active("index_upload") if job["payload"].get("doc_id") == doc_id]

    def supersede(self, job_id: str, reason: str) -> dict:
        """Cancel a job because what it would write is no longer wanted (its document was deleted): a queued
        job now, a running one at its next chunk batch or before its switch; `reason` is its error either way."""
        now = self._clock()
        with self.database.begin() as conn:
            conn.execute(
                update(jobs)
                .where(jobs.c.id == job_id, jobs.c.state == "queued")
                .values(state="cancelled", finished_at=now, error=reason)
            )
            conn.execute(
                update(jobs)
                .where(jobs.c.id == job_id, jobs.c.state == "running")
                .values(cancel_requested=1, error=reason)
            )
        return self.get(job_id)

    def supersede_finished(self, job_id: str, reason: str) -> bool:
        """A job that finished `done` just before it saw its cancellation, whose work was then undone (the
        document it indexed was deleted again): recorded as cancelled, with `reason`."""
        with self.database.begin() as conn:
            return (
                conn.execute(
                    update(jobs)
                    .where(jobs.c.id == job_id, jobs.c.state == "done")
                    .values(state="cancelled", error=reason, result=None)
                ).rowcount
                == 1
            )

    # --- workers --------------------------------------------------------------------------------------
    def claim(self, worker: str, *, ids: builtins.list[str] | None = None) -> dict | None:
        """Take the oldest queued job (of `ids`, when given) for `worker`; None when there is none."""
        self.requeue_expired()
        now = self._clock()
        with self.database.begin() as conn:
            query = select(jobs.c.id).where(jobs.c.state == "queued").order_by(jobs.c.created_at).limit(1)
            if ids is not None:
                query = query.where(jobs.c.id.in_(ids))
            if self.database.is_postgres:
                query = query.with_for_update(skip_locked=True)
            job_id = conn.execute(query).scalar()
            if job_id is None:
                return None
            taken = conn.execute(
                update(jobs)
                .where(jobs.c.id == job_id, jobs.c.state == "queued")
                .values(
                    state="running",
                    worker=worker,
                    attempts=jobs.c.attempts + 1,
                    started_at=now,
                    heartbeat_at=now,
                    lease_until=now + self.lease_s,
                    progress_done=0,
                    progress_total=0,
                    error=None,
                    error_kind=None,
                )
            ).rowcount
        return self.get(job_id) if taken == 1 else None

    def requeue_expired(self) -> int:
        """Running jobs whose worker stopped renewing the lease: queued again, or failed after max_attempts
        (`on_given_up` is told about each job ended here)."""
        now = self._clock()
        expired = and_(jobs.c.state == "running", jobs.c.lease_until < now)
        with self.database.connect() as conn:  # a read first: an idle worker's poll writes nothing
            if conn.execute(select(jobs.c.id).where(expired).limit(1)).first() is None:
                return 0
        with self.database.begin() as conn:
            failed = [
                row.id
                for row in conn.execute(
                    update(jobs)
                    .where(expired, jobs.c.attempts >= self.max_attempts)
                    .values(
                        state="failed",
                        finished_at=now,
                        worker=None,
                        error_kind="interrupted",
                        error=f"The worker running this job stopped {self.max_attempts} times (killed or out of "
                        "memory?); it was not retried again. Check the worker's log, then upload or sync "
                        "again.",
                    )
                    .returning(jobs.c.id)
                )
            ]
            requeued = conn.execute(
                update(jobs)
                .where(expired, or_(jobs.c.cancel_requested == 0, jobs.c.cancel_requested.is_(None)))
                .values(state="queued", worker=None, lease_until=None)
            ).rowcount
            cancelled = [
                row.id
                for row in conn.execute(
                    update(jobs)
                    .where(expired)
                    .values(state="cancelled", finished_at=now, worker=None, error="Cancelled while it ran.")
                    .returning(jobs.c.id)
                )
            ]
        if self.on_given_up is not None:
            for job_id in failed + cancelled:
                try:
                    self.on_given_up(self.get(job_id))
                except Exception:  # noqa: BLE001 — the job's own record is what counts; the next sweep is no retry
                    log.exception("recording the end of job %s failed", job_id)
        return len(failed) + requeued

    def heartbeat(self, job_id: str, worker: str, *, done: int | None = None, total: int | None = None) -> bool:
        """Renew the lease (and record progress); True when an admin asked the job to stop.

        JobLost when the job is no longer this worker's (its lease ran out and it was taken over)."""
        now = self._clock()
        values: dict[str, Any] = {"heartbeat_at": now, "lease_until": now + self.lease_s}
        if done is not None:
            values["progress_done"] = done
        if total is not None:
            values["progress_total"] = total
        with self.database.begin() as conn:
            held = conn.execute(
                update(jobs)
                .where(jobs.c.id == job_id, jobs.c.worker == worker, jobs.c.state == "running")
                .values(**values)
            ).rowcount
            if held != 1:
                raise JobLost(job_id)
            return bool(conn.execute(select(jobs.c.cancel_requested).where(jobs.c.id == job_id)).scalar())

    def finish(
        self,
        job_id: str,
        worker: str,
        state: str,
        *,
        result: dict | None = None,
        error: str | None = None,
        error_kind: str | None = None,
    ) -> dict:
        """Record the outcome of a job this worker holds."""
        if state not in TERMINAL:
            raise ValueError(f"a job finishes done, failed or cancelled, not {state!r}")
        with self.database.begin() as conn:
            conn.execute(
                update(jobs)
                .where(jobs.c.id == job_id, jobs.c.worker == worker, jobs.c.state == "running")
                .values(
                    state=state,
                    finished_at=self._clock(),
                    lease_until=None,
                    error=error,
                    error_kind=error_kind,
                    result=json.dumps(result) if result is not None else None,
                )
            )
        return self.get(job_id)

    def release(self, job_id: str, worker: str) -> None:
        """Give a running job back to the queue untouched (the worker is stopping); it is not an attempt."""
        with self.database.begin() as conn:
            conn.execute(
                update(jobs)
                .where(jobs.c.id == job_id, jobs.c.worker == worker, jobs.c.state == "running")
                .values(state="queued", worker=None, lease_until=None, attempts=jobs.c.attempts - 1)
            )

    def wait(self, job_id: str, timeout_s: float, *, poll_s: float = 0.1) -> dict:
        """The job once it has finished, or as it is when `timeout_s` runs out."""
        deadline = time.monotonic() + max(0.0, timeout_s)
        while True:
            job = self.get(job_id)
            if job["state"] in TERMINAL or time.monotonic() >= deadline:
                return job
            time.sleep(min(poll_s, max(0.0, deadline - time.monotonic())) or poll_s)

    def prune(self, older_than_s: float) -> int:
        """Forget finished jobs older than this (the retention pass)."""
        cutoff = self._clock() - older_than_s
        with self.database.begin() as conn:
            return conn.execute(delete(jobs).where(jobs.c.state.in_(TERMINAL), jobs.c.finished_at < cutoff)).rowcount


def _job(row) -> dict:
    job = dict(row)
    job["payload"] = json.loads(job["payload"] or "{}")
    job["result"] = json.loads(job["result"]) if job.get("result") else None
    job["cancel_requested"] = bool(job.get("cancel_requested"))
    return job
