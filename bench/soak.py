"""Soak: N clients of mixed traffic against `deskmate serve` (one or replicas) for M minutes, minute by minute.

    python bench/soak.py                       # 8 clients x 15 min on the embedded defaults (a quiet machine)
    python bench/soak.py --minutes 3           # a short run
    python bench/soak.py --url http://127.0.0.1:8000 --data-dir ./data   # a server you started yourself
    python bench/soak.py --minutes 3 --session-idle-s 60 --trace-max-mb 8 --retention-interval-s 20
                                               # retention at work within a short run: growth levels off
    python bench/soak.py --minutes 5 --tracemalloc   # also: the allocation sites that grew after minute 1
    python bench/soak.py --minutes 2 --keep-data /tmp/soak-data   # keep the data dir, to see where bytes went
    python bench/soak.py --replicas 2 --database postgres --minutes 10
                                               # server mode: 2 replicas on a scratch Postgres database and
                                               # one `chroma run`; clients spread their requests round-robin

Traffic per client, in a loop: a new conversation (one of a fixed list of questions), two follow-ups in it,
a search, a document list and a /ready. Every minute: requests, errors (any status >= 500, a transport
error, or a non-JSON error body), p50/p95 latency, each server's RSS with its two parts (RssAnon: the heap;
RssFile: mapped files) and open file descriptors, and the data directory's size (server mode: the Postgres
database's and Chroma's). At the end a retention pass (`deskmate db vacuum`) runs and the data growth per chat
turn is reported, with the bytes each SQLite table and index holds (what a turn leaves behind; embedded mode
only, server mode keeps those tables in Postgres). --tracemalloc (one embedded server) starts the server with
DESKMATE_TRACEMALLOC_FILE (app/memory_profile.py), signals it after minute 1 and at the end, and prints the
allocation sites that grew in between (tracing slows the server and adds to its RSS: read that run's RSS and
latency figures accordingly).
Targets: 0 errors; RSS growth < 5 % after the first minute (server mode, 10 min: < 10 %); p95 drift < 20 %
first minute vs last; no file-descriptor growth; data-dir growth <= 4 KB per turn.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import ExitStack
from pathlib import Path

import httpx
import psutil

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))
from stack import Stack, embedded, server_mode  # noqa: E402  (bench/stack.py)

from app.memory_profile import END_MARK  # noqa: E402

QUESTIONS = [
    "How do I connect to the VPN on my Mac?",
    "My printer won't print",
    "how do I reset my password",
    "I lost my phone with the authenticator app",
    "where do I find my bitlocker recovery key",
    "How do I map the shared drive on windows",
    "my mic doesn't work in teams",
    "How do I report a phishing email",
    "how do I request software",
    "outlook is stuck in the outbox",
    "It's not working",
    "laptop is very slow",
    "how do I find my MAC address",
    "how do I connect to wifi on ubuntu",
]
FOLLOW_UPS = ["im on linux", "what about windows", "it still does not work", "yes", "no"]
SEARCHES = ["vpn", "password reset", "printer", "mfa enrolment", "disk encryption"]


def dir_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.is_dir() else 0


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


def client_loop(bases: list[str], recorder: Recorder, stop: threading.Event, seed: int) -> None:
    rng = random.Random(seed)
    replicas = [httpx.Client(base_url=base, timeout=60) for base in bases]
    turn = 0
    try:
        while not stop.is_set():
            turn += 1
            # round-robin over the replicas, request by request: a conversation's turns land on all of them
            pick = lambda k: replicas[(seed + turn + k) % len(replicas)]  # noqa: E731, B023
            client = pick(0)
            first = _call(client, recorder, "POST", "/chat", turn=True, json={"message": rng.choice(QUESTIONS)})
            session = first.json().get("session_id") if first is not None and first.status_code == 200 else None
            for k in (1, 2):
                if session and not stop.is_set():
                    _call(
                        pick(k),
                        recorder,
                        "POST",
                        "/chat",
                        turn=True,
                        json={"message": rng.choice(FOLLOW_UPS), "session_id": session},
                    )
            _call(client, recorder, "POST", "/search", json={"query": rng.choice(SEARCHES)})
            _call(client, recorder, "GET", "/documents")
            _call(client, recorder, "GET", "/ready")
    finally:
        for client in replicas:
            client.close()


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


def table_bytes(path: Path) -> list[tuple[str, int]]:
    """Bytes of pages each table and index of an SQLite file holds, largest first."""
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
        return conn.execute("SELECT name, SUM(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC").fetchall()


def allocation_report(pid: int, path: Path, number: int, wait_s: float = 180.0) -> str:
    """Signal the server for a tracemalloc snapshot and wait for report `number` (0: the baseline)."""
    os.kill(pid, signal.SIGUSR1)
    want = f"{END_MARK} {number} ==" if number else "baseline:"
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        text = path.read_text() if path.is_file() else ""
        if want in text:
            return text
        time.sleep(1)
    return f"(no tracemalloc report within {wait_s:g} s)"


def server_pid(base: str) -> int | None:
    """The pid listening on the server's port (for --url: read from /proc's socket table via `ss`)."""
    port = base.rsplit(":", 1)[-1].strip("/")
    out = subprocess.run(["ss", "-ltnpH", f"sport = :{port}"], capture_output=True, text=True).stdout
    marker = "pid="
    return int(out.split(marker, 1)[1].split(",", 1)[0]) if marker in out else None


def _spread(values: list[float], fmt: str) -> str:
    return "/".join(format(v, fmt) for v in values)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--minutes", type=float, default=15.0)
    parser.add_argument("--url", help="a running server (default: start one on a fresh data directory)")
    parser.add_argument("--data-dir", help="its data directory (with --url), for the size figures")
    parser.add_argument("--replicas", type=int, default=1, help="server mode: this many `deskmate serve` replicas")
    parser.add_argument(
        "--database",
        choices=("embedded", "postgres"),
        default="embedded",
        help="postgres: server mode (a scratch Postgres database and a `chroma run`)",
    )
    parser.add_argument(
        "--session-idle-s", type=float, help="DESKMATE_SESSION_IDLE_DAYS, in seconds (default: 30 days)"
    )
    parser.add_argument("--trace-max-mb", type=float, help="DESKMATE_TRACE_MAX_MB (default: 200)")
    parser.add_argument("--retention-interval-s", type=float, help="DESKMATE_RETENTION_INTERVAL_S (default: 600)")
    parser.add_argument("--feedback-window-h", type=float, help="DESKMATE_FEEDBACK_VOTE_WINDOW_HOURS (default: 168)")
    parser.add_argument(
        "--keep-data",
        metavar="DIR",
        help="copy the data directory to DIR at the end (embedded), to see where the bytes went",
    )
    parser.add_argument(
        "--tracemalloc",
        action="store_true",
        help="trace the server's allocations; print what grew between minute 1 and the end "
        "(so run 2 minutes or more: in a 1-minute run that is only the drain)",
    )
    args = parser.parse_args()
    server = args.database == "postgres" or args.replicas > 1
    if args.tracemalloc and (args.url or server):
        parser.error(
            "--tracemalloc traces the one embedded server it starts: leave out --url, --replicas and "
            "--database postgres"
        )

    with tempfile.TemporaryDirectory(prefix="deskmate-soak-") as scratch, ExitStack() as servers:
        trace_file = Path(scratch) / "tracemalloc.txt" if args.tracemalloc else None
        if args.url:
            pid = server_pid(args.url)
            stack = Stack(
                "given",
                [args.url.rstrip("/")],
                [psutil.Process(pid)] if pid else [],
                data_dirs=[Path(args.data_dir)] if args.data_dir else [],
            )
        elif server:
            stack = servers.enter_context(server_mode(Path(scratch) / "server", args.replicas, retention_env(args)))
        else:
            traced = {"DESKMATE_TRACEMALLOC_FILE": str(trace_file)} if trace_file else {}
            stack = servers.enter_context(embedded(Path(scratch) / "embedded", retention_env(args) | traced))
        return soak(args, stack, trace_file)


def data_bytes(stack: Stack) -> int:
    """What the stores hold on disk: the data dir (embedded), or the Postgres database and Chroma's folder."""
    if stack.database_url:
        return stack.database_bytes() + dir_bytes(stack.chroma_dir)
    return dir_bytes(stack.data_dirs[0]) if stack.data_dirs else 0


def soak(args: argparse.Namespace, stack: Stack, trace_file: Path | None = None) -> int:
    """Run the clients, sample every minute, print the table and the end-of-run figures; 1 on any error."""
    print(
        f"soak: {args.clients} clients x {args.minutes:g} min against {', '.join(stack.urls)} "
        f"({stack.name}, pids {', '.join(str(p.pid) for p in stack.replicas)})",
        flush=True,
    )
    size_start = data_bytes(stack)
    recorder, stop = Recorder(), threading.Event()
    threads = [
        threading.Thread(target=client_loop, args=(stack.urls, recorder, stop, i), daemon=True)
        for i in range(args.clients)
    ]
    for thread in threads:
        thread.start()
    samples = []  # (minute, [RSS MB], [(RssAnon, RssFile) MB], [open fds], data bytes), lists per replica
    end = recorder.started + args.minutes * 60
    minute = 0
    while time.monotonic() < end:
        time.sleep(max(0.0, min(end, recorder.started + (minute + 1) * 60) - time.monotonic()))
        samples.append((minute, stack.rss_mb(), stack.rss_split_mb(), stack.open_files(), data_bytes(stack)))
        if trace_file and minute == 0:
            allocation_report(stack.replicas[0].pid, trace_file, 0)
        minute += 1
    stop.set()
    for thread in threads:
        thread.join(timeout=90)
    if trace_file:  # after the clients stopped: what stays, not what is in flight
        report = allocation_report(stack.replicas[0].pid, trace_file, 1)
        baseline = next((line for line in report.splitlines() if line.startswith("baseline:")), "")
        print(f"\ntracemalloc, minute 1 -> end ({baseline}):\n" + report.split("report 1:", 1)[-1].strip())
    try:
        sizes = httpx.get(f"{stack.urls[0]}/ready", timeout=30).json().get("sizes", {})
        print("store sizes at the end (MB):", ", ".join(f"{k} {v / 1e6:.2f}" for k, v in sizes.items()))
    except (httpx.HTTPError, ValueError):
        pass

    print(
        f"\n{'min':>3} {'requests':>8} {'errors':>6} {'p50 ms':>7} {'p95 ms':>7} {'RSS MB':>11} {'anon MB':>11} "
        f"{'file MB':>11} {'open fds':>9} {'data MB':>8} {'KB/turn':>7}"
    )
    previous = size_start
    p95s = []
    for index, rss, split, fds, size in samples:
        bucket = recorder.minutes.get(index, {"latencies": [], "errors": 0, "turns": 0})
        lat = sorted(bucket["latencies"])
        p50 = statistics.median(lat) * 1000 if lat else 0.0
        p95 = lat[min(len(lat) - 1, int(0.95 * len(lat)))] * 1000 if lat else 0.0
        p95s.append(p95)
        per_turn = (size - previous) / 1024 / max(bucket["turns"], 1)  # this minute's growth per chat turn
        previous = size
        anon, mapped = [a for a, _ in split], [f for _, f in split]
        print(
            f"{index + 1:>3} {len(lat):>8} {bucket['errors']:>6} {p50:>7.0f} {p95:>7.0f} {_spread(rss, '.0f'):>11} "
            f"{_spread(anon, '.0f'):>11} {_spread(mapped, '.0f'):>11} {_spread(fds, 'd'):>9} {size / 1e6:>8.2f} "
            f"{per_turn:>7.1f}"
        )
    total = sum(len(b["latencies"]) for b in recorder.minutes.values())
    errors = sum(b["errors"] for b in recorder.minutes.values())
    print(f"\nrequests {total}, errors {errors}, chat turns {recorder.turns}")
    for sample in recorder.error_samples:
        print(f"  error: {sample}")
    if len(samples) >= 2:
        first, last = samples[0], samples[-1]
        if p95s[0]:
            print(
                f"p95 minute 1 {p95s[0]:.0f} ms, last minute {p95s[-1]:.0f} ms "
                f"({(p95s[-1] - p95s[0]) / p95s[0] * 100:+.1f} %)"
            )
        for i, (rss0, rss1, fd0, fd1) in enumerate(zip(first[1], last[1], first[3], last[3])):
            print(
                f"replica {i}: RSS after minute 1 {rss0:.1f} MB, at the end {rss1:.1f} MB "
                f"({(rss1 - rss0) / rss0 * 100:+.1f} %); open fds {fd0} -> {fd1}"
            )
    if stack.data_dirs:
        env = {k: v for k, v in os.environ.items() if not k.startswith("DESKMATE_")} | retention_env(args)
        if stack.database_url:
            env["DESKMATE_DATABASE_URL"] = stack.database_url
        vacuum = subprocess.run(
            [sys.executable, "-m", "app.cli", "--data-dir", str(stack.data_dirs[0]), "db", "vacuum"],
            cwd=REPO,
            capture_output=True,
            text=True,
            env=env,
        )
        print("retention pass (deskmate db vacuum):", vacuum.stdout.strip() or vacuum.stderr.strip())
        size_end = data_bytes(stack)
        per_turn = (size_end - size_start) / max(recorder.turns, 1)
        what = "Postgres + Chroma" if stack.database_url else "data dir"
        print(
            f"{what} {size_start / 1e6:.2f} -> {size_end / 1e6:.2f} MB: {per_turn / 1024:.2f} KB per chat turn "
            f"after retention"
        )
        if stack.database_url:
            print("SQLite table bytes: not applicable in server mode (those tables are in Postgres, counted above)")
        for path in [] if stack.database_url else sorted(stack.data_dirs[0].glob("*.sqlite")):
            tables = table_bytes(path)
            print(
                f"  {path.name}: "
                + ", ".join(
                    f"{table} {size / 1024:.0f} KB ({size / max(recorder.turns, 1):.0f} B/turn)"
                    for table, size in tables[:8]
                )
            )
    if getattr(args, "keep_data", None) and stack.data_dirs and not stack.database_url:
        shutil.copytree(stack.data_dirs[0], args.keep_data, dirs_exist_ok=True)
        print(f"data directory copied to {args.keep_data}")
    print(
        f"machine load average at the end: {', '.join(f'{x:.2f}' for x in os.getloadavg())} "
        f"(other programs share these {os.cpu_count()} cores)"
    )
    return 1 if errors else 0


if __name__ == "__main__":
    raise SystemExit(main())
