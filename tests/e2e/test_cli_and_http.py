"""The `deskmate` command as a user runs it: ingest with progress, ask, and serve over real HTTP."""

import os
import re
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from tests.conftest import FIXTURE_KB
from tests.e2e.processes import wait_for_ready
from tests.e2e.servers import free_port

pytestmark = pytest.mark.slow
DESKMATE = [sys.executable, "-m", "app.cli"]


def _env(data_dir: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DESKMATE_", "GROQ_", "LANGFUSE_", "CHROMA_"))}
    env.update(DESKMATE_DATA_DIR=str(data_dir), DESKMATE_KB_DIR="")
    return env


def test_ingest_then_ask(tmp_path):
    env = _env(tmp_path / "data")
    ingest = subprocess.run(
        DESKMATE + ["ingest", str(FIXTURE_KB)], env=env, capture_output=True, text=True, timeout=300
    )
    assert ingest.returncode == 0, ingest.stderr
    assert "4 new" in ingest.stdout and "indexing" in ingest.stderr  # the tqdm progress bar
    again = subprocess.run(
        DESKMATE + ["ingest", "--quiet", str(FIXTURE_KB)], env=env, capture_output=True, text=True, timeout=300
    )
    assert "4 unchanged" in again.stdout
    ask = subprocess.run(
        DESKMATE + ["ask", "--local", "--os", "linux", "how do I connect to the vpn"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert ask.returncode == 0, ask.stderr
    assert "sudo openconnect vpn.example.test" in ask.stdout and "[1] Connecting to the VPN" in ask.stdout


def test_ingest_reports_files_it_could_not_read(tmp_path):
    bad = tmp_path / "docs"
    bad.mkdir()
    (bad / "fake.pdf").write_bytes(b"not a pdf at all")
    (bad / "ok.md").write_text("# OK\n\nFine.\n")
    run = subprocess.run(
        DESKMATE + ["ingest", "--quiet", str(bad)],
        env=_env(tmp_path / "data"),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 1
    assert "1 failed" in run.stdout and "1 new" in run.stdout and "not a PDF" in run.stderr


def test_serve_answers_over_real_http(tmp_path):
    port = free_port()
    env = _env(tmp_path / "data") | {"DESKMATE_KB_DIR": str(FIXTURE_KB)}
    server = subprocess.Popen(
        DESKMATE + ["serve", "--port", str(port)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    try:
        base = f"http://127.0.0.1:{port}"
        wait_for_ready(server, base)  # a cold start on a busy machine takes what it takes; an exit fails at once
        reply = httpx.post(f"{base}/chat", json={"message": "How do I connect to the VPN on my Mac?"}, timeout=30)
        assert reply.status_code == 200
        assert reply.json()["sources"][0]["source"] == "kb/vpn-connect.md"
        listed = httpx.get(f"{base}/documents", timeout=10).json()["documents"]
        assert len(listed) == 4

        # `deskmate ask` asks this server (found through DESKMATE_PORT, as a user's shell would have it)
        ask = subprocess.run(
            DESKMATE + ["ask", "--os", "linux", "how do I connect to the vpn"],
            env=_env(tmp_path / "elsewhere") | {"DESKMATE_PORT": str(port)},
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert ask.returncode == 0, ask.stderr
        assert "sudo openconnect vpn.example.test" in ask.stdout
        doc_id = next(d["id"] for d in listed if d["source"] == "kb/vpn-connect.md")
        link = f"{base}/view/{doc_id}#section=Linux"
        assert f"[1] Connecting to the VPN › Linux\n    {link}\n" in ask.stdout
        assert "Sources:\n[1] Connecting to the VPN › Linux — kb/" not in ask.stdout  # links, not the text footer
        # the answer came from the server: the client kept no data folder of its own
        assert not (tmp_path / "elsewhere").exists()
        assert httpx.get(link.split("#")[0], timeout=10).status_code == 200
        sections = httpx.get(f"{base}/documents/{doc_id}/sections", timeout=10).json()["sections"]
        assert "Linux" in [s["section"] for s in sections]
        session = re.search(r"continue with --session (\w+)", ask.stdout).group(1)
        follow = subprocess.run(
            DESKMATE + ["ask", "--url", base, "--session", session, "and on windows?"],
            env=_env(tmp_path / "elsewhere"),
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert follow.returncode == 0 and "Windows" in follow.stdout, follow.stderr
        refused = subprocess.run(
            DESKMATE + ["ask", "--url", base, "x" * 5000],
            env=_env(tmp_path / "elsewhere"),
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert refused.returncode == 1 and "the limit is 4,000" in refused.stderr
    finally:
        server.terminate()
        server.wait(timeout=30)
    # the ready line says, in words, what is on and off
    log = server.stderr.read()
    assert "langfuse=off, local traces=on" in log and "4 documents" in log
    assert "Loading weights" not in log  # model loaders' progress bars are not log lines


def test_ask_without_a_server_says_how_to_start_one_and_loads_no_models(tmp_path):
    port = free_port()  # nothing listens there
    ask = subprocess.run(
        DESKMATE + ["ask", "--url", f"http://127.0.0.1:{port}", "how do I connect to the vpn"],
        env=_env(tmp_path / "data"),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert ask.returncode == 2 and ask.stdout == ""
    assert f"no deskmate answers at http://127.0.0.1:{port}" in ask.stderr
    assert "deskmate serve" in ask.stderr and "--local" in ask.stderr
    assert not (tmp_path / "data").exists()  # no model, no index, no data folder


def test_user_token_prints_a_token_the_api_accepts_and_refuses_one_that_would_live_too_long(tmp_path):
    from app.identity import verify_user_token

    secret = "usr-" + "Vb8Nq3Lx6Tz1Rk9Wm4Pc7Hs2Jd5Gf0Ya"
    env = _env(tmp_path / "data") | {"DESKMATE_USER_TOKEN_SECRET": secret, "DESKMATE_USER_TOKEN_MAX_TTL_S": "86400"}
    made = subprocess.run(
        DESKMATE + ["user-token", "--user", "alice", "--groups", "finance", "--ttl", "3600"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert made.returncode == 0, made.stderr
    caller = verify_user_token(made.stdout.strip(), secret, max_ttl_s=86400)
    assert caller.user_id == "alice" and caller.groups == frozenset({"finance"})
    forever = subprocess.run(
        DESKMATE + ["user-token", "--user", "alice", "--ttl", str(30 * 86400)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert forever.returncode == 2 and forever.stdout == ""
    assert "DESKMATE_USER_TOKEN_MAX_TTL_S" in forever.stderr and "at most 1 day (" in forever.stderr
