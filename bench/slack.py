"""Slack: how fast deskmate acknowledges an event (Slack retries after 3 s) and how long the answer takes to
reach the thread, with 8 events arriving at once, over real HTTP.

    python bench/slack.py                # `deskmate serve` (bundled KB) + a Slack Web API on 127.0.0.1
    python bench/slack.py --rounds 10 --concurrent 8

Each round sends `--concurrent` signed `app_mention` events at the same moment, each a new thread with a
different question; the acknowledgement is the HTTP response to the event, the answer is the moment the
fake Web API receives deskmate's `chat.postMessage` for that thread. Target: acknowledgement p95 <= 300 ms.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from stack import embedded  # noqa: E402

from tests.e2e.slack_server import BOT_USER, SlackApiServer, event_body, signed_headers  # noqa: E402

TOKEN, SECRET = "xoxb-bench-0000", "bench-signing-secret-0123456789abcdef"
QUESTIONS = [
    "how do I connect to the vpn on my mac",
    "my printer won't print",
    "how do I reset my password",
    "where do I find my bitlocker recovery key",
    "my mic doesn't work in teams",
    "how do I report a phishing email",
    "outlook is stuck in the outbox",
    "how do I connect to wifi on ubuntu",
    "the shared drive is not showing up",
    "my laptop is very slow",
    "I lost my phone with the authenticator app",
    "how do I request new software",
]


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--concurrent", type=int, default=8)
    args = parser.parse_args()
    acks: list[float] = []
    answers: list[float] = []
    with SlackApiServer(token=TOKEN) as slack, tempfile.TemporaryDirectory() as tmp:
        settings = {
            "DESKMATE_SLACK_BOT_TOKEN": TOKEN,
            "DESKMATE_SLACK_SIGNING_SECRET": SECRET,
            "DESKMATE_SLACK_API_URL": slack.url,
            "DESKMATE_PUBLIC_URL": "https://deskmate.example.test",
        }
        with embedded(Path(tmp), settings) as stack, httpx.Client(timeout=30) as http:
            url = f"{stack.urls[0]}/slack/events"
            sent: dict[str, float] = {}
            lock = threading.Lock()

            def send(n: int) -> None:
                thread_ts = f"1700000000.{n:06d}"
                event = {
                    "type": "app_mention",
                    "user": "UBENCH",
                    "text": f"<@{BOT_USER}> {QUESTIONS[n % len(QUESTIONS)]}",
                    "channel": "CBENCH",
                    "ts": thread_ts,
                }
                body = event_body(event, event_id=f"EvBench{n:06d}")
                headers = signed_headers(SECRET, body, content_type="application/json")
                started = time.perf_counter()
                with lock:
                    sent[thread_ts] = started
                response = http.post(url, content=body, headers=headers)
                acks.append((time.perf_counter() - started) * 1000)
                assert response.status_code == 200, response.text

            # one warm-up event (the first auth.test and users.info calls, the first turn)
            send(0)
            slack.wait_for("chat.postMessage", 1)
            acks.clear()
            total = 1
            for _ in range(args.rounds):
                numbers = range(total, total + args.concurrent)
                with ThreadPoolExecutor(args.concurrent) as pool:
                    list(pool.map(send, numbers))
                total += args.concurrent
                slack.wait_for("chat.postMessage", total, timeout_s=300)
            posted = {p["thread_ts"]: p for p in slack.posts()}
            for thread_ts, started in sent.items():
                if thread_ts == "1700000000.000000":
                    continue
                arrived = posted[thread_ts]["_arrived"]
                answers.append((arrived - started) * 1000)
    print(f"Slack events: {args.rounds} rounds of {args.concurrent} at once ({len(acks)} events), real HTTP")
    print(
        f"  acknowledgement  p50 {percentile(acks, 50):7.1f} ms   p95 {percentile(acks, 95):7.1f} ms   (target p95 <= 300 ms)"
    )
    print(f"  answer in thread p50 {percentile(answers, 50):7.1f} ms   p95 {percentile(answers, 95):7.1f} ms")


if __name__ == "__main__":
    main()
