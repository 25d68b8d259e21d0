"""A full disk is an answer, not a hang; SIGTERM ends the process in bounded time; slow sockets are closed;
an over-size chunked upload is refused before the limit reaches the disk."""

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import httpx
import pytest

from tests.conftest import FIXTURE_KB
from tests.e2e.deskmate_process import DeskmateProcess
from tests.e2e.servers import OpenAICompatibleServer

pytestmark = pytest.mark.slow
MB = 1024 * 1024
GUIDE = b"# Resetting the badge reader\n\nHold the reset button for ten seconds until the light turns blue.\n"


def _tmpfs(mount: Path, size: str):
    """Mount a tmpfs of `size` at `mount` for one test (CI runs as root and can); skip with the reason elsewhere."""
    mount.mkdir()
    result = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(mount)], capture_output=True, text=True
    )
    if result.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (needs root): {result.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


@pytest.fixture
def small_disk(tmp_path):
    """A 64 MB tmpfs, the data directory's own disk."""
    yield from _tmpfs(tmp_path / "disk", "64m")


def _fill(disk: Path, leave_bytes: int) -> Path:
    filler = disk / "filler.bin"
    stats = os.statvfs(disk)
    with open(filler, "wb") as out:
        out.truncate(0)
        remaining = stats.f_bavail * stats.f_frsize - leave_bytes
        block = b"\0" * MB
        while remaining > 0:
            out.write(block[: min(MB, remaining)])
            remaining -= MB
    return filler


def test_a_full_disk_answers_507_keeps_serving_reads_and_recovers_without_a_restart(small_disk, tmp_path):
    with DeskmateProcess(small_disk / "data", tmp_path / "serve.log", DESKMATE_MIN_FREE_MB="16") as server:
        upload = httpx.post(
            f"{server.url}/documents?wait=true", files={"file": ("badge.md", GUIDE, "text/markdown")}, timeout=60
        )
        assert upload.status_code == 201, upload.text
        filler = _fill(small_disk, leave_bytes=8 * MB)
        time.sleep(1.5)  # free space is re-read at most once a second: the upload's check may still stand

        chats = [
            httpx.post(f"{server.url}/chat", json={"message": "how do I reset the badge reader?"}, timeout=60)
            for _ in range(3)
        ]
        refused_upload = httpx.post(
            f"{server.url}/documents?wait=true",
            timeout=60,
            files={"file": ("more.md", GUIDE.replace(b"ten", b"five"), "text/markdown")},
        )
        search = httpx.post(f"{server.url}/search", json={"query": "badge reader reset"}, timeout=60)
        documents = httpx.get(f"{server.url}/documents", timeout=60)
        ready = httpx.get(f"{server.url}/ready", timeout=60)

        filler.unlink()
        time.sleep(1.5)  # free space is re-read at most once a second
        recovered = httpx.post(f"{server.url}/chat", json={"message": "how do I reset the badge reader?"}, timeout=60)
        ready_after = httpx.get(f"{server.url}/ready", timeout=60).json()
        server.stop()

    for refused in chats + [refused_upload]:
        assert refused.status_code == 507
        detail = refused.json()["detail"]
        assert "DESKMATE_MIN_FREE_MB" in detail and str(small_disk / "data") in detail and "MB" in detail
    assert search.status_code == 200 and search.json()["results"][0]["source"] == "uploads/badge.md"
    assert documents.status_code == 200 and len(documents.json()["documents"]) == 1
    assert ready.status_code == 200 and ready.json()["status"] == "degraded"
    assert "DESKMATE_MIN_FREE_MB" in ready.json()["detail"]
    assert recovered.status_code == 200 and "ten seconds" in recovered.json()["answer"]
    assert ready_after["status"] == "ready"
    log = server.log()
    assert log.count("disk space low") == 1  # four refused writes within a minute: one WARNING
    assert "disk space back" in log


def test_sigterm_exits_in_bounded_time_with_a_reply_still_in_flight(tmp_path):
    with OpenAICompatibleServer(delay_s=120) as llm:
        llm.default_reply = "never sent in time"
        server = DeskmateProcess(
            tmp_path / "data",
            tmp_path / "serve.log",
            DESKMATE_SHUTDOWN_TIMEOUT_S="2",
            DESKMATE_LLM_BASE_URL=f"{llm.url}/v1",
            DESKMATE_LLM_MODEL="stub",
            DESKMATE_LLM_TIMEOUT_S="300",
            DESKMATE_KB_DIR=str(FIXTURE_KB),
        )
        with server:
            with httpx.Client(timeout=300) as client:
                pending = client.build_request(
                    "POST", f"{server.url}/chat", json={"message": "How do I connect to the VPN?"}
                )
                sock = socket.create_connection(("127.0.0.1", server.port))
                sock.sendall(
                    f"POST /chat HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\nContent-Type: application/json\r\n"
                    f"Content-Length: {len(pending.content)}\r\n\r\n".encode()
                    + pending.content
                )
                deadline = time.monotonic() + 60
                while not llm.requests and time.monotonic() < deadline:
                    time.sleep(0.1)
                assert llm.requests, "the chat never reached the LLM"
                # the LLM's reply is 120 s away; stop() raises after 60 s (the hang net): an exit at all means
                # the server gave up the reply in flight instead of waiting for it
                code = server.stop(signal.SIGTERM, timeout_s=60)
                sock.close()
    assert code is not None


def test_slow_header_and_idle_connections_are_closed(tmp_path):
    with DeskmateProcess(tmp_path / "data", tmp_path / "serve.log", DESKMATE_HEADER_TIMEOUT_S="2") as server:
        idle = socket.create_connection(("127.0.0.1", server.port))
        slow = socket.create_connection(("127.0.0.1", server.port))
        slow.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n")
        deadline = time.monotonic() + 120  # a hang net, not a speed limit: the test is that both get closed
        closed = set()
        for name, sock in (("idle", idle), ("slow", slow)):
            sock.settimeout(0.5)
            while time.monotonic() < deadline:
                if name == "slow":
                    try:
                        sock.sendall(b"X-Trickle: 1\r\n")  # one header line at a time, never finishing
                    except OSError:
                        closed.add(name)
                        break
                try:
                    if sock.recv(1024) == b"":
                        closed.add(name)
                        break
                except TimeoutError:
                    continue
                except OSError:
                    closed.add(name)
                    break
            sock.close()
        healthy = httpx.get(f"{server.url}/health", timeout=10)
    # the server closed both: the one that never sent a byte and the one still trickling headers
    assert closed == {"idle", "slow"}
    assert healthy.status_code == 200


@pytest.fixture
def spool_disk():
    """A tmpfs as the server's TMPDIR, where the multipart parser spools an upload: its use is what touched disk.
    At a short path: the parse workers' forkserver puts its socket under TMPDIR, and a socket path has at most
    107 bytes (a test's own tmp_path under a parallel run is already most of that)."""
    short = Path(tempfile.mkdtemp(prefix="spool-", dir="/tmp"))
    try:
        yield from _tmpfs(short / "m", "128m")
    finally:
        shutil.rmtree(short, ignore_errors=True)


class PeakUse(threading.Thread):
    """The most bytes in use on a file system above what it held when this was made: sampled every 5 ms while
    it runs, and whenever `sample()` is called (a thread a busy machine does not schedule can miss a spool
    that came and went)."""

    def __init__(self, path: Path) -> None:
        super().__init__(daemon=True)
        self.path, self.peak, self.done = path, 0, threading.Event()
        self.base = self._used()

    def _used(self) -> int:
        stats = os.statvfs(self.path)
        return (stats.f_blocks - stats.f_bfree) * stats.f_frsize

    def sample(self) -> int:
        self.peak = max(self.peak, self._used() - self.base)
        return self.peak

    def run(self) -> None:
        while not self.done.is_set():
            self.sample()
            time.sleep(0.005)


def wait_until(condition, failure: str, bound_s: float = 120.0) -> None:
    """Poll `condition` until it holds; the bound only ends a wait that would never end."""
    deadline = time.monotonic() + bound_s
    while not condition():
        assert time.monotonic() < deadline, failure
        time.sleep(0.02)


def test_a_chunked_over_size_upload_is_refused_at_the_limit_and_the_rest_is_never_read(spool_disk, tmp_path):
    limit = 4 * MB
    with DeskmateProcess(
        tmp_path / "data", tmp_path / "serve.log", DESKMATE_MAX_UPLOAD_BYTES=str(limit), TMPDIR=str(spool_disk)
    ) as server:
        # models and parse workers finish loading after the server is ready, and a loader may unpack into TMPDIR:
        # a first message and a first small upload wait for them, so what is measured below is the over-size
        # upload's spooling alone
        assert (
            httpx.post(
                f"{server.url}/chat",
                json={"message": "my printer on the third floor is not printing anything"},
                timeout=120,
            ).status_code
            == 200
        )
        warm = httpx.post(
            f"{server.url}/documents?wait=true",
            files={"file": ("warm.md", b"# Warm\n\nReady.\n", "text/markdown")},
            timeout=120,
        )
        assert warm.status_code in (200, 201, 202), warm.text
        peak = PeakUse(spool_disk)
        peak.start()
        sock = socket.create_connection(("127.0.0.1", server.port))
        boundary = "deskmate-boundary"
        sock.sendall(
            f"POST /documents HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\nTransfer-Encoding: chunked\r\n"
            f"Content-Type: multipart/form-data; boundary={boundary}\r\n\r\n".encode()
        )
        head = (
            f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="huge.txt"\r\n'
            f"Content-Type: text/plain\r\n\r\n"
        ).encode()
        sent = 0
        chunk = b"all work and no play " * 3000  # ~63 KB
        try:
            sock.sendall(b"%x\r\n%s\r\n" % (len(head), head))
            while sent < limit // 2:  # past the 1 MB the multipart parser keeps in memory, short of the limit
                sock.sendall(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                sent += len(chunk)
            # the server reads at its own pace: what it has read of those 2 MB is on the spool disk before more come
            wait_until(lambda: peak.sample() > 0, "the server never spooled the first 2 MB of the upload to TMPDIR")
            while sent < 50 * MB:
                sock.sendall(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                sent += len(chunk)
                peak.sample()
        except OSError:
            pass  # the server closed the connection: what we want
        sock.settimeout(10)
        reply = b""
        try:
            while not reply.rstrip().endswith(b"}"):
                part = sock.recv(65536)
                if not part:
                    break
                reply += part
        except OSError:
            pass
        sock.close()
        time.sleep(0.2)
        peak.done.set()
        peak.join()
        still_serving = httpx.get(f"{server.url}/health", timeout=10).status_code
    assert reply.startswith(b"HTTP/1.1 413"), reply[:200]
    assert b"upload limit" in reply and b'"detail"' in reply
    assert sent < 50 * MB, "the server read the whole 50 MB instead of closing the connection at the limit"
    assert 0 < peak.peak <= limit + 64 * 1024, f"{peak.peak:,} bytes spooled for a {limit:,}-byte limit"
    assert still_serving == 200
