"""More turns at once than the connection pool holds: every turn holds its session lock (a Postgres advisory
lock on a connection of its own) and still gets the connections its stores need — the lock holders never
take the last connection a store query is waiting for."""

from __future__ import annotations

import threading
import time
from contextlib import ExitStack

import pytest
from sqlalchemy import text

from app.storage import Database, TurnsBusy
from app.storage.database import LOCK_SLOTS


def test_more_concurrent_turns_than_pooled_connections_all_finish(postgres_url):
    db = Database.open(postgres_url)
    try:
        turns = 40  # the server's worker threads: more than the stores' pool holds (15)
        failures: list[BaseException] = []

        def turn(i: int) -> None:
            try:
                with db.named_lock(f"session:{i}", wait_s=30):
                    time.sleep(0.3)  # long enough for every other turn to take (or queue for) its lock
                    with db.connect() as conn:  # what a turn's stores then do (owner, ticket, vote lookups)
                        assert conn.execute(text("SELECT 1")).scalar() == 1
            except BaseException as exc:  # noqa: BLE001 - collected and asserted below
                failures.append(exc)

        threads = [threading.Thread(target=turn, args=(i,)) for i in range(turns)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(120)
        assert not failures, f"{len(failures)} turns failed, e.g. {failures[0]!r}"
    finally:
        db.close()


def test_a_turn_finding_every_lock_slot_taken_past_its_wait_is_turned_away_and_the_slot_comes_back(postgres_url):
    db = Database.open(postgres_url)
    try:
        with ExitStack() as held:
            for i in range(LOCK_SLOTS):
                held.enter_context(db.named_lock(f"session:{i}", wait_s=5))
            with pytest.raises(TurnsBusy):
                with db.named_lock("session:one-too-many", wait_s=0.2):
                    pass
        with db.named_lock("session:one-too-many", wait_s=5):  # the held ones were released: a slot is free
            with db.connect() as conn:
                assert conn.execute(text("SELECT 1")).scalar() == 1
    finally:
        db.close()
