"""How long data is kept: idle sessions expire with their checkpoints, traces go by age, count and size,
answers nobody voted on go when their vote window has passed, and freed space is handed back — as a pass the
server runs in the background and `deskmate db vacuum` runs on demand. Tickets and feedback votes are records
people act on: they are kept.

The pass works on two small store interfaces, so a server-database store implements the same methods.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import asdict, dataclass
from typing import Protocol

log = logging.getLogger(__name__)


class ExpiringSessions(Protocol):
    def expire_idle(self, cutoff_ts: float) -> int: ...
    def prune_checkpoints(self) -> int: ...
    def reclaim(self, *, vacuum: bool = False) -> None: ...


class PrunedTraces(Protocol):
    def prune(self) -> int: ...
    def reclaim(self, *, vacuum: bool = False) -> None: ...


class PrunedAnswers(Protocol):
    def prune(self) -> int: ...


@dataclass(frozen=True)
class RetentionReport:
    sessions_expired: int
    checkpoints_pruned: int
    traces_pruned: int
    duration_ms: float
    answers_pruned: int = 0
    outcomes_pruned: int = 0

    def as_dict(self) -> dict:
        return asdict(self)


def run_retention(
    sessions: ExpiringSessions,
    traces: PrunedTraces | None,
    *,
    session_idle_s: float,
    vacuum: bool = False,
    now: float | None = None,
    answers: PrunedAnswers | None = None,
    outcomes: PrunedAnswers | None = None,
) -> RetentionReport:
    """One pass: expire idle sessions, keep each session's latest checkpoint, forget unvoted answers past
    their vote window, prune traces, reclaim space (the answers share the traces' database file)."""
    started = time.perf_counter()
    now = time.time() if now is None else now
    expired = sessions.expire_idle(now - session_idle_s)
    pruned = sessions.prune_checkpoints()
    sessions.reclaim(vacuum=vacuum)
    answers_pruned = answers.prune() if answers is not None else 0
    # turn outcomes past their own retention; their questions past the trace retention
    outcomes_pruned = outcomes.prune() if outcomes is not None else 0
    traces_pruned = 0
    if traces is not None:
        traces_pruned = traces.prune()
        traces.reclaim(vacuum=vacuum)
    report = RetentionReport(
        expired,
        pruned,
        traces_pruned,
        round((time.perf_counter() - started) * 1000, 1),
        answers_pruned,
        outcomes_pruned,
    )
    if expired or pruned or traces_pruned or answers_pruned or outcomes_pruned or vacuum:
        log.info("retention: %s", report)
    return report


async def retention_loop(resources, interval_s: float) -> None:
    """Run the pass every `interval_s` until cancelled (the lifespan owns the task); a failing pass is
    logged and retried at the next interval, never ends the loop."""
    from fastapi.concurrency import run_in_threadpool

    settings = resources.settings
    while True:
        await asyncio.sleep(interval_s)
        try:
            await run_in_threadpool(
                run_retention,
                resources.sessions,
                resources.traces,
                session_idle_s=settings.retention.session_idle_days * 86400,
                answers=resources.feedback,
                outcomes=resources.outcomes,
            )
        except Exception:  # noqa: BLE001 — a full disk or a locked file: next time
            log.exception("retention pass failed; retrying in %g s", interval_s)
