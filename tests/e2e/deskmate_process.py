"""A real `deskmate serve` in a subprocess on 127.0.0.1, as an operator runs it: environment in, log file out."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx

from tests.e2e.servers import free_port

REPO = Path(__file__).resolve().parents[2]
DESKMATE = [sys.executable, "-m", "app.cli"]
_CONFIG_PREFIXES = ("DESKMATE_", "GROQ_", "LANGFUSE_", "CHROMA_", "OPENAI_", "JIRA_")


def deskmate_env(data_dir: Path, **settings: str) -> dict:
    """The environment of a deskmate command: this machine's, minus any deskmate configuration, plus `settings`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(_CONFIG_PREFIXES)}
    env |= {"DESKMATE_DATA_DIR": str(data_dir), "DESKMATE_KB_DIR": ""} | settings
    return env


class DeskmateProcess:
    def __init__(self, data_dir: Path, log_path: Path, **settings: str) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = log_path
        self.env = deskmate_env(data_dir, **settings)
        self.process: subprocess.Popen | None = None

    @property
    def pid(self) -> int:
        return self.process.pid

    def start(self, timeout_s: float | None = None) -> DeskmateProcess:
        """Start it and wait until /ready answers. Start-up loads models and is slow on a busy machine, so by
        default the wait ends only when the server is ready or has exited (pytest-timeout bounds the test)."""
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(
                DESKMATE + ["serve", "--port", str(self.port)],
                env=self.env,
                cwd=REPO,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        while deadline is None or time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"deskmate serve exited with {self.process.returncode}:\n{self.log()[-3000:]}")
            try:
                if httpx.get(f"{self.url}/ready", timeout=5).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.3)
        raise RuntimeError(f"deskmate serve not ready within {timeout_s} s:\n{self.log()[-3000:]}")

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def stop(self, sig: int = signal.SIGTERM, timeout_s: float = 60) -> int:
        """Send `sig` and wait for the exit; its return code (SIGKILL after `timeout_s`)."""
        if self.process is None or self.process.poll() is not None:
            return self.process.returncode if self.process else 0
        self.process.send_signal(sig)
        try:
            return self.process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            raise

    def __enter__(self) -> DeskmateProcess:
        return self.start()

    def __exit__(self, *exc) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()


def run_deskmate(args: list[str], env: dict, timeout_s: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(DESKMATE + args, env=env, cwd=REPO, capture_output=True, text=True, timeout=timeout_s)
