"""POST /chat latency over real HTTP, no LLM: p50/p95 with 1 and 8 concurrent clients.

    python bench/chat_latency.py                 # starts `deskmate serve` on a free port with the bundled KB
    python bench/chat_latency.py --url http://127.0.0.1:8000   # measure a server you started yourself

Each request is a new conversation turn with a question from a fixed list (half start new sessions,
half continue one with a short follow-up). Target: p50 <= 50 ms at 1 client.
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parent.parent
QUESTIONS = [
    "How do I connect to the VPN on my Mac?", "My printer won't print", "how do I reset my password",
    "I lost my phone with the authenticator app", "where do I find my bitlocker recovery key",
    "How do I map the shared drive on windows", "my mic doesn't work in teams", "How do I report a phishing email",
    "how do I request software", "outlook is stuck in the outbox", "It's not working", "thanks!",
    "how do I find my MAC address", "laptop is very slow", "how do I connect to wifi on ubuntu",
]
FOLLOW_UPS = ["im on linux", "what about windows", "and on a mac?"]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def client_loop(base: str, n: int, offset: int, out: list[float], errors: list[str]) -> None:
    with httpx.Client(base_url=base, timeout=60) as client:
        session = None
        for i in range(n):
            question = QUESTIONS[(offset + i) % len(QUESTIONS)]
            body: dict = {"message": question}
            if i % 2 == 1 and session:
                body = {"message": FOLLOW_UPS[i % len(FOLLOW_UPS)], "session_id": session}
            started = time.perf_counter()
            response = client.post("/chat", json=body)
            out.append((time.perf_counter() - started) * 1000)
            if response.status_code != 200:
                errors.append(f"{response.status_code}: {response.text[:200]}")
            else:
                session = response.json()["session_id"]


def run(base: str, clients: int, per_client: int) -> tuple[list[float], list[str], float]:
    latencies: list[float] = []
    errors: list[str] = []
    threads = [threading.Thread(target=client_loop, args=(base, per_client, c * 7, latencies, errors))
               for c in range(clients)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return latencies, errors, time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--url", help="measure this running server instead of starting one")
    parser.add_argument("--requests", type=int, default=200, help="requests per scenario (default 200)")
    args = parser.parse_args()

    server = None
    base = args.url
    tmp = tempfile.TemporaryDirectory()
    if not base:
        port = free_port()
        env = {k: v for k, v in os.environ.items() if not k.startswith(("DESKMATE_", "GROQ_", "LANGFUSE_"))}
        env |= {"DESKMATE_DATA_DIR": tmp.name, "DESKMATE_LOG_LEVEL": "WARNING"}
        server = subprocess.Popen([sys.executable, "-m", "app.cli", "serve", "--port", str(port)], cwd=REPO, env=env,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        base = f"http://127.0.0.1:{port}"
        deadline = time.time() + 180
        while time.time() < deadline:
            try:
                if httpx.get(f"{base}/ready", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.3)
        else:
            server.kill()
            sys.exit("server did not become ready")
    try:
        run(base, 1, 20)  # warm-up
        print(f"POST /chat over HTTP at {base}, no LLM, {args.requests} requests per scenario")
        print(f"{'clients':>7} {'p50 ms':>7} {'p95 ms':>7} {'max ms':>7} {'req/s':>6} {'errors':>6}")
        for clients in (1, 8):
            latencies, errors, seconds = run(base, clients, max(1, args.requests // clients))
            print(f"{clients:>7} {statistics.median(latencies):>7.1f} {percentile(latencies, 95):>7.1f} "
                  f"{max(latencies):>7.1f} {len(latencies) / seconds:>6.1f} {len(errors):>6}")
            for error in errors[:3]:
                print("   ", error)
    finally:
        if server:
            server.terminate()
            server.wait(timeout=30)
        tmp.cleanup()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
