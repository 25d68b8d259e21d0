"""GET /jobs, GET/DELETE /jobs/{id}: ingestion jobs (uploads, source syncs, the KB sync); admin only."""

from __future__ import annotations

import re

from fastapi import APIRouter, Depends, HTTPException, Query

from app.deps import get_resources, require_admin
from app.job_worker import forget_unused_original
from app.resources import Resources
from app.schemas import JobList, JobOut, job_out
from app.storage.jobs import JobNotFound

router = APIRouter(tags=["jobs"], dependencies=[Depends(require_admin)])


def _job(resources: Resources, job_id: str) -> dict:
    try:
        if not re.fullmatch(r"[0-9a-f]{32}", job_id):
            raise JobNotFound(job_id)
        return resources.jobs.get(job_id)
    except JobNotFound:
        raise HTTPException(
            status_code=404, detail=f"No job with id '{job_id}'. GET /jobs lists the recent ones."
        ) from None


@router.get("/jobs", response_model=JobList)
def list_jobs(
    limit: int = Query(50, ge=1, le=200),
    state: str | None = Query(None, pattern="^(queued|running|done|failed|cancelled)$"),
    kind: str | None = Query(None, pattern="^(index_upload|sync_source|sync_kb)$"),
    resources: Resources = Depends(get_resources),
) -> JobList:
    """The most recent jobs first."""
    return JobList(jobs=[job_out(job) for job in resources.jobs.list(limit=limit, state=state, kind=kind)])


@router.get("/jobs/{job_id}", response_model=JobOut)
def get_job(job_id: str, resources: Resources = Depends(get_resources)) -> JobOut:
    """State, progress (chunks embedded of total), error and result of one job."""
    return job_out(_job(resources, job_id))


@router.delete("/jobs/{job_id}", response_model=JobOut)
def cancel_job(job_id: str, resources: Resources = Depends(get_resources)) -> JobOut:
    """Cancel a queued job, or stop a running one at its next chunk batch; the knowledge base keeps the
    document's previous version. A finished job cannot be cancelled (409)."""
    job = _job(resources, job_id)
    if job["state"] in ("done", "failed", "cancelled"):
        raise HTTPException(
            status_code=409,
            detail=f"This job has already finished ({job['state']}); there is "
            "nothing to cancel. DELETE /documents/{id} removes a document.",
        )
    job = resources.jobs.cancel(job_id)
    if job["state"] == "cancelled" and job["kind"] == "index_upload":  # never started: its file goes now
        forget_unused_original(resources, job["payload"])
    if job["state"] == "cancelled" and job["kind"] == "sync_source":
        resources.sources.update(
            job["payload"]["source_id"],
            status="error",  # a new sync may be started
            last_error="The sync was cancelled before it started.",
        )
    return job_out(job)
