"""One process per embedded data directory, and a /ready that asks every store instead of trusting start-up."""

import signal
import sqlite3

import httpx
import pytest

from tests.conftest import FIXTURE_KB
from tests.e2e.deskmate_process import DeskmateProcess, deskmate_env, run_deskmate

pytestmark = pytest.mark.slow


def test_a_second_process_on_the_same_data_dir_refuses_naming_the_first_and_starts_once_it_is_gone(tmp_path):
    data = tmp_path / "data"
    with DeskmateProcess(data, tmp_path / "first.log") as first:
        second = run_deskmate(["serve", "--port", "1"], deskmate_env(data), timeout_s=60)
        ingest = run_deskmate(["ingest", str(FIXTURE_KB)], deskmate_env(data), timeout_s=60)
        assert httpx.get(f"{first.url}/ready", timeout=10).status_code == 200  # the first one is untouched
        first.stop(signal.SIGKILL)  # the kernel drops a dead holder's lock: no stale-file clean-up needed
    assert second.returncode == 3 and ingest.returncode == 3
    for refused in (second, ingest):
        assert f"in use by process {first.pid}" in refused.stderr
        assert "DESKMATE_DATA_DIR" in refused.stderr and "CHROMA_MODE=server" in refused.stderr
        assert "Traceback" not in refused.stderr
    with DeskmateProcess(data, tmp_path / "after.log") as after:
        assert httpx.get(f"{after.url}/ready", timeout=10).json()["status"] == "ready"


def test_ready_queries_every_store_and_fails_naming_the_broken_vector_store(tmp_path):
    data = tmp_path / "data"
    with DeskmateProcess(data, tmp_path / "serve.log", DESKMATE_KB_DIR=str(FIXTURE_KB)) as server:
        ready = httpx.get(f"{server.url}/ready", timeout=10).json()
        assert set(ready["stores"]) >= {"vector", "lexical", "sessions", "tickets", "traces"}
        assert all(probe["ok"] for probe in ready["stores"].values())
        assert ready["sizes"]["vector"] > 0 and ready["sizes"]["data_dir_total"] >= ready["sizes"]["sessions"]
        # a real fault from outside: the vector store's records vanish under the running process
        with sqlite3.connect(data / "chroma" / "chroma.sqlite3") as chroma:
            chroma.execute("DROP TABLE embedding_metadata")
        broken = httpx.get(f"{server.url}/ready", timeout=10)
    assert broken.status_code == 503
    body = broken.json()
    assert body["status"] == "unavailable" and not body["stores"]["vector"]["ok"]
    assert body["stores"]["sessions"]["ok"] and "vector" in body["detail"]


def test_a_failure_inside_a_store_answers_json_with_a_request_id_never_plain_text(tmp_path):
    data = tmp_path / "data"
    with DeskmateProcess(data, tmp_path / "serve.log") as server:
        with sqlite3.connect(data / "sessions.sqlite") as sessions:
            sessions.execute("DROP TABLE checkpoints")
        reply = httpx.post(f"{server.url}/chat", json={"message": "my printer is jammed"}, timeout=60)
        openai = httpx.post(
            f"{server.url}/v1/chat/completions",
            timeout=60,
            json={"model": "deskmate", "messages": [{"role": "user", "content": "my printer is jammed"}]},
        )
        ready = httpx.get(f"{server.url}/ready", timeout=10)
        server.stop()
    assert reply.status_code == 500 and reply.headers["content-type"] == "application/json"
    assert reply.json()["request_id"] == reply.headers["x-request-id"]
    assert openai.status_code == 500 and openai.json()["error"]["type"] == "server_error"
    assert ready.status_code == 503 and not ready.json()["stores"]["sessions"]["ok"]
    log = server.log()
    chained = log.count("The above exception was the direct cause") + log.count("During handling of the above")
    assert log.count("Traceback") - chained == 2  # once per failed request (its causes chained): not again
    assert reply.json()["request_id"] in log
