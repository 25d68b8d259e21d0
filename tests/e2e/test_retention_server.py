"""A running server forgets idle conversations by itself, keeps each live one at its latest turn, and
`deskmate db vacuum` compacts the stores while it serves."""

import sqlite3
import time

import httpx
import pytest

from tests.conftest import FIXTURE_KB
from tests.e2e.deskmate_process import DeskmateProcess, deskmate_env, run_deskmate

pytestmark = pytest.mark.slow
IDLE_S = 8.0


def _checkpoints(data, session_id: str) -> int:
    with sqlite3.connect(data / "sessions.sqlite") as db:
        return db.execute("SELECT COUNT(*) FROM checkpoints WHERE thread_id = ?", (session_id,)).fetchone()[0]


def test_idle_sessions_expire_while_serving_and_a_live_one_resumes_at_its_latest_turn(tmp_path):
    data = tmp_path / "data"
    with DeskmateProcess(
        data,
        tmp_path / "serve.log",
        DESKMATE_KB_DIR=str(FIXTURE_KB),
        DESKMATE_SESSION_IDLE_DAYS=str(IDLE_S / 86400),
        DESKMATE_RETENTION_INTERVAL_S="1",
    ) as server:
        chat = lambda **body: httpx.post(f"{server.url}/chat", json=body, timeout=120)  # noqa: E731
        idle = chat(message="How do I connect to the VPN?").json()["session_id"]
        live = chat(message="My printer is not printing").json()
        turns = 1
        deadline = time.monotonic() + IDLE_S + 10
        while time.monotonic() < deadline:  # the live session keeps talking; the idle one does not
            chat(message="it is the one on the third floor", session_id=live["session_id"])
            turns += 1
            time.sleep(1.5)
        history = httpx.get(f"{server.url}/sessions/{live['session_id']}", timeout=30)
        # counted now: the vacuum below may take longer than the idle limit on a busy machine, and then the live
        # session has rightly gone idle too
        live_checkpoints = _checkpoints(data, live["session_id"])
        gone = httpx.get(f"{server.url}/sessions/{idle}", timeout=30)
        vacuum = run_deskmate(["db", "vacuum"], deskmate_env(data), timeout_s=120)
        ready = httpx.get(f"{server.url}/ready", timeout=30).json()
    assert gone.status_code == 404 and _checkpoints(data, idle) == 0
    assert live_checkpoints == 1
    assert history.status_code == 200, history.text
    assert "third floor" in str(history.json()) and len(history.json()["messages"]) >= 2
    assert vacuum.returncode == 0, vacuum.stderr
    assert "sessions:" in vacuum.stdout and "bytes" in vacuum.stdout
    assert ready["status"] == "ready" and ready["sizes"]["sessions"] > 0
