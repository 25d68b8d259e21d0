"""Upload every file of a hostile-PDF collection to a real deskmate over HTTP; report what happened to each.

    python bench/hostile_uploads.py --data ../shared/data/malformed_files_qpdf
    python bench/hostile_uploads.py --data ../shared/data/malformed_files_qpdf --url http://127.0.0.1:8000

Starts `deskmate serve` on a free port with an empty data folder (no bundled KB unless --with-kb), then
POSTs each `pdfs/*.pdf` to /documents and prints its status, seconds and the start of the reply. Checks
that a refusal left the chunk count unchanged, and that the server is alive afterwards; prints the
resident memory of the server and of its parse processes before and after.
Target: no upload takes more than 5 s, every reply is 201/200 or a 4xx with a message, server alive.
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parent.parent
TARGET_SECONDS = 5.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _rss_kb(pid: int) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def _descendants(pid: int) -> list[int]:
    """Every process below `pid` (the forkserver, its parse workers, the resource tracker); Linux only."""
    parents: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            parents.setdefault(ppid, []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        for child in parents.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def memory(pid: int | None) -> str:
    if pid is None or _rss_kb(pid) is None:
        return "n/a"
    children = [_rss_kb(c) or 0 for c in _descendants(pid)]
    return f"server {_rss_kb(pid) / 1024:.0f} MB, {len(children)} parse processes {sum(children) / 1024:.0f} MB"


def start_server(data_dir: str, with_kb: bool) -> tuple[subprocess.Popen, str, Path]:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DESKMATE_", "GROQ_", "LANGFUSE_", "CHROMA_"))}
    env |= {"DESKMATE_DATA_DIR": data_dir, "DESKMATE_LOG_LEVEL": "WARNING"}
    if not with_kb:
        env["DESKMATE_KB_DIR"] = ""
    log_path = Path(data_dir) / "server.log"
    server = subprocess.Popen(
        [sys.executable, "-m", "app.cli", "serve", "--port", str(port)],
        cwd=REPO,
        env=env,
        stdout=log_path.open("wb"),
        stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.time() + 180
    while time.time() < deadline:
        if server.poll() is not None:
            sys.exit(f"server exited with {server.returncode}:\n{log_path.read_text()[-2000:]}")
        try:
            if httpx.get(f"{base}/ready", timeout=2).status_code == 200:
                return server, base, log_path
        except httpx.HTTPError:
            pass
        time.sleep(0.3)
    server.kill()
    sys.exit("server did not become ready in 180 s")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", required=True, type=Path, help="the malformed_files_qpdf folder (holding pdfs/*.pdf)")
    parser.add_argument("--url", help="upload to this running server instead of starting one")
    parser.add_argument("--with-kb", action="store_true", help="index the bundled KB at start-up, as `make run` does")
    args = parser.parse_args()
    files = sorted((args.data / "pdfs").glob("*.pdf")) or sorted(args.data.glob("*.pdf"))
    if not files:
        sys.exit(f"no PDFs under {args.data}")

    tmp = tempfile.TemporaryDirectory()
    server, base, log_path = (None, args.url.rstrip("/"), None) if args.url else start_server(tmp.name, args.with_kb)
    pid = server.pid if server else None
    rss_before = memory(pid)
    outcomes: list[tuple[str, int, float, str]] = []
    index_changed_on_refusal: list[str] = []
    try:
        with httpx.Client(base_url=base, timeout=60) as client:
            print(f"uploading {len(files)} files from {args.data} to {base}")
            print(f"{'file':<36} {'status':>6} {'seconds':>7}  reply")
            for path in files:
                chunks_before = client.get("/ready").json().get("chunks")
                started = time.perf_counter()
                try:
                    response = client.post(
                        "/documents?wait=true", files={"file": (path.name, path.read_bytes(), "application/pdf")}
                    )
                    status, body = response.status_code, response.json()
                except (httpx.HTTPError, ValueError) as exc:
                    status, body = 0, {"detail": f"{type(exc).__name__}: {exc}"}
                seconds = time.perf_counter() - started
                if 200 <= status < 300:
                    reply = f"indexed, {body['document']['chunks']} chunk(s), title {body['document']['title']!r}"
                else:
                    reply = str(body.get("detail", body))
                    if status and client.get("/ready").json().get("chunks") != chunks_before:
                        index_changed_on_refusal.append(path.name)
                outcomes.append((path.name, status, seconds, reply))
                print(f"{path.name:<36} {status:>6} {seconds:>7.2f}  {reply[:90]}")
            alive = (server is None or server.poll() is None) and client.get("/health").status_code == 200
    except httpx.HTTPError as exc:
        print(f"server stopped answering: {exc}")
        alive = False
    finally:
        rss_after = memory(pid)
        if server:
            server.terminate()
            try:
                server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                server.kill()
            if not alive and log_path:
                print(log_path.read_text()[-3000:])
        tmp.cleanup()

    indexed = sum(1 for _, s, _, _ in outcomes if 200 <= s < 300)
    refused = sum(1 for _, s, _, _ in outcomes if 400 <= s < 500)
    other = [(n, s) for n, s, _, _ in outcomes if not (200 <= s < 300 or 400 <= s < 500)]
    slowest = max(outcomes, key=lambda o: o[2]) if outcomes else ("-", 0, 0.0, "")
    by_status: dict[int, int] = {}
    for _, status, _, _ in outcomes:
        by_status[status] = by_status.get(status, 0) + 1
    print()
    print(f"files: {len(outcomes)}; indexed: {indexed}; refused (4xx): {refused}; other: {len(other)} {other}")
    print(f"by status: {', '.join(f'{s}: {n}' for s, n in sorted(by_status.items()))}")
    mean = sum(o[2] for o in outcomes) / max(1, len(outcomes))
    print(f"max seconds: {slowest[2]:.2f} ({slowest[0]}); mean {mean:.3f}")
    print(f"index changed by a refusal: {index_changed_on_refusal or 'never'}")
    print(f"server alive afterwards: {alive}")
    print(f"memory before: {rss_before}")
    print(f"memory after:  {rss_after}")
    ok = alive and not other and not index_changed_on_refusal and slowest[2] <= TARGET_SECONDS
    print(
        f"target (none > {TARGET_SECONDS:g} s, all 2xx/4xx, index untouched by refusals, server alive): "
        f"{'MET' if ok else 'NOT MET'}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
