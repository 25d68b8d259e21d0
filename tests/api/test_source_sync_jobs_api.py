"""A source's sync state follows its job, through the real app (real queue, real JobWorker, real index): a sync
whose worker died on its last attempt shows the job's error instead of "syncing" forever, and can be started
again."""

from __future__ import annotations

import time

from app.job_worker import JobWorker
from tests.e2e.website_server import FakeWebsite, help_page


def test_a_sync_whose_worker_died_on_its_last_attempt_shows_the_jobs_error_and_can_run_again(serve):
    with FakeWebsite() as site, serve(kb_dir=None, inprocess_worker=False, job_lease_s=3, job_max_attempts=1) as client:
        site.pages["/help/"] = help_page("Quillpad help", "<p>Quillpad notes sync every five minutes.</p>")
        resources = client.app.state.resources
        source = client.post(
            "/sources",
            json={
                "type": "website",
                "name": "Quillpad",
                "base_url": site.url,
                "scope": {"start_urls": [f"{site.url}/help/"]},
            },
        ).json()
        started = client.post(f"/sources/{source['id']}/sync")
        assert started.status_code == 202 and client.get(f"/sources/{source['id']}").json()["status"] == "queued"
        job_id = started.json()["job"]["id"]

        # a worker takes the job, marks the source syncing, and is killed: no heartbeat, no outcome recorded
        assert resources.jobs.claim("killed-worker")["id"] == job_id
        resources.sources.update(source["id"], status="syncing", last_error=None)
        assert client.get(f"/sources/{source['id']}").json()["status"] == "syncing"
        time.sleep(3.5)  # its lease runs out

        worker = JobWorker(resources, resources.jobs, resources.originals)
        assert worker.run_next() is False  # the next worker's poll finds the lease gone on the last attempt
        job = client.get(f"/jobs/{job_id}").json()
        assert job["state"] == "failed" and "stopped 1 times" in job["error"]
        shown = client.get(f"/sources/{source['id']}").json()
        assert shown["status"] == "error", shown
        assert job["error"] in shown["last_error"] and job_id in shown["last_error"]
        assert [s["status"] for s in client.get("/sources").json()["sources"]] == ["error"]

        again = client.post(f"/sources/{source['id']}/sync")  # no longer "already syncing": it starts
        assert again.status_code == 202, again.text
        assert worker.run_next() is True
        assert client.get(f"/jobs/{again.json()['job']['id']}").json()["state"] == "done"
        synced = client.get(f"/sources/{source['id']}").json()
        assert synced["status"] == "ok" and synced["last_error"] is None
        assert synced["last_counts"]["added"] == 1
