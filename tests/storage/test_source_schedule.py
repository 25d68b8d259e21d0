"""Scheduled syncs on a fake clock, over the real store on both engines: what is due, and that of two replicas
asking at the same moment exactly one starts a due sync."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from app.adapters.source_store import SourceStore
from app.source_schedule import due_sources, interval_of, start_due_syncs
from app.storage import Database
from tests.storage.test_source_store import SOURCE

NOW = datetime(2026, 11, 26, 9, 0, tzinfo=UTC)


def test_schedules_read_as_intervals_and_manual_as_none():
    assert interval_of("every 30m") == timedelta(minutes=30) and interval_of("every 6h") == timedelta(hours=6)
    assert interval_of("every 1d") == timedelta(days=1)
    assert interval_of("manual") is None and interval_of("every 0m") is None and interval_of("every 5s") is None


def _sources(store: SourceStore) -> None:
    store.add(SOURCE)  # every 30m, never synced
    store.add({**SOURCE, "id": "aaaaaaaaaaaa", "schedule": "manual"})
    store.add({**SOURCE, "id": "bbbbbbbbbbbb", "schedule": "every 1h"})
    store.update("bbbbbbbbbbbb", status="ok", last_sync_at=(NOW - timedelta(minutes=20)).isoformat())


def test_a_due_sync_starts_on_exactly_one_replica_and_comes_round_again_after_its_interval(database_url):  # noqa: F811
    a_db, b_db = Database.open(database_url), Database.open(database_url)
    a, b = SourceStore(a_db), SourceStore(b_db)
    try:
        _sources(a)
        assert [s["id"] for s in due_sources(a, NOW)] == [SOURCE["id"]]  # manual never; the hourly one in 40 min
        started: list[tuple[str, str]] = []
        # both replicas read the due list before either claims: the claim decides
        seen_by_b = due_sources(b, NOW)
        assert start_due_syncs(a, lambda source_id: started.append(("a", source_id)), NOW) == [SOURCE["id"]]
        assert [s["id"] for s in seen_by_b] == [SOURCE["id"]]
        assert start_due_syncs(b, lambda source_id: started.append(("b", source_id)), NOW) == []
        assert started == [("a", SOURCE["id"])]
        assert due_sources(b, NOW) == []  # queued: not due while it waits or runs

        a.update(SOURCE["id"], status="ok", last_sync_at=(NOW + timedelta(minutes=1)).isoformat())
        assert start_due_syncs(b, lambda source_id: started.append(("b", source_id)), NOW + timedelta(minutes=20)) == []
        later = NOW + timedelta(minutes=45)
        assert {s["id"] for s in due_sources(b, later)} == {SOURCE["id"], "bbbbbbbbbbbb"}
        assert sorted(start_due_syncs(b, lambda source_id: started.append(("b", source_id)), later)) == sorted(
            [SOURCE["id"], "bbbbbbbbbbbb"]
        )
        assert start_due_syncs(a, lambda source_id: started.append(("a", source_id)), later) == []
    finally:
        a_db.close()
        b_db.close()


def test_a_sync_interrupted_by_a_stop_can_start_again(tmp_path):
    db = Database.open(f"sqlite:///{tmp_path / 'deskmate.sqlite'}")
    store = SourceStore(db)
    try:
        store.add(SOURCE)
        assert store.claim(SOURCE["id"])
        store.update(SOURCE["id"], status="syncing")
        assert not store.claim(SOURCE["id"])
        assert store.reset_interrupted() == 1  # the next start of the embedded app
        source = store.get(SOURCE["id"])
        assert source["status"] == "error" and "interrupted" in source["last_error"]
        assert store.claim(SOURCE["id"])
    finally:
        db.close()
