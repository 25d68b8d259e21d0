"""Store writes with a deadline: a write that does not return in time is answered as a failure, and the
caller (a request thread) is free again. The write itself cannot be interrupted — it keeps running in its
daemon worker and may still finish (writes are idempotent: content-hash ids, the manifest switch last) —
but it no longer holds a request, and writes queued behind it that nobody waits for any more are dropped."""

from __future__ import annotations

import logging
import queue
import threading
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Callable, TypeVar

log = logging.getLogger(__name__)
T = TypeVar("T")


class WriteTimedOut(TimeoutError):
    """A write did not finish within its deadline."""


class WriteDeadline:
    """One daemon worker thread runs the writes of one store, in order; each caller waits at most `timeout_s`."""

    def __init__(self, timeout_s: float, name: str) -> None:
        self.timeout_s = timeout_s
        self.name = name
        self._jobs: queue.Queue = queue.Queue()
        self._worker: threading.Thread | None = None
        self._start_lock = threading.Lock()

    def _ensure_worker(self) -> None:
        with self._start_lock:
            if self._worker is None:
                # a daemon: a write stuck for good must not keep the process from exiting
                self._worker = threading.Thread(target=self._work, name=f"{self.name}-writer", daemon=True)
                self._worker.start()

    def _work(self) -> None:
        while True:
            future, write = self._jobs.get()
            if not future.set_running_or_notify_cancel():
                continue  # its caller gave up before it started
            try:
                future.set_result(write())
            except BaseException as exc:  # noqa: BLE001 — handed to the caller
                future.set_exception(exc)

    def run(self, write: Callable[[], T]) -> T:
        """`write()`'s result, or WriteTimedOut after `timeout_s` (the write may still complete later)."""
        self._ensure_worker()
        future: Future = Future()
        self._jobs.put((future, write))
        try:
            return future.result(timeout=self.timeout_s)
        except FutureTimeout:
            if not future.cancel():
                log.error(
                    "%s: a write has run for over %g s and is abandoned by its caller (a full or stalled disk?)",
                    self.name,
                    self.timeout_s,
                )
            raise WriteTimedOut(f"the {self.name} did not finish a write within {self.timeout_s:g} s") from None
