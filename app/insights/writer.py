"""The turns' outcome rows, written off the reply path: a chat hands its row to `OutcomeWriter.submit` and
returns; one writer thread takes what is waiting from a bounded queue and writes it as one transaction
(`OutcomeStore.record_many`: the rows and their rollup counts), as the trace store writes its runs.

A full queue drops the row (counted, logged) and never blocks a chat; a row the database refuses is logged and
counted, and the chat it came from has long been answered. The app's shutdown flushes what is waiting
(`close`), and the insights figures wait for it (`flush`) so they count every turn already answered here. A
vote needs no wait: whichever of a turn's row and its vote is written second takes the other into account
(app/insights/outcomes.py)."""

from __future__ import annotations

import logging
import threading

from app.adapters.work_queue import PendingQueue
from app.insights.outcomes import OutcomeStore

log = logging.getLogger(__name__)

MAX_PENDING = 1024  # rows waiting for the writer; beyond this a row is dropped, never waited for
MAX_BATCH = 64  # rows written in one transaction
_STOP = object()


class OutcomeWriter:
    """A bounded queue of outcome rows and the one thread that writes them to an `OutcomeStore`."""

    def __init__(self, store: OutcomeStore, *, max_pending: int = MAX_PENDING) -> None:
        self.store = store
        self._work = PendingQueue(max_pending)
        self._lock = threading.Lock()  # `_closed` and the counters
        self._closed = False
        self.dropped = 0  # rows never written because the queue was full (or the writer closed)
        self.failed = 0  # rows the database refused
        self._thread = threading.Thread(target=self._write_loop, name="outcome-writer", daemon=True)
        self._thread.start()

    # -- producers (request threads): never block ---------------------------------------------------------
    def submit(self, row: dict) -> None:
        """Queue a turn's outcome row for the writer; a full queue drops it (logged), never waits."""
        with self._lock:
            closed = self._closed
            if not closed and self._work.offer(row):
                return
            self.dropped += 1
            dropped = self.dropped
        if closed:
            log.warning("outcome writer closed: the outcome of turn %s is not recorded", row.get("trace_id"))
        else:
            log.warning(
                "outcome writer is behind (%d waiting): the outcome of turn %s is not recorded (%d dropped so far)",
                self._work.qsize(),
                row.get("trace_id"),
                dropped,
            )

    def flush(self, timeout: float = 2.0) -> bool:
        """Wait (at most `timeout` s) until every row submitted so far is written or refused."""
        return self._work.wait_idle(timeout)

    def close(self, timeout: float = 5.0) -> None:
        """Write what is waiting (at most `timeout` s), then stop the thread; later rows are dropped."""
        flushed = self.flush(timeout)
        with self._lock:
            self._closed = True
        if not flushed:
            log.error("outcome writer: %d turn outcome(s) not written at shutdown", self._work.pending)
        if self._work.stop(_STOP):
            self._thread.join(timeout)

    # -- the writer thread -------------------------------------------------------------------------------
    def _write_loop(self) -> None:
        while True:
            items = self._work.take(MAX_BATCH)  # one transaction for whatever is waiting
            rows = [item for item in items if item is not _STOP]
            try:
                written = self.store.record_many(rows) if rows else 0
            except Exception:  # a bad row must not kill the writer (the store logs what the database refuses)
                log.exception("could not write %d turn outcome(s)", len(rows))
                written = 0
            with self._lock:
                self.failed += len(rows) - written
            self._work.done(len(rows))
            if len(rows) < len(items):
                return
