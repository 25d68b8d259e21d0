"""CHROMA_MODE=server against a real `chroma run` on 127.0.0.1."""

import shutil
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.e2e.servers import free_port

pytestmark = pytest.mark.slow


@pytest.fixture
def chroma_server(tmp_path):
    chroma = Path(sys.executable).parent / "chroma"
    if not chroma.exists():
        chroma = Path(shutil.which("chroma") or "chroma")
    port = free_port()
    process = subprocess.Popen(
        [str(chroma), "run", "--path", str(tmp_path / "chroma-server"), "--host", "127.0.0.1", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.time() + 60
    while time.time() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/api/v2/heartbeat", timeout=1).status_code == 200:
                break
        except httpx.HTTPError:
            time.sleep(0.2)
    else:
        process.kill()
        pytest.fail("chroma run did not start within 60 s")
    yield port
    process.terminate()
    process.wait(timeout=20)


def test_the_app_indexes_and_answers_through_a_chroma_server(serve, chroma_server):
    import chromadb

    settings = dict(chroma_mode="server", chroma_host="127.0.0.1", chroma_port=chroma_server)
    with serve(**settings) as client:
        reply = client.post("/chat", json={"message": "How do I connect to the VPN on my Mac?"}).json()
        assert reply["sources"][0]["source"] == "kb/vpn-connect.md"
        assert client.get("/ready").json()["documents"] == 4
    # the data lives in the server, not in the app's data dir
    remote = chromadb.HttpClient(host="127.0.0.1", port=chroma_server)
    assert remote.get_collection("deskmate_chunks").count() > 4


def test_an_unreachable_chroma_server_fails_start_up_with_a_clear_error(make_settings):
    from app.resources import build_resources
    from core.errors import IndexUnavailable

    with pytest.raises(IndexUnavailable, match="cannot open Chroma collection"):
        build_resources(make_settings(chroma_mode="server", chroma_port=free_port()))
