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
import queue
import threading
import time

from app.insights.outcomes import OutcomeStore

log = logging.getLogger(__name__)

MAX_PENDING = 1024  # rows waiting for the writer; beyond this a row is dropped, never waited for
MAX_BATCH = 64  # rows written in one transaction
_STOP = object()


class OutcomeWriter:
    """A bounded queue of outcome rows and the one thread that writes them to an `OutcomeStore`."""

    def __init__(self, store: OutcomeStore, *, max_pending: int = MAX_PENDING) -> None:
        self.store = store
        self._queue: queue.Queue = queue.Queue(maxsize=max_pending)
        self._pending = 0
        self._idle = threading.Condition()
        self._closed = False
        self.dropped = 0  # rows never written because the queue was full (or the writer closed)
        self.failed = 0  # rows the database refused
        self._thread = threading.Thread(target=self._write_loop, name="outcome-writer", daemon=True)
        self._thread.start()

    # -- producers (request threads): never block ---------------------------------------------------------
    def submit(self, row: dict) -> None:
        """Queue a turn's outcome row for the writer; a full queue drops it (logged), never waits."""
        with self._idle:  # (the writer takes this lock only after a write: never held for long)
            closed = self._closed
            if not closed:
                try:
                    self._queue.put_nowait(row)
                    self._pending += 1
                    return
                except queue.Full:
                    pass
            self.dropped += 1
            dropped = self.dropped
        if closed:
            log.warning("outcome writer closed: the outcome of turn %s is not recorded", row.get("trace_id"))
        else:
            log.warning(
                "outcome writer is behind (%d waiting): the outcome of turn %s is not recorded (%d dropped so far)",
                self._queue.qsize(),
                row.get("trace_id"),
                dropped,
            )

    def flush(self, timeout: float = 2.0) -> bool:
        """Wait (at most `timeout` s) until every row submitted so far is written or refused."""
        deadline = time.monotonic() + timeout
        with self._idle:
            while self._pending:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._idle.wait(left)
        return True

    def close(self, timeout: float = 5.0) -> None:
        """Write what is waiting (at most `timeout` s), then stop the thread; later rows are dropped."""
        flushed = self.flush(timeout)
        with self._idle:
            self._closed = True
            waiting = self._pending
        if not flushed:
            log.error("outcome writer: %d turn outcome(s) not written at shutdown", waiting)
        try:
            self._queue.put(_STOP, timeout=1)
        except queue.Full:
            return
        self._thread.join(timeout)

    # -- the writer thread -------------------------------------------------------------------------------
    def _write_loop(self) -> None:
        while True:
            items = [self._queue.get()]
            while len(items) < MAX_BATCH:  # one transaction for whatever else is waiting
                try:
                    items.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            rows = [item for item in items if item is not _STOP]
            try:
                written = self.store.record_many(rows) if rows else 0
            except Exception:  # a bad row must not kill the writer (the store logs what the database refuses)
                log.exception("could not write %d turn outcome(s)", len(rows))
                written = 0
            with self._idle:
                self.failed += len(rows) - written
                self._pending -= len(rows)
                self._idle.notify_all()
            if len(rows) < len(items):
                return
