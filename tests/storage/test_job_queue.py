"""The job queue on both engines: claims, leases that run out, bounded retries; on Postgres, workers on
separate connection pools never claim the same job, and a row another worker has locked is skipped, not
waited for (SKIP LOCKED)."""

from __future__ import annotations

import threading

import pytest
from sqlalchemy import select

from app.storage import Database
from app.storage.jobs import JobLost, JobQueue
from app.storage.schema import jobs


@pytest.fixture(params=["sqlite", "postgres"])
def database_url(request, tmp_path):
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'deskmate.sqlite'}"
        return
    from tests.postgres import scratch_database

    with scratch_database() as url:
        yield url


def test_a_job_whose_worker_stops_renewing_its_lease_runs_again_then_fails_after_the_last_attempt(database_url):
    database = Database.open(database_url)
    now = [1_000_000.0]  # the queue's clock: only this test moves it, however slow the machine is
    try:
        queue = JobQueue(database, lease_s=30, max_attempts=2, clock=lambda: now[0])
        job = queue.enqueue("index_upload", {"doc_id": "d"})
        first = queue.claim("w1")
        assert first["id"] == job["id"] and first["attempts"] == 1 and queue.claim("w2") is None
        assert queue.heartbeat(job["id"], "w1", done=3, total=9) is False
        now[0] += 29  # inside the lease the heartbeat renewed: nobody else may take the job
        assert queue.claim("w2") is None
        now[0] += 2  # w1 was killed: no more heartbeats, and its lease has run out
        second = queue.claim("w2")
        assert second["id"] == job["id"] and second["attempts"] == 2 and second["worker"] == "w2"
        assert second["progress_done"] == 0  # run again from the start
        with pytest.raises(JobLost):
            queue.heartbeat(job["id"], "w1")  # the killed worker's run, had it come back, gives up
        now[0] += 31
        assert queue.claim("w3") is None
        failed = queue.get(job["id"])
        assert failed["state"] == "failed" and "stopped 2 times" in failed["error"]
    finally:
        database.close()


def test_cancelling_a_running_job_is_seen_by_its_worker_and_a_queued_one_never_runs(database_url):
    database = Database.open(database_url)
    try:
        queue = JobQueue(database, lease_s=30)
        running = queue.enqueue("sync_kb", {})
        waiting = queue.enqueue("sync_kb", {})
        assert queue.claim("w1")["id"] == running["id"]
        assert queue.cancel(running["id"])["state"] == "running"
        assert queue.heartbeat(running["id"], "w1") is True
        assert queue.finish(running["id"], "w1", "cancelled")["state"] == "cancelled"
        assert queue.cancel(waiting["id"])["state"] == "cancelled"
        assert queue.claim("w1") is None
    finally:
        database.close()


def test_two_workers_on_postgres_never_run_the_same_job_and_skip_a_locked_row(postgres_url):
    first, second = Database.open(postgres_url), Database(postgres_url)  # two pools, as two processes have
    try:
        queues = JobQueue(first), JobQueue(second)
        ids = [queues[0].enqueue("index_upload", {"n": n})["id"] for n in range(40)]
        claimed: dict[str, list[str]] = {"w1": [], "w2": []}
        together = threading.Barrier(2)

        def work(name: str, queue: JobQueue) -> None:
            together.wait()
            while (job := queue.claim(name)) is not None:
                claimed[name].append(job["id"])
                queue.finish(job["id"], name, "done")

        threads = [threading.Thread(target=work, args=(name, queue)) for name, queue in zip(claimed, queues)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
        assert sorted(claimed["w1"] + claimed["w2"]) == sorted(ids)  # every job once, none twice
        assert claimed["w1"] and claimed["w2"]  # both took part

        # a worker holding the oldest queued row (mid-claim) does not make the other wait: it takes the next
        oldest, newer = (queues[0].enqueue("sync_kb", {})["id"] for _ in range(2))
        with first.begin() as conn:
            locked = conn.execute(
                select(jobs.c.id).where(jobs.c.state == "queued").order_by(jobs.c.created_at).limit(1).with_for_update()
            ).scalar()
            assert locked == oldest
            assert queues[1].claim("w2")["id"] == newer  # without SKIP LOCKED this claim would wait on the lock
        assert queues[1].claim("w2")["id"] == oldest  # free again once the lock is gone
    finally:
        first.close()
        second.close()
