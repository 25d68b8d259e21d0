"""Real processes for end-to-end tests: `chroma run` and `deskmate serve`, started on free ports of
127.0.0.1, waited for, and stopped (or killed) by the test."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import httpx

from tests.e2e.servers import free_port

DESKMATE = [sys.executable, "-m", "app.cli"]
REPO = Path(__file__).resolve().parents[2]


def _wait_until(ready, process: subprocess.Popen, what: str, timeout_s: float | None) -> None:
    """Poll `ready` until it holds or the process exits; None: no deadline of its own (pytest-timeout bounds
    the test), since a start-up on a busy machine takes what it takes."""
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    while deadline is None or time.monotonic() < deadline:
        if process.poll() is not None:
            err = process.stderr.read() if process.stderr else ""
            raise RuntimeError(f"{what} exited with {process.returncode}: {err[-2000:]}")
        try:
            if ready():
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.3)
    process.kill()
    raise RuntimeError(f"{what} was not ready within {timeout_s:.0f} s")


def wait_for_ready(process: subprocess.Popen, url: str, what: str = "deskmate serve") -> None:
    """Until `url`/ready answers 200, or raise when the process exits first."""
    _wait_until(lambda: httpx.get(f"{url}/ready", timeout=2).status_code == 200, process, what, None)


class ChromaServer:
    """A `chroma run` persisting to `path` on `port` (a free one by default); `kill()` then `start()` again
    brings it back on the same port and path, as a restarted container does."""

    def __init__(self, path: Path, port: int | None = None) -> None:
        self.path, self.port = path, port or free_port()
        self.process: subprocess.Popen | None = None

    def start(self) -> ChromaServer:
        chroma = Path(sys.executable).parent / "chroma"
        if not chroma.exists():
            chroma = Path(shutil.which("chroma") or "chroma")
        self.process = subprocess.Popen(
            [str(chroma), "run", "--path", str(self.path), "--host", "127.0.0.1", "--port", str(self.port)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        _wait_until(
            lambda: httpx.get(f"http://127.0.0.1:{self.port}/api/v2/heartbeat", timeout=1).status_code == 200,
            self.process,
            "chroma run",
            None,
        )
        return self

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(timeout=20)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=20)


@contextmanager
def chroma_run(path: Path) -> Iterator[int]:
    """A `chroma run` server persisting to `path`; yields its port."""
    server = ChromaServer(path).start()
    try:
        yield server.port
    finally:
        server.stop()


class Replica:
    """One `deskmate serve` process; `kill()` is kill -9."""

    def __init__(self, name: str, env: dict[str, str]) -> None:
        self.name, self.port, self.env = name, free_port(), env
        self.url = f"http://127.0.0.1:{self.port}"
        self.process = subprocess.Popen(
            DESKMATE + ["serve", "--port", str(self.port)],
            env=env,
            cwd=REPO,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.http = httpx.Client(base_url=self.url, timeout=60)

    def wait_ready(self, timeout_s: float | None = None) -> Replica:
        _wait_until(
            lambda: self.http.get("/ready", timeout=2).status_code == 200,
            self.process,
            f"replica {self.name}",
            timeout_s,
        )
        return self

    def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=20)

    def stop(self) -> None:
        self.http.close()
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.kill()


def deskmate_env(data_dir: Path, **settings: str) -> dict[str, str]:
    """The environment of a `deskmate` process: nothing inherited from the developer's DESKMATE_* variables."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DESKMATE_", "GROQ_", "LANGFUSE_", "CHROMA_"))}
    env.update(DESKMATE_DATA_DIR=str(data_dir), DESKMATE_KB_DIR="", PYTHONPATH=str(REPO))
    env.update(settings)
    return env


class Worker:
    """One `deskmate worker` process, its log in a file; `kill()` is kill -9."""

    def __init__(self, name: str, env: dict[str, str], log_path: Path) -> None:
        self.name, self.log_path = name, log_path
        with open(log_path, "ab") as log:
            self.process = subprocess.Popen(
                DESKMATE + ["worker", "--poll", "0.2"], env=env, cwd=REPO, stdout=log, stderr=subprocess.STDOUT
            )

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def wait_ready(self, timeout_s: float | None = None) -> Worker:
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        while "deskmate worker" not in self.log() or " ready:" not in self.log():
            if self.process.poll() is not None:
                raise RuntimeError(f"worker {self.name} exited with {self.process.returncode}: {self.log()[-2000:]}")
            if deadline is not None and time.monotonic() > deadline:
                raise RuntimeError(f"worker {self.name} was not ready within {timeout_s:.0f} s")
            time.sleep(0.3)
        return self

    def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=20)

    def stop(self) -> int:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.kill()
        return self.process.returncode
