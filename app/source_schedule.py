"""Scheduled syncs: a source with `schedule: every <n>m|h|d` syncs by itself.

`due_sources` says which sources are due at a moment; `start_due_syncs` claims each one (the conditional
UPDATE on its row — the same claim a manual sync takes, so a sync never overlaps another of the same source,
and of several replicas exactly one starts it) and hands it to `start`. That pair is the trigger a job queue
calls to enqueue syncs; `SourceScheduler` is the thread that calls it in the app until then.
"""

from __future__ import annotations

import logging
import re
import threading
from datetime import UTC, datetime, timedelta
from typing import Callable

from app.adapters.source_store import BUSY, SourceStore

log = logging.getLogger(__name__)
_EVERY = re.compile(r"^every ([1-9][0-9]{0,3})([mhd])$")
_UNIT = {"m": timedelta(minutes=1), "h": timedelta(hours=1), "d": timedelta(days=1)}


def interval_of(schedule: str) -> timedelta | None:
    """'every 30m' → 30 minutes; 'manual' (or anything else) → None."""
    match = _EVERY.match(schedule.strip())
    return int(match.group(1)) * _UNIT[match.group(2)] if match else None


def due_sources(store: SourceStore, now: datetime) -> list[dict]:
    """Sources whose schedule has come round at `now`: never synced, or synced at least one interval ago, and
    no sync of them queued or running."""
    due = []
    for source in store.list():
        interval = interval_of(source["schedule"])
        if interval is None or source["status"] in BUSY:
            continue
        last = source["last_sync_at"]
        if last is None or datetime.fromisoformat(last) + interval <= now:
            due.append(source)
    return due


def start_due_syncs(store: SourceStore, start: Callable[[str], None], now: datetime | None = None) -> list[str]:
    """Claim every due source and `start(source_id)` it; returns the ids started here (a source another
    replica claimed first, or one synced since it was read, is left to that sync)."""
    started = []
    for source in due_sources(store, now or datetime.now(UTC)):
        if store.claim(source["id"], last_sync_at=source["last_sync_at"]):
            log.info("scheduled sync of source %s (%s) starts", source["id"], source["schedule"])
            started.append(source["id"])
            start(source["id"])
    return started


class SourceScheduler:
    """A daemon thread that starts due syncs every `interval_s` (the app's lifespan starts and stops it).

    `start` runs the claimed sync — here, in this thread, one after another, so scheduled syncs do not pile
    up on one replica; a job queue's enqueue fits the same place."""

    def __init__(self, store: SourceStore, start: Callable[[str], None], interval_s: float) -> None:
        self._store, self._start, self._interval_s = store, start, interval_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="source-scheduler", daemon=True)

    def start(self) -> SourceScheduler:
        self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.wait(self._interval_s):
            try:
                start_due_syncs(self._store, self._start)
            except Exception:  # noqa: BLE001 — a database hiccup: the next round tries again
                log.exception("starting scheduled source syncs failed; retrying in %g s", self._interval_s)

    def stop(self, timeout_s: float) -> None:
        """Stop starting syncs; a sync already running is waited for at most `timeout_s`."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout_s)
