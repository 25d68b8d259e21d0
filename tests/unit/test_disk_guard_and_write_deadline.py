"""The disk guard's floor, its once-a-minute warning, and writes that cannot hold a caller past their deadline."""

import logging
import threading

import pytest

from app.adapters.write_deadline import WriteDeadline, WriteTimedOut
from app.disk_guard import DiskGuard


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_below_the_floor_writes_are_refused_with_what_to_free_and_one_warning_a_minute(tmp_path, caplog):
    clock = Clock()
    guard = DiskGuard(tmp_path, floor_bytes=1 << 62, cache_s=0, clock=clock)  # no disk has 4 EiB free
    with caplog.at_level(logging.WARNING, logger="app.disk_guard"):
        for second in range(0, 150, 5):
            clock.now = float(second)
            state = guard.state()
    assert not state.ok
    assert str(tmp_path) in state.reason and "DESKMATE_MIN_FREE_MB" in state.reason and "must be freed" in state.reason
    assert len([r for r in caplog.records if "disk space low" in r.getMessage()]) == 3  # at 0, 60 and 120 s


def test_a_disk_with_room_is_ok_and_says_nothing(tmp_path, caplog):
    with caplog.at_level(logging.WARNING, logger="app.disk_guard"):
        state = DiskGuard(tmp_path, floor_bytes=1).state()
    assert state.ok and state.free_bytes > 0 and not caplog.records


def test_a_stuck_write_answers_its_caller_in_time_and_the_writes_queued_behind_it_are_dropped():
    deadline = WriteDeadline(0.2, "vector store")
    release = threading.Event()
    applied = []
    callers = []

    def call(write):
        try:
            callers.append(deadline.run(write))
        except WriteTimedOut as exc:
            callers.append(str(exc))

    running = threading.Event()
    stuck = threading.Thread(target=call, args=(lambda: running.set() or release.wait(30) and applied.append("stuck"),))
    stuck.start()
    assert running.wait(5)
    queued = threading.Thread(target=call, args=(lambda: applied.append("queued"),))
    queued.start()
    stuck.join(5)
    queued.join(5)
    assert callers == ["the vector store did not finish a write within 0.2 s"] * 2
    release.set()
    assert deadline.run(lambda: "after") == "after"  # the store recovered: writes go through again
    assert applied == ["stuck"]  # the one nobody waited for any more never ran


def test_a_failing_write_raises_its_own_error():
    with pytest.raises(ValueError, match="bad chunk"):
        WriteDeadline(5, "vector store").run(lambda: (_ for _ in ()).throw(ValueError("bad chunk")))
