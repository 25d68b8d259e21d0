"""A server's native memory kept flat (a cap on glibc's malloc arenas), and where its memory goes
(tracemalloc snapshots on demand, for a soak's memory investigation).

Why the cap: glibc gives every thread that allocates concurrently an arena of its own, up to 8 per core,
and memory freed in one is seldom handed back while others are busy — the server's thread pool, the
embedder's and the vector store's threads made RSS climb about 6 MB a minute under steady load (8 clients,
bench/soak.py) while Python's own live allocations did not grow; with two arenas it stayed flat at the same
latency. MALLOC_ARENA_MAX, when the operator sets it, wins.

With DESKMATE_TRACEMALLOC_FILE set, `deskmate serve` listens for SIGUSR1. The first starts tracing (not at
start-up: tracing the model loads would take minutes and measure nothing that grows); every later one
appends to that file the allocations made since then that are still alive — what grew — by line, then the
largest as call stacks, ending with a line `== end of report N ==` a reader can wait for. Off by default:
tracing costs memory and speed.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import os
import signal
import threading
import tracemalloc
from pathlib import Path

log = logging.getLogger(__name__)

FRAMES = 8  # stack depth kept per allocation: enough to see which deskmate code asked
TOP_LINES = 25
TOP_STACKS = 6
END_MARK = "== end of report"
_IGNORED = (
    tracemalloc.Filter(False, tracemalloc.__file__),
    tracemalloc.Filter(False, "<frozen importlib._bootstrap>"),
    tracemalloc.Filter(False, "<frozen importlib._bootstrap_external>"),
    tracemalloc.Filter(False, "<unknown>"),
)


class _MallInfo2(ctypes.Structure):
    _fields_ = [
        (name, ctypes.c_size_t)
        for name in (
            "arena",
            "ordblks",
            "smblks",
            "hblks",
            "hblkhd",
            "usmblks",
            "fsmblks",
            "uordblks",
            "fordblks",
            "keepcost",
        )
    ]


def malloc_summary() -> str:
    """glibc's own account of the native heap (every arena): what is in use, and what it holds free —
    memory Python and the native libraries gave back that the process still keeps (fragmentation)."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        libc.mallinfo2.restype = _MallInfo2
        info = libc.mallinfo2()
    except (OSError, AttributeError):
        return "malloc: no glibc mallinfo2 here"
    return (
        f"malloc: {info.uordblks / 1e6:.1f} MB in use, {info.fordblks / 1e6:.1f} MB held free in "
        f"{info.arena / 1e6:.1f} MB of arenas, {info.hblkhd / 1e6:.1f} MB in mmapped blocks"
    )


M_ARENA_MAX = -8  # mallopt parameter (malloc.h)
SERVER_ARENAS = 2


def limit_malloc_arenas(arenas: int = SERVER_ARENAS) -> bool:
    """Cap glibc's malloc arenas for this process (before its threads start); False where it cannot
    (not glibc) or MALLOC_ARENA_MAX already decides."""
    if os.environ.get("MALLOC_ARENA_MAX"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        return bool(libc.mallopt(ctypes.c_int(M_ARENA_MAX), ctypes.c_int(arenas)))
    except (OSError, AttributeError):
        return False


class AllocationReporter:
    """Snapshots taken off the signal handler, on a thread of their own (a snapshot takes seconds)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._wanted = threading.Event()
        self._baseline: tracemalloc.Snapshot | None = None
        self._reports = 0

    def start(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text("")
        signal.signal(signal.SIGUSR1, lambda *_: self._wanted.set())
        threading.Thread(target=self._run, name="tracemalloc-reporter", daemon=True).start()
        log.warning(
            "tracemalloc ready: the first SIGUSR1 starts tracing (%d frames), each later one writes the "
            "allocation growth to %s",
            FRAMES,
            self.path,
        )

    def _run(self) -> None:
        while True:
            self._wanted.wait()
            self._wanted.clear()
            try:
                self.snapshot()
            except Exception:  # noqa: BLE001 — a diagnostic must never take the server down
                log.exception("tracemalloc snapshot failed")

    def snapshot(self) -> None:
        """Start tracing the first time; after that, a report of what grew since, appended to the file."""
        if self._baseline is None:
            tracemalloc.start(FRAMES)
            self._baseline = tracemalloc.take_snapshot().filter_traces(_IGNORED)
            with self.path.open("a") as out:
                out.write(f"baseline: tracing from here; {malloc_summary()}\n")
            return
        current = tracemalloc.take_snapshot().filter_traces(_IGNORED)
        traced, peak = tracemalloc.get_traced_memory()
        self._reports += 1
        lines = [
            f"report {self._reports}: {traced / 1e6:.1f} MB allocated since the baseline still alive (peak "
            f"{peak / 1e6:.1f} MB), largest first; {malloc_summary()}",
            "",
            "by line:",
        ]
        for stat in current.compare_to(self._baseline, "lineno")[:TOP_LINES]:
            frame = stat.traceback[0]
            lines.append(
                f"  {stat.size_diff / 1024:+10.1f} KiB {stat.count_diff:+8d} blocks  "
                f"{_short(frame.filename)}:{frame.lineno}"
            )
        lines += ["", "largest as call stacks (innermost last):"]
        for stat in current.compare_to(self._baseline, "traceback")[:TOP_STACKS]:
            lines.append(f"  {stat.size_diff / 1024:+10.1f} KiB {stat.count_diff:+8d} blocks")
            lines += [f"      {_short(f.filename)}:{f.lineno}" for f in reversed(stat.traceback)]
        lines.append(f"{END_MARK} {self._reports} ==\n")
        with self.path.open("a") as out:
            out.write("\n".join(lines) + "\n")


_REPO = str(Path(__file__).resolve().parent.parent) + "/"


def _short(filename: str) -> str:
    for marker in ("site-packages/", "/lib/python3"):
        if marker in filename:
            return filename.split(marker, 1)[1]
    return filename.removeprefix(_REPO)


def start_from_settings(settings) -> AllocationReporter | None:
    """Start the reporter when the settings name a file (DESKMATE_TRACEMALLOC_FILE)."""
    path = settings.server.tracemalloc_file
    if not path:
        return None
    reporter = AllocationReporter(Path(path))
    reporter.start()
    return reporter
