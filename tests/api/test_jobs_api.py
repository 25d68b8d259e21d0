"""Uploads as jobs, through the real app (real MiniLM, real Chroma, the in-process worker):
202 + Location, GET /jobs/{id} progress and result, wait=true, failed jobs, DELETE /jobs/{id}."""

from __future__ import annotations

import time

import pytest

from tests.jobs import wait_for_job, wait_until_embedding

GUIDE = b"# Printer guide\n\n## Adding a printer\n\nOpen Settings, choose Printers and click Add. Pick FLOOR-3.\n"
BROKEN_PDF = b"%PDF-1.7\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n" + b"\x00garbage" * 50


def large_guide(sections: int, marker: str = "") -> bytes:
    """A generated manual of `sections` sections of about one chunk each (time for a job to be caught running)."""
    parts = ["# Field service manual\n"]
    for n in range(sections):
        parts.append(
            f"\n## Procedure {n}\n\n"
            + " ".join(
                f"Step {n}.{k}: check the relay {k} of cabinet {n}, note its reading in the log, and reseat the "
                f"connector if the reading drifts."
                for k in range(8)
            )
            + "\n"
        )
    parts.append(f"\n## Closing\n\nThe closing code is {marker or 'none'}.\n")
    return "".join(parts).encode()


def test_an_upload_answers_202_with_its_job_which_ends_with_the_document_and_its_progress(serve):
    with serve() as client:
        started = [j for j in client.get("/jobs").json()["jobs"] if j["kind"] == "sync_kb"]
        assert started and started[0]["state"] == "done"  # the start-up KB sync is a job too
        accepted = client.post("/documents", files={"file": ("printers.md", GUIDE, "text/markdown")})
        assert accepted.status_code == 202, accepted.text
        job = accepted.json()["job"]
        assert accepted.headers["location"] == f"/jobs/{job['id']}" == job["location"]
        assert job["kind"] == "index_upload" and job["state"] in ("queued", "running")
        assert accepted.json()["document"] is None
        done = wait_for_job(client, job["id"])
        assert done["state"] == "done" and done["attempts"] == 1 and done["error"] is None
        document = done["result"]["document"]
        assert done["result"]["status"] == "new" and document["title"] == "Printer guide"
        assert done["progress"] == {"done": document["chunks"], "total": document["chunks"]}
        assert document["id"] in {d["id"] for d in client.get("/documents").json()["documents"]}
        assert client.get(f"/documents/{document['id']}/content").content == GUIDE
        assert job["id"] in [j["id"] for j in client.get("/jobs", params={"kind": "index_upload"}).json()["jobs"]]
        # the same bytes again: unchanged, and wait=true answers as uploads always did
        again = client.post("/documents?wait=true", files={"file": ("printers.md", GUIDE, "text/markdown")})
        assert again.status_code == 200 and again.json()["status"] == "unchanged"
        assert again.json()["document"]["id"] == document["id"] and again.json()["job"]["state"] == "done"


def test_a_document_that_cannot_be_parsed_fails_its_job_with_the_message_wait_true_answers(serve):
    with serve(kb_dir=None) as client:
        accepted = client.post("/documents", files={"file": ("broken.pdf", BROKEN_PDF, "application/pdf")})
        assert accepted.status_code == 202
        failed = wait_for_job(client, accepted.json()["job"]["id"])
        waited = client.post("/documents?wait=true", files={"file": ("broken.pdf", BROKEN_PDF, "application/pdf")})
        assert failed["state"] == "failed" and failed["result"] is None
        assert waited.status_code == 422 and waited.json()["detail"] == failed["error"]
        assert "broken.pdf" in failed["error"]
        assert client.get("/documents").json()["documents"] == []
        # refused before any job: the type, by content
        fake = client.post("/documents", files={"file": ("notes.pdf", b"just text", "application/pdf")})
        assert fake.status_code == 415 and "not a PDF" in fake.json()["detail"]
        assert [j["state"] for j in client.get("/jobs").json()["jobs"]] == ["failed", "failed"]


@pytest.mark.slow
def test_a_cancelled_running_job_stops_and_leaves_the_previous_version_in_the_index(serve):
    with serve(kb_dir=None) as client:
        first = client.post("/documents?wait=true", files={"file": ("manual.md", GUIDE, "text/markdown")}).json()
        before = client.get("/documents").json(), client.get("/ready").json()["chunks"]
        accepted = client.post("/documents", files={"file": ("manual.md", large_guide(400), "text/markdown")})
        job_id = accepted.json()["job"]["id"]
        wait_until_embedding(client, job_id)
        cancelling = client.delete(f"/jobs/{job_id}")
        assert cancelling.status_code == 200 and cancelling.json()["cancel_requested"] is True
        cancelled = wait_for_job(client, job_id)
        assert cancelled["state"] == "cancelled" and "left as it was" in cancelled["error"]
        assert 0 < cancelled["progress"]["done"] < cancelled["progress"]["total"]  # stopped part-way
        assert (client.get("/documents").json(), client.get("/ready").json()["chunks"]) == before
        doc_id = first["document"]["id"]
        assert client.get(f"/documents/{doc_id}/content").content == GUIDE  # the original of the active version
        assert client.delete(f"/jobs/{job_id}").status_code == 409  # finished: nothing left to cancel


def test_a_queued_job_is_cancelled_before_it_runs_and_unknown_jobs_are_404(serve):
    with serve(kb_dir=None, inprocess_worker=False) as client:  # no worker here: the job stays queued
        accepted = client.post("/documents", files={"file": ("printers.md", GUIDE, "text/markdown")})
        job_id = accepted.json()["job"]["id"]
        assert client.get(f"/jobs/{job_id}").json()["state"] == "queued"
        cancelled = client.delete(f"/jobs/{job_id}")
        assert cancelled.status_code == 200 and cancelled.json()["state"] == "cancelled"
        assert client.get(f"/jobs/{job_id}").json()["error"] == "Cancelled before it started."
        missing = client.get("/jobs/" + "0" * 32)
        assert missing.status_code == 404 and "GET /jobs" in missing.json()["detail"]
        assert client.get("/jobs/not-an-id").status_code == 404
        assert client.get("/jobs", params={"state": "sleeping"}).status_code == 422


def test_jobs_are_for_admins_only(serve):
    with serve(kb_dir=None, admin_key="a-long-admin-key-for-tests-0123456789") as client:
        assert client.get("/jobs").status_code == 401
        assert client.delete("/jobs/" + "0" * 32).status_code == 401
        admin = {"Authorization": "Bearer a-long-admin-key-for-tests-0123456789"}
        assert client.get("/jobs", headers=admin).status_code == 200


@pytest.mark.slow
def test_deleting_a_document_while_its_upload_job_runs_cancels_the_job_and_the_document_stays_deleted(serve):
    with serve(kb_dir=None) as client:  # the in-process JobWorker, real MiniLM, real Chroma
        first = client.post("/documents?wait=true", files={"file": ("manual.md", GUIDE, "text/markdown")}).json()
        doc_id = first["document"]["id"]
        accepted = client.post("/documents", files={"file": ("manual.md", large_guide(400), "text/markdown")})
        job_id = accepted.json()["job"]["id"]
        wait_until_embedding(client, job_id)
        assert client.delete(f"/documents/{doc_id}").status_code == 204
        ended = wait_for_job(client, job_id)
        assert ended["state"] == "cancelled" and "deleted" in ended["error"] and ended["result"] is None, ended
        assert ended["progress"]["done"] < ended["progress"]["total"]  # stopped part-way, not switched
        time.sleep(2.5)  # past the manifest cache: nothing comes back later either
        assert client.get("/documents").json()["documents"] == []
        assert client.get("/ready").json()["chunks"] == 0  # nor any chunk the job had written
        assert client.get(f"/documents/{doc_id}/content").status_code == 404
        assert client.delete(f"/documents/{doc_id}").status_code == 404  # gone, and no upload of it left


def test_deleting_a_document_cancels_its_queued_upload_before_it_runs(serve):
    from app.job_worker import JobWorker

    with serve(kb_dir=None, inprocess_worker=False) as client:
        resources = client.app.state.resources
        worker = JobWorker(resources, resources.jobs, resources.originals)
        client.post("/documents", files={"file": ("printers.md", GUIDE, "text/markdown")})
        assert worker.run_next() is True
        doc_id = client.get("/documents").json()["documents"][0]["id"]
        queued = client.post(
            "/documents", files={"file": ("printers.md", GUIDE + b"\nAlso FLOOR-4.\n", "text/markdown")}
        ).json()["job"]
        assert client.delete(f"/documents/{doc_id}").status_code == 204
        job = client.get(f"/jobs/{queued['id']}").json()
        assert job["state"] == "cancelled" and "deleted" in job["error"] and "not indexed" in job["error"]
        assert worker.run_next() is False  # nothing left to run
        assert client.get("/documents").json()["documents"] == [] and client.get("/ready").json()["chunks"] == 0
