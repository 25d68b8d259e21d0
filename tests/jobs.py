"""Waiting for an ingestion job through the API, as a client of POST /documents or /sources/{id}/sync would."""

from __future__ import annotations

import time

FINISHED = ("done", "failed", "cancelled")


def wait_for_job(client, job_id: str, *, timeout_s: float = 120.0, headers: dict | None = None) -> dict:
    """GET /jobs/{id} until the job has finished; the job (AssertionError naming its state if it never does)."""
    deadline = time.monotonic() + timeout_s
    while True:
        job = client.get(f"/jobs/{job_id}", headers=headers or {}).json()
        if job.get("state") in FINISHED:
            return job
        assert time.monotonic() < deadline, f"job {job_id} still {job.get('state')} after {timeout_s:g} s: {job}"
        time.sleep(0.1)


def wait_until_embedding(client, job_id: str, *, timeout_s: float = 120.0) -> dict:
    """GET /jobs/{id} until the job has embedded its first batch (so it is running, part-way); the job."""
    deadline = time.monotonic() + timeout_s
    while (job := client.get(f"/jobs/{job_id}").json())["progress"]["done"] == 0:
        assert job["state"] in ("queued", "running") and time.monotonic() < deadline, job
        time.sleep(0.05)
    return job
