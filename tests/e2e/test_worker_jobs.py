"""Ingestion jobs across processes: two `deskmate serve` replicas (no in-process worker, as in server mode),
`deskmate worker` processes, one Postgres database and one Chroma server. An upload on one replica is indexed
by a worker, cited and downloadable on the other; a worker killed with SIGKILL mid-job leaves the job to
another worker, which runs it again from the start, and the document appears once, whole."""

from __future__ import annotations

import time
import uuid

import pytest

from app.adapters.vector_index import MANIFEST_TTL_S
from tests.api.test_jobs_api import large_guide
from tests.e2e.processes import Replica, Worker, chroma_run, deskmate_env
from tests.jobs import wait_for_job
from tests.postgres import scratch_database

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1500)]  # five real processes on a shared 2-core box


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    root = tmp_path_factory.mktemp("workers")
    with scratch_database() as database_url, chroma_run(root / "chroma") as chroma_port:
        shared = dict(
            DESKMATE_DATABASE_URL=database_url,
            CHROMA_MODE="server",
            CHROMA_HOST="127.0.0.1",
            CHROMA_PORT=str(chroma_port),
            DESKMATE_JOB_LEASE_S="5",
        )
        a = Replica("A", deskmate_env(root / "a", **shared))
        b = Replica("B", deskmate_env(root / "b", **shared))
        env = deskmate_env(root / "w", **shared)
        worker = Worker("W1", env, root / "w1.log")
        try:
            a.wait_ready()
            b.wait_ready()
            worker.wait_ready()
            yield a, b, worker, env, root
        finally:
            for process in (a, b, worker):
                process.stop()


def _logged(process, line: str, bound_s: float = 60.0) -> bool:
    """Whether `line` appears in the process's log within `bound_s` (a bound, not a speed limit)."""
    deadline = time.monotonic() + bound_s
    while line not in process.log():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


def test_an_upload_on_one_replica_is_indexed_by_a_worker_then_cited_and_downloaded_on_the_other(cluster):
    a, b, worker, _, _ = cluster
    code = uuid.uuid4().hex[:6].upper()
    text = (
        f"# Parking permits\n\nTo get a parking permit, open the Facilities portal, register your plate and "
        f"quote the permit code {code}. Permits are valid for one year.\n"
    ).encode()
    accepted = a.http.post("/documents", files={"file": ("parking.md", text, "text/markdown")})
    assert accepted.status_code == 202, accepted.text
    job = wait_for_job(b.http, accepted.json()["job"]["id"])  # any replica reads the job
    assert job["state"] == "done", job
    # the worker ran it, no replica did (its log line follows the state it wrote: a busy machine may show it later)
    assert _logged(worker, f"job {job['id']} (index_upload) done"), worker.log()[-2000:]
    time.sleep(MANIFEST_TTL_S + 0.5)
    reply = b.http.post("/chat", json={"message": "How do I get a parking permit?"}).json()
    assert reply["sources"] and reply["sources"][0]["source"] == "uploads/parking.md"
    assert code in reply["answer"]
    assert reply["sources"][0]["doc_id"] == job["result"]["document"]["id"]
    download = b.http.get(f"/documents/{reply['sources'][0]['doc_id']}/content")  # stored by A, served by B
    assert download.status_code == 200 and download.content == text


def test_a_worker_killed_mid_job_leaves_it_to_another_worker_and_the_document_appears_once_whole(cluster):
    a, b, worker, env, root = cluster
    marker = uuid.uuid4().hex[:8].upper()
    manual = large_guide(300, marker)
    accepted = a.http.post("/documents", files={"file": ("field-manual.md", manual, "text/markdown")})
    job_id = accepted.json()["job"]["id"]
    deadline = time.monotonic() + 300
    while (job := a.http.get(f"/jobs/{job_id}").json())["progress"]["done"] == 0:
        assert job["state"] in ("queued", "running") and time.monotonic() < deadline, job
        time.sleep(0.1)
    assert job["state"] == "running" and job["progress"]["done"] < job["progress"]["total"]
    worker.kill()  # kill -9 mid-embedding: no clean-up, no hand-back; its lease runs out
    replacement = Worker("W2", env, root / "w2.log").wait_ready()
    try:
        done = wait_for_job(a.http, job_id, timeout_s=900)
        assert done["state"] == "done" and done["attempts"] == 2, done
        assert _logged(replacement, f"job {job_id} (index_upload) done"), replacement.log()[-2000:]
        assert replacement.stop() == 0 and "SIGTERM received" in replacement.log()  # a clean stop when idle
    finally:
        replacement.stop()
    time.sleep(MANIFEST_TTL_S + 0.5)
    documents = [d for d in b.http.get("/documents").json()["documents"] if d["source"] == "uploads/field-manual.md"]
    assert len(documents) == 1 and documents[0]["chunks"] == done["result"]["document"]["chunks"]
    sections = b.http.get(f"/documents/{documents[0]['id']}/sections").json()["sections"]
    assert sections[-1]["section"].endswith("Closing") and marker in sections[-1]["text"]  # whole, to its end
    # no chunk of the killed run is left behind: the index holds exactly the documents' chunks
    listed = b.http.get("/documents").json()["documents"]
    assert b.http.get("/ready").json()["chunks"] == sum(d["chunks"] for d in listed)
