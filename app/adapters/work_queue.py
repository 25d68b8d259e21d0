"""The bounded hand-over between request threads and one background writer (the trace store, the outcome
writer): producers offer items and never wait; the writer takes what is waiting in batches and says when a batch
is done; `wait_idle` waits until everything offered so far is written (or refused), for a flush or a shutdown."""

from __future__ import annotations

import queue
import threading
import time
from typing import Any


class PendingQueue:
    """A bounded queue that counts what was offered and is not yet done."""

    def __init__(self, maxsize: int) -> None:
        self._queue: queue.Queue = queue.Queue(maxsize=maxsize)
        self._pending = 0
        self._idle = threading.Condition()

    def offer(self, item: Any) -> bool:
        """Queue `item` for the writer; False (nothing queued) when the queue is full — never waits."""
        with self._idle:  # (counted before the writer can take it: a flush never misses it)
            try:
                self._queue.put_nowait(item)
            except queue.Full:
                return False
            self._pending += 1
            return True

    def stop(self, sentinel: Any, timeout: float = 1.0) -> bool:
        """Put the writer's stop marker behind what is waiting (not counted as pending); False when it found no
        room within `timeout`."""
        try:
            self._queue.put(sentinel, timeout=timeout)
        except queue.Full:
            return False
        return True

    def take(self, limit: int) -> list[Any]:
        """The writer's next batch: waits for one item, then takes up to `limit` of what else is waiting."""
        items = [self._queue.get()]
        while len(items) < limit:
            try:
                items.append(self._queue.get_nowait())
            except queue.Empty:
                break
        return items

    def done(self, count: int) -> None:
        """`count` taken items are written (or refused): no longer pending."""
        with self._idle:
            self._pending -= count
            self._idle.notify_all()

    def wait_idle(self, timeout: float) -> bool:
        """Wait (at most `timeout` s) until every item offered so far is done."""
        deadline = time.monotonic() + timeout
        with self._idle:
            while self._pending:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._idle.wait(left)
        return True

    @property
    def pending(self) -> int:
        return self._pending

    def qsize(self) -> int:
        return self._queue.qsize()
