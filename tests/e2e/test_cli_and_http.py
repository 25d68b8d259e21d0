"""The `deskmate` command as a user runs it: ingest with progress, ask, and serve over real HTTP."""

import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.conftest import FIXTURE_KB
from tests.e2e.servers import free_port

pytestmark = pytest.mark.slow
DESKMATE = [sys.executable, "-m", "app.cli"]


def _env(data_dir: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DESKMATE_", "GROQ_", "LANGFUSE_", "CHROMA_"))}
    env.update(DESKMATE_DATA_DIR=str(data_dir), DESKMATE_KB_DIR="")
    return env


def test_ingest_then_ask(tmp_path):
    env = _env(tmp_path / "data")
    ingest = subprocess.run(DESKMATE + ["ingest", str(FIXTURE_KB)], env=env, capture_output=True, text=True,
                            timeout=300)
    assert ingest.returncode == 0, ingest.stderr
    assert "4 new" in ingest.stdout and "indexing" in ingest.stderr  # the tqdm progress bar
    again = subprocess.run(DESKMATE + ["ingest", "--quiet", str(FIXTURE_KB)], env=env, capture_output=True,
                           text=True, timeout=300)
    assert "4 unchanged" in again.stdout
    ask = subprocess.run(DESKMATE + ["ask", "--os", "linux", "how do I connect to the vpn"], env=env,
                         capture_output=True, text=True, timeout=300)
    assert ask.returncode == 0, ask.stderr
    assert "sudo openconnect vpn.example.test" in ask.stdout and "[1] Connecting to the VPN" in ask.stdout


def test_ingest_reports_files_it_could_not_read(tmp_path):
    bad = tmp_path / "docs"
    bad.mkdir()
    (bad / "fake.pdf").write_bytes(b"not a pdf at all")
    (bad / "ok.md").write_text("# OK\n\nFine.\n")
    run = subprocess.run(DESKMATE + ["ingest", "--quiet", str(bad)], env=_env(tmp_path / "data"),
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 1
    assert "1 failed" in run.stdout and "1 new" in run.stdout and "not a PDF" in run.stderr


def test_serve_answers_over_real_http(tmp_path):
    port = free_port()
    env = _env(tmp_path / "data") | {"DESKMATE_KB_DIR": str(FIXTURE_KB)}
    server = subprocess.Popen(DESKMATE + ["serve", "--port", str(port)], env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True)
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.time() + 120
        while time.time() < deadline:
            try:
                if httpx.get(f"{base}/ready", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if server.poll() is not None:
                pytest.fail(f"server exited: {server.stderr.read()}")
            time.sleep(0.3)
        else:
            pytest.fail("server not ready within 120 s")
        reply = httpx.post(f"{base}/chat", json={"message": "How do I connect to the VPN on my Mac?"}, timeout=30)
        assert reply.status_code == 200
        assert reply.json()["sources"][0]["source"] == "kb/vpn-connect.md"
        listed = httpx.get(f"{base}/documents", timeout=10).json()["documents"]
        assert len(listed) == 4
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_user_token_prints_a_token_the_api_accepts_and_refuses_one_that_would_live_too_long(tmp_path):
    from app.identity import verify_user_token

    secret = "usr-" + "Vb8Nq3Lx6Tz1Rk9Wm4Pc7Hs2Jd5Gf0Ya"
    env = _env(tmp_path / "data") | {"DESKMATE_USER_TOKEN_SECRET": secret, "DESKMATE_USER_TOKEN_MAX_TTL_S": "86400"}
    made = subprocess.run(DESKMATE + ["user-token", "--user", "alice", "--groups", "finance", "--ttl", "3600"],
                          env=env, capture_output=True, text=True, timeout=60)
    assert made.returncode == 0, made.stderr
    caller = verify_user_token(made.stdout.strip(), secret, max_ttl_s=86400)
    assert caller.user_id == "alice" and caller.groups == frozenset({"finance"})
    forever = subprocess.run(DESKMATE + ["user-token", "--user", "alice", "--ttl", str(30 * 86400)], env=env,
                             capture_output=True, text=True, timeout=60)
    assert forever.returncode == 2 and forever.stdout == ""
    assert "DESKMATE_USER_TOKEN_MAX_TTL_S" in forever.stderr and "at most 1 day (" in forever.stderr
