"""The memory investigation switch (DESKMATE_TRACEMALLOC_FILE): SIGUSR1 starts tracing, the next one
reports the allocation sites that grew since — here, a list this test keeps alive."""

from __future__ import annotations

import os
import tracemalloc
from pathlib import Path

import pytest

from app.memory_profile import start_from_settings
from app.settings import Settings

SIGUSR1_PROBE = """
import os, signal, sys, time
from pathlib import Path
from app.memory_profile import END_MARK, start_from_settings
from app.settings import Settings

def wait_for(path, text):
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        content = path.read_text() if path.exists() else ""
        if text in content:
            return content
        time.sleep(0.05)
    sys.exit(f"{text!r} never appeared in {path}")

report_file = Path(sys.argv[1])
assert start_from_settings(Settings(_env_file=None, tracemalloc_file=report_file)) is not None
os.kill(os.getpid(), signal.SIGUSR1)
wait_for(report_file, "baseline")
kept = [bytearray(1024) for _ in range(2000)]  # about 2 MB that stays: the growth to find
os.kill(os.getpid(), signal.SIGUSR1)
report = wait_for(report_file, f"{END_MARK} 1 ==")
print(report.split("by line:", 1)[1].split("largest as call stacks", 1)[0].strip().splitlines()[0])
assert len(kept) == 2000
"""


def _run_probe(probe: str, *args: str) -> str:
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "MALLOC_ARENA_MAX"}
    out = subprocess.run(
        [sys.executable, "-c", probe, *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=Path(__file__).resolve().parents[2],
        env=env | {"PYTHONPATH": "."},
    )
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_a_second_sigusr1_reports_the_line_whose_allocations_grew_since_the_first(tmp_path):
    # In a process of its own: in the test worker, threads left by earlier tests may allocate between the
    # two signals, and their growth would rightly top the report.
    top = _run_probe(SIGUSR1_PROBE, str(tmp_path / "tracemalloc.txt"))
    assert "<string>" in top and float(top.split()[0]) > 1500  # KiB, on the probe's own line


def test_without_the_setting_nothing_is_traced():
    assert start_from_settings(Settings(_env_file=None)) is None
    assert not tracemalloc.is_tracing()


ARENA_PROBE = """
import ctypes, ctypes.util, re, sys, tempfile, threading
from app.memory_profile import limit_malloc_arenas
if sys.argv[1] == "capped":
    assert limit_malloc_arenas()
libc = ctypes.CDLL(ctypes.util.find_library("c"))
barrier, kept = threading.Barrier(8), []
def allocate():
    barrier.wait()  # eight threads allocating at once: each would get an arena of its own
    kept.append([bytearray(200) for _ in range(20000)])
threads = [threading.Thread(target=allocate) for _ in range(8)]
[t.start() for t in threads]
[t.join() for t in threads]
path = tempfile.mktemp()
libc.fopen.restype = ctypes.c_void_p
report = libc.fopen(path.encode(), b"w")
libc.malloc_info(0, ctypes.c_void_p(report))
libc.fclose(ctypes.c_void_p(report))
print(len(re.findall("<heap nr=", open(path).read())))
"""


def _arenas(mode: str) -> int:
    return int(_run_probe(ARENA_PROBE, mode))


def test_the_server_caps_malloc_arenas_so_busy_threads_share_two_heaps():
    try:
        libc = os.confstr("CS_GNU_LIBC_VERSION") or ""
    except (ValueError, OSError):
        libc = ""
    if not libc.startswith("glibc"):
        pytest.skip("malloc arenas are glibc's")
    assert _arenas("free") > 2  # without the cap: an arena per busy thread
    assert _arenas("capped") == 2
