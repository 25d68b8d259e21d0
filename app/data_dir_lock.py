"""One process per embedded data directory: an exclusive lock file taken before any store opens.

Embedded Chroma keeps its index in the process's memory; a second process writing the same folder leaves
the first one answering from a stale index ("Error finding id"). So the second process refuses to start,
naming the holder. The lock is `flock` on `<data dir>/deskmate.lock`: the kernel drops it when the holder
dies (kill -9 included), so a stale file never blocks a restart. Within one process the lock is shared
(the CLI and the app it serves take it once each).
"""

from __future__ import annotations

import fcntl
import os
import threading
import time
from pathlib import Path

LOCK_NAME = "deskmate.lock"


class DataDirInUse(RuntimeError):
    """Another process holds the data directory."""


_held: dict[Path, DataDirLock] = {}
_guard = threading.Lock()


class DataDirLock:
    def __init__(self, directory: Path, handle) -> None:
        self.directory = directory
        self._handle = handle
        self._users = 0

    def release(self) -> None:
        """Let go once; the file lock goes with the last user in this process."""
        with _guard:
            self._users -= 1
            if self._users > 0:
                return
            _held.pop(self.directory, None)
            fcntl.flock(self._handle, fcntl.LOCK_UN)
            self._handle.close()


def _holder(path: Path) -> str:
    try:
        text = path.read_text().strip()
    except OSError:
        return "another process"
    pid, _, since = text.partition(" ")
    if not pid.isdigit():
        return "another process"
    try:
        started = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(float(since)))
    except ValueError:
        return f"process {pid}"
    return f"process {pid} (since {started})"


def hold_data_dir(directory: Path) -> DataDirLock:
    """Take the data directory for this process, or raise DataDirInUse saying who has it and what to do."""
    directory = Path(directory).resolve()
    with _guard:
        lock = _held.get(directory)
        if lock is None:
            directory.mkdir(parents=True, exist_ok=True)
            path = directory / LOCK_NAME
            handle = open(path, "a+")  # noqa: SIM115 — held open for the process's life
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                handle.close()
                raise DataDirInUse(
                    f"the data directory {directory} is in use by {_holder(path)}; two deskmate processes on "
                    f"one embedded data directory corrupt each other's search index. Stop that process first "
                    f"(or upload documents through its API), or give this one its own DESKMATE_DATA_DIR. To run "
                    f"several processes on the same data, use a Chroma server (CHROMA_MODE=server) and a "
                    f"server database."
                ) from None
            handle.seek(0)
            handle.truncate()
            handle.write(f"{os.getpid()} {time.time():.0f}\n")
            handle.flush()
            lock = _held[directory] = DataDirLock(directory, handle)
        lock._users += 1
        return lock
