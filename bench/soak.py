"""Soak: N clients of mixed traffic against one `deskmate serve` for M minutes, measured minute by minute.

    python bench/soak.py                       # 8 clients x 15 min on the embedded defaults (a quiet machine)
    python bench/soak.py --minutes 3           # a short run
    python bench/soak.py --url http://127.0.0.1:8000 --data-dir ./data   # a server you started yourself
    python bench/soak.py --minutes 3 --session-idle-s 60 --trace-max-mb 8 --retention-interval-s 20
                                               # retention at work within a short run: growth levels off
    python bench/soak.py --minutes 5 --tracemalloc   # also: the allocation sites that grew after minute 1

Traffic per client, in a loop: a new conversation (one of a fixed list of questions), two follow-ups in it,
a search, a document list and a /ready. Every minute: requests, errors (any status >= 500, a transport
error, or a non-JSON error body), p50/p95 latency, the server's RSS and the data directory's size. At the
end a retention pass (`deskmate db vacuum`) runs and the data directory's growth per chat turn is reported,
with the bytes each SQLite table and index holds (what a turn leaves behind). --tracemalloc starts the server
with DESKMATE_TRACEMALLOC_FILE (app/memory_profile.py), signals it after minute 1 and at the end, and prints
the allocation sites that grew in between (tracing slows the server and adds to its RSS: read that run's
RSS and latency figures accordingly).
Targets: 0 errors; RSS growth < 5 % after the first minute; data-dir growth <= 4 KB per turn.
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import sqlite3
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parent.parent
QUESTIONS = [
    "How do I connect to the VPN on my Mac?", "My printer won't print", "how do I reset my password",
    "I lost my phone with the authenticator app", "where do I find my bitlocker recovery key",
    "How do I map the shared drive on windows", "my mic doesn't work in teams", "How do I report a phishing email",
    "how do I request software", "outlook is stuck in the outbox", "It's not working", "laptop is very slow",
    "how do I find my MAC address", "how do I connect to wifi on ubuntu",
]
FOLLOW_UPS = ["im on linux", "what about windows", "it still does not work", "yes", "no"]
SEARCHES = ["vpn", "password reset", "printer", "mfa enrolment", "disk encryption"]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def dir_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.is_dir() else 0


def rss_mb(pid: int, field: str = "VmRSS") -> float:
    """A memory figure of /proc/PID/status in MB: VmRSS, or its parts RssAnon (heap: Python objects, native
    allocators, model tensors) and RssFile (mapped files: libraries, model weights, index files)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) / 1024
    return 0.0


class Recorder:
    """Per-minute latencies and errors, written by every client thread."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.minutes: dict[int, dict] = {}
        self.turns = 0
        self.started = time.monotonic()
        self.error_samples: list[str] = []

    def add(self, latency_s: float, error: str | None, *, turn: bool) -> None:
        minute = int((time.monotonic() - self.started) // 60)
        with self.lock:
            bucket = self.minutes.setdefault(minute, {"latencies": [], "errors": 0, "turns": 0})
            bucket["latencies"].append(latency_s)
            if error:
                bucket["errors"] += 1
                if len(self.error_samples) < 10:
                    self.error_samples.append(error)
            elif turn:
                self.turns += 1
                bucket["turns"] += 1


def _call(client: httpx.Client, recorder: Recorder, method: str, path: str, *, turn: bool = False, **kwargs):
    started = time.perf_counter()
    error = None
    reply = None
    try:
        reply = client.request(method, path, **kwargs)
        if reply.status_code >= 500:
            error = f"{method} {path}: {reply.status_code} {reply.text[:200]}"
        elif reply.status_code >= 400 and not reply.headers.get("content-type", "").startswith("application/json"):
            error = f"{method} {path}: {reply.status_code} non-JSON {reply.text[:200]}"
    except httpx.HTTPError as exc:
        error = f"{method} {path}: {type(exc).__name__} {exc}"
    recorder.add(time.perf_counter() - started, error, turn=turn)
    return reply


def client_loop(base: str, recorder: Recorder, stop: threading.Event, seed: int) -> None:
    rng = random.Random(seed)
    with httpx.Client(base_url=base, timeout=60) as client:
        while not stop.is_set():
            first = _call(client, recorder, "POST", "/chat", turn=True, json={"message": rng.choice(QUESTIONS)})
            session = first.json().get("session_id") if first is not None and first.status_code == 200 else None
            for _ in range(2):
                if session and not stop.is_set():
                    _call(client, recorder, "POST", "/chat", turn=True,
                          json={"message": rng.choice(FOLLOW_UPS), "session_id": session})
            _call(client, recorder, "POST", "/search", json={"query": rng.choice(SEARCHES)})
            _call(client, recorder, "GET", "/documents")
            _call(client, recorder, "GET", "/ready")


def table_bytes(path: Path) -> list[tuple[str, int]]:
    """Bytes of pages each table and index of an SQLite file holds, largest first."""
    if not path.is_file():
        return []
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
        return conn.execute("SELECT name, SUM(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC").fetchall()


def allocation_report(pid: int, path: Path, number: int, wait_s: float = 180.0) -> str:
    """Signal the server for a tracemalloc snapshot and wait for report `number` (0: the baseline)."""
    from app.memory_profile import END_MARK

    os.kill(pid, signal.SIGUSR1)
    want = f"{END_MARK} {number} ==" if number else "baseline:"
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        text = path.read_text() if path.is_file() else ""
        if want in text:
            return text
        time.sleep(1)
    return f"(no tracemalloc report within {wait_s:g} s)"


def retention_env(args: argparse.Namespace) -> dict:
    """The retention settings a run asked for (none: the server's defaults)."""
    env = {}
    if args.session_idle_s:
        env["DESKMATE_SESSION_IDLE_DAYS"] = str(args.session_idle_s / 86400)
    if args.trace_max_mb:
        env["DESKMATE_TRACE_MAX_MB"] = str(args.trace_max_mb)
    if args.retention_interval_s:
        env["DESKMATE_RETENTION_INTERVAL_S"] = str(args.retention_interval_s)
    if args.feedback_window_h:
        env["DESKMATE_FEEDBACK_VOTE_WINDOW_HOURS"] = str(args.feedback_window_h)
    return env


def start_server(data_dir: Path, log_path: Path, settings: dict) -> tuple[subprocess.Popen, str]:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DESKMATE_", "GROQ_", "LANGFUSE_", "CHROMA_"))}
    env |= {"DESKMATE_DATA_DIR": str(data_dir), "DESKMATE_LOG_LEVEL": "WARNING"} | settings
    with open(log_path, "wb") as log:
        process = subprocess.Popen([sys.executable, "-m", "app.cli", "serve", "--port", str(port)], env=env,
                                   cwd=REPO, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        if process.poll() is not None:
            sys.exit(f"server exited: {log_path.read_text()[-2000:]}")
        try:
            if httpx.get(f"{base}/ready", timeout=5).status_code == 200:
                return process, base
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    process.kill()
    sys.exit("server not ready within 300 s")


def server_pid(base: str) -> int | None:
    """The pid listening on the server's port (for --url: read from /proc's socket table via `ss`)."""
    port = base.rsplit(":", 1)[-1].strip("/")
    out = subprocess.run(["ss", "-ltnpH", f"sport = :{port}"], capture_output=True, text=True).stdout
    marker = "pid="
    return int(out.split(marker, 1)[1].split(",", 1)[0]) if marker in out else None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--minutes", type=float, default=15.0)
    parser.add_argument("--url", help="a running server (default: start one on a fresh data directory)")
    parser.add_argument("--data-dir", help="its data directory (with --url), for the size figures")
    parser.add_argument("--session-idle-s", type=float, help="DESKMATE_SESSION_IDLE_DAYS, in seconds (default: 30 days)")
    parser.add_argument("--trace-max-mb", type=float, help="DESKMATE_TRACE_MAX_MB (default: 200)")
    parser.add_argument("--retention-interval-s", type=float, help="DESKMATE_RETENTION_INTERVAL_S (default: 600)")
    parser.add_argument("--feedback-window-h", type=float,
                        help="DESKMATE_FEEDBACK_VOTE_WINDOW_HOURS (default: 168)")
    parser.add_argument("--tracemalloc", action="store_true",
                        help="trace the server's allocations; print what grew between minute 1 and the end")
    args = parser.parse_args()
    if args.tracemalloc and args.url:
        parser.error("--tracemalloc starts its own server: leave out --url")

    scratch = tempfile.TemporaryDirectory(prefix="deskmate-soak-")
    process = None
    if args.url:
        base, data_dir, pid = args.url.rstrip("/"), Path(args.data_dir) if args.data_dir else None, server_pid(args.url)
    else:
        data_dir = Path(scratch.name) / "data"
        traced = {"DESKMATE_TRACEMALLOC_FILE": str(Path(scratch.name) / "tracemalloc.txt")} if args.tracemalloc else {}
        process, base = start_server(data_dir, Path(scratch.name) / "serve.log", retention_env(args) | traced)
        pid = process.pid
    print(f"soak: {args.clients} clients x {args.minutes:g} min against {base} (pid {pid}, data {data_dir})")
    size_start = dir_bytes(data_dir) if data_dir else 0
    recorder, stop = Recorder(), threading.Event()
    threads = [threading.Thread(target=client_loop, args=(base, recorder, stop, i), daemon=True)
               for i in range(args.clients)]
    for thread in threads:
        thread.start()
    samples = []  # (minute, rss MB, data dir bytes)
    end = recorder.started + args.minutes * 60
    minute = 0
    while time.monotonic() < end:
        time.sleep(max(0.0, min(end, recorder.started + (minute + 1) * 60) - time.monotonic()))
        samples.append((minute, rss_mb(pid) if pid else 0.0, dir_bytes(data_dir) if data_dir else 0,
                        rss_mb(pid, "RssAnon") if pid else 0.0, rss_mb(pid, "RssFile") if pid else 0.0))
        if args.tracemalloc and minute == 0:
            allocation_report(pid, Path(traced["DESKMATE_TRACEMALLOC_FILE"]), 0)
        minute += 1
    stop.set()
    for thread in threads:
        thread.join(timeout=90)
    if args.tracemalloc:  # after the clients stopped: what stays, not what is in flight
        report = allocation_report(pid, Path(traced["DESKMATE_TRACEMALLOC_FILE"]), 1)
        baseline = next((line for line in report.splitlines() if line.startswith("baseline:")), "")
        print(f"\ntracemalloc, minute 1 -> end ({baseline}):\n" + report.split("report 1:", 1)[-1].strip())
    try:
        sizes = httpx.get(f"{base}/ready", timeout=30).json().get("sizes", {})
        print("store sizes at the end (MB):", ", ".join(f"{k} {v / 1e6:.2f}" for k, v in sizes.items()))
    except (httpx.HTTPError, ValueError):
        pass

    print(f"\n{'min':>3} {'requests':>8} {'errors':>6} {'p50 ms':>7} {'p95 ms':>7} {'RSS MB':>7} {'anon MB':>7} "
          f"{'file MB':>7} {'data MB':>8} {'KB/turn':>7}")
    previous = size_start
    for (index, rss, size, anon, mapped) in samples:
        bucket = recorder.minutes.get(index, {"latencies": [], "errors": 0, "turns": 0})
        lat = sorted(bucket["latencies"])
        p50 = statistics.median(lat) * 1000 if lat else 0.0
        p95 = lat[min(len(lat) - 1, int(0.95 * len(lat)))] * 1000 if lat else 0.0
        per_turn = (size - previous) / 1024 / max(bucket["turns"], 1)  # this minute's growth per chat turn
        previous = size
        print(f"{index + 1:>3} {len(lat):>8} {bucket['errors']:>6} {p50:>7.0f} {p95:>7.0f} {rss:>7.1f} {anon:>7.1f} "
              f"{mapped:>7.1f} {size / 1e6:>8.2f} {per_turn:>7.1f}")
    total = sum(len(b["latencies"]) for b in recorder.minutes.values())
    errors = sum(b["errors"] for b in recorder.minutes.values())
    print(f"\nrequests {total}, errors {errors}, chat turns {recorder.turns}")
    for sample in recorder.error_samples:
        print(f"  error: {sample}")
    if len(samples) >= 2 and samples[0][1]:
        growth = (samples[-1][1] - samples[0][1]) / samples[0][1] * 100
        print(f"RSS after minute 1: {samples[0][1]:.1f} MB, at the end {samples[-1][1]:.1f} MB ({growth:+.1f} %)")
    if data_dir:
        env = {k: v for k, v in os.environ.items() if not k.startswith("DESKMATE_")} | retention_env(args)
        vacuum = subprocess.run([sys.executable, "-m", "app.cli", "--data-dir", str(data_dir), "db", "vacuum"],
                                cwd=REPO, capture_output=True, text=True, env=env)
        print("retention pass (deskmate db vacuum):", vacuum.stdout.strip() or vacuum.stderr.strip())
        size_end = dir_bytes(data_dir)
        per_turn = (size_end - size_start) / max(recorder.turns, 1)
        print(f"data dir {size_start / 1e6:.2f} -> {size_end / 1e6:.2f} MB: {per_turn / 1024:.2f} KB per chat turn "
              f"after retention")
        for name in ("deskmate.sqlite", "sessions.sqlite"):
            tables = table_bytes(data_dir / name)
            print(f"  {name}: " + ", ".join(f"{table} {size / 1024:.0f} KB ({size / max(recorder.turns, 1):.0f} B/turn)"
                                            for table, size in tables[:8]))
    if process is not None:
        process.terminate()
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
    scratch.cleanup()
    return 1 if errors else 0


if __name__ == "__main__":
    raise SystemExit(main())
