"""Real servers for the HTTP benchmarks (bench/chat_latency.py, bench/soak.py): `deskmate serve` replicas, a
`chroma run`, a scratch Postgres database, and what psutil says about their processes.

    embedded(root)                      one `deskmate serve`, the embedded default (SQLite + Chroma on disk)
    server_mode(root, replicas=2)       N replicas on one scratch Postgres database and one `chroma run`
    server_mode(root, 1, workers=1)     … and `deskmate worker` processes beside them (they run the uploads)

Both are context managers yielding a `Stack` (its `urls`, its `processes` for CPU/RSS/fd figures); everything
they start is stopped and the scratch database dropped on exit. The Postgres server is $DESKMATE_TEST_POSTGRES
(default: the local one, trust auth), as in the tests.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import uuid
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

import httpx
import psutil

REPO = Path(__file__).resolve().parent.parent
ADMIN_URL = "postgresql://postgres@127.0.0.1:5432/postgres"
_CONFIG_PREFIXES = ("DESKMATE_", "GROQ_", "LANGFUSE_", "CHROMA_", "OPENAI_", "JIRA_")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait_ready(process: subprocess.Popen, url: str, log_path: Path, timeout_s: float = 600) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            sys.exit(f"{url} exited with {process.returncode}: {log_path.read_text(errors='replace')[-2000:]}")
        try:
            if httpx.get(url, timeout=5).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    process.kill()
    sys.exit(f"{url} not ready within {timeout_s:.0f} s")


def _stop(process: subprocess.Popen) -> None:
    """SIGTERM (a server finishes its turn, a worker hands its job back), SIGKILL after 60 s."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@contextmanager
def _process(args: list[str], log_path: Path, ready_url: str, env: dict | None = None) -> Iterator[subprocess.Popen]:
    with open(log_path, "ab") as log:
        process = subprocess.Popen(args, env=env, cwd=REPO, stdout=log, stderr=subprocess.STDOUT)
    try:
        _wait_ready(process, ready_url, log_path)
        yield process
    finally:
        _stop(process)


@contextmanager
def deskmate_serve(data_dir: Path, log_path: Path, settings: dict[str, str]) -> Iterator[tuple[subprocess.Popen, str]]:
    """A `deskmate serve` on a free port; yields (process, url)."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(_CONFIG_PREFIXES)}
    env |= {"DESKMATE_DATA_DIR": str(data_dir), "DESKMATE_LOG_LEVEL": "WARNING"} | settings
    url = f"http://127.0.0.1:{port}"
    with _process(
        [sys.executable, "-m", "app.cli", "serve", "--port", str(port)], log_path, f"{url}/ready", env
    ) as process:
        yield process, url


@contextmanager
def deskmate_worker(
    data_dir: Path, log_path: Path, settings: dict[str, str], timeout_s: float = 600
) -> Iterator[subprocess.Popen]:
    """A `deskmate worker` (server mode: it runs the jobs the replicas queue); yields once it logs that it is
    ready, and is stopped (SIGTERM: it hands a running job back) on exit."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(_CONFIG_PREFIXES)}
    env |= {"DESKMATE_DATA_DIR": str(data_dir), "DESKMATE_KB_DIR": ""} | settings
    with open(log_path, "ab") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "app.cli", "worker", "--poll", "0.2"],
            env=env,
            cwd=REPO,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + timeout_s
        while " ready:" not in log_path.read_text(errors="replace"):
            if process.poll() is not None:
                sys.exit(
                    f"deskmate worker exited with {process.returncode}: {log_path.read_text(errors='replace')[-2000:]}"
                )
            if time.monotonic() > deadline:
                sys.exit(f"deskmate worker not ready within {timeout_s:.0f} s")
            time.sleep(0.3)
        yield process
    finally:
        _stop(process)


@contextmanager
def chroma_run(path: Path, log_path: Path) -> Iterator[tuple[subprocess.Popen, int]]:
    chroma = Path(sys.executable).parent / "chroma"
    if not chroma.exists():
        chroma = Path(shutil.which("chroma") or "chroma")
    port = free_port()
    with _process(
        [str(chroma), "run", "--path", str(path), "--host", "127.0.0.1", "--port", str(port)],
        log_path,
        f"http://127.0.0.1:{port}/api/v2/heartbeat",
    ) as process:
        yield process, port


@contextmanager
def scratch_database() -> Iterator[str]:
    """A new, empty Postgres database's URL; dropped (with its connections) on exit."""
    import psycopg
    from sqlalchemy.engine import make_url

    admin_url = os.environ.get("DESKMATE_TEST_POSTGRES", ADMIN_URL)
    name = f"deskmate_bench_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(admin_url, autocommit=True, connect_timeout=5) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
        try:
            yield make_url(admin_url).set(database=name).render_as_string(hide_password=False)
        finally:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@dataclass
class Stack:
    """The servers of one configuration: deskmate replicas (`urls`, `replicas`) and what runs beside them."""

    name: str
    urls: list[str] = field(default_factory=list)
    replicas: list[psutil.Process] = field(default_factory=list)
    others: dict[str, psutil.Process] = field(default_factory=dict)  # "chroma" → its process
    data_dirs: list[Path] = field(default_factory=list)
    database_url: str | None = None  # server mode: the scratch Postgres database
    chroma_dir: Path | None = None  # server mode: the `chroma run --path`

    def cpu_seconds(self) -> dict[str, float]:
        """User + system CPU seconds so far: the replicas together (with their parse workers), and the others."""

        def cpu(process: psutil.Process) -> float:
            total = 0.0
            for p in [process, *process.children(recursive=True)]:
                try:
                    times = p.cpu_times()
                    total += times.user + times.system
                except psutil.NoSuchProcess:
                    pass
            return total

        return {"deskmate": sum(cpu(p) for p in self.replicas)} | {k: cpu(p) for k, p in self.others.items()}

    def rss_mb(self) -> list[float]:
        """Each replica's resident memory (its parse workers not included)."""
        return [p.memory_info().rss / 2**20 for p in self.replicas]

    def rss_split_mb(self) -> list[tuple[float, float]]:
        """Each replica's RSS in its two parts, (RssAnon, RssFile) in MB from /proc/PID/status: the heap (Python
        objects, native allocators, model tensors) and mapped files (libraries, model weights, index files)."""

        def split(process: psutil.Process) -> tuple[float, float]:
            fields = dict(
                line.split(":", 1)
                for line in Path(f"/proc/{process.pid}/status").read_text().splitlines()
                if line.startswith(("RssAnon:", "RssFile:"))
            )
            return tuple(int(fields.get(name, "0 kB").split()[0]) / 1024 for name in ("RssAnon", "RssFile"))

        return [split(p) for p in self.replicas]

    def open_files(self) -> list[int]:
        """Each replica's open file descriptors (files, sockets, pipes)."""
        return [p.num_fds() for p in self.replicas]

    def database_bytes(self) -> int:
        """Server mode: the Postgres database's size (sessions, tickets, votes, traces)."""
        import psycopg

        with psycopg.connect(self.database_url, connect_timeout=5) as conn:
            return int(conn.execute("SELECT pg_database_size(current_database())").fetchone()[0])


@contextmanager
def embedded(root: Path, settings: dict[str, str] | None = None) -> Iterator[Stack]:
    """One `deskmate serve` on the embedded defaults (the bundled KB, SQLite, Chroma in the data dir)."""
    root.mkdir(parents=True, exist_ok=True)
    with deskmate_serve(root / "data", root / "serve.log", settings or {}) as (process, url):
        yield Stack("embedded", [url], [psutil.Process(process.pid)], data_dirs=[root / "data"])


@contextmanager
def server_mode(
    root: Path, replicas: int, settings: dict[str, str] | None = None, *, workers: int = 0
) -> Iterator[Stack]:
    """`replicas` × `deskmate serve` on one scratch Postgres database and one `chroma run`. The first replica
    indexes the bundled KB; the others start after it, with no KB dir, and serve what it indexed. `workers`
    `deskmate worker` processes start after the replicas (in `others` as worker-0, worker-1 …)."""
    root.mkdir(parents=True, exist_ok=True)
    with ExitStack() as stack:
        database_url = stack.enter_context(scratch_database())
        chroma, chroma_port = stack.enter_context(chroma_run(root / "chroma", root / "chroma.log"))
        shared = {
            "DESKMATE_DATABASE_URL": database_url,
            "CHROMA_MODE": "server",
            "CHROMA_HOST": "127.0.0.1",
            "CHROMA_PORT": str(chroma_port),
        } | (settings or {})
        result = Stack(
            f"postgres x{replicas}",
            others={"chroma": psutil.Process(chroma.pid)},
            database_url=database_url,
            chroma_dir=root / "chroma",
        )
        for i in range(replicas):
            own = {} if i == 0 else {"DESKMATE_KB_DIR": ""}
            data_dir = root / f"replica-{i}"
            process, url = stack.enter_context(deskmate_serve(data_dir, root / f"serve-{i}.log", shared | own))
            result.urls.append(url)
            result.replicas.append(psutil.Process(process.pid))
            result.data_dirs.append(data_dir)
        for i in range(workers):
            process = stack.enter_context(deskmate_worker(root / f"worker-{i}", root / f"worker-{i}.log", shared))
            result.others[f"worker-{i}"] = psutil.Process(process.pid)
        yield result
