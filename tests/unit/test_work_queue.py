"""The hand-over to a background writer: a full queue refuses without waiting, and a flush waits for exactly
what was offered before it, not for the stop marker."""

from __future__ import annotations

import threading

from app.adapters.work_queue import PendingQueue


def test_a_full_queue_refuses_an_item_at_once_and_a_flush_waits_until_the_writer_is_done():
    work = PendingQueue(2)
    assert work.offer("a") and work.offer("b")
    assert work.offer("c") is False and work.pending == 2
    assert work.wait_idle(0.05) is False  # nothing written yet
    batch = work.take(64)
    assert batch == ["a", "b"]
    threading.Timer(0.05, work.done, args=(len(batch),)).start()
    assert work.wait_idle(10) is True and work.pending == 0


def test_the_stop_marker_is_taken_after_what_waits_and_is_never_pending():
    work = PendingQueue(4)
    stop = object()
    work.offer("row")
    assert work.stop(stop)
    assert work.pending == 1
    assert work.take(64) == ["row", stop]
    work.done(1)
    assert work.wait_idle(0) is True
