"""Teams: how fast deskmate acknowledges an activity (the Bot Framework gives up after 15 s) and how long the answer
card takes to reach the conversation, with 8 activities arriving at once, over real HTTP.

    python bench/teams.py                # `deskmate serve` (bundled KB) + a Bot Framework on 127.0.0.1
    python bench/teams.py --rounds 10 --concurrent 8

Each round sends `--concurrent` signed message activities at the same moment, each in a new personal chat with a
question never asked before in the run (so no answer comes from a cache); the acknowledgement is the HTTP
response to `POST /api/messages` (token check included), the answer is the moment the fake connector receives
deskmate's card for that chat. Target: acknowledgement p95 <= 300 ms.
"""

from __future__ import annotations

import argparse
import itertools
import json
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

from tests.e2e.teams_server import BotFrameworkServer, message_activity  # noqa: E402

APP_ID = "00000000-aaaa-bbbb-cccc-000000000001"
PASSWORD = "bench-bot-secret"
# distinct questions as people word them: a thing × what is wrong with it (never one twice in a run)
THINGS = [
    "vpn",
    "printer",
    "password",
    "laptop",
    "wifi",
    "email",
    "shared drive",
    "headset",
    "phone",
    "second monitor",
    "calendar",
    "badge",
]
TROUBLES = [
    "how do I set up my {}",
    "my {} stopped working this morning",
    "the {} keeps disconnecting",
    "who can help me with the {}",
    "is the {} down for everyone",
    "my {} is very slow since yesterday",
    "I get an error with the {}",
    "how do I reset the {}",
]


def questions():
    return (trouble.format(thing) for trouble, thing in itertools.product(TROUBLES, THINGS))


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--concurrent", type=int, default=8)
    args = parser.parse_args()
    if (args.rounds * args.concurrent + 1) > len(THINGS) * len(TROUBLES):
        parser.error(f"at most {len(THINGS) * len(TROUBLES) - 1} activities: each question is asked once")
    acks: list[float] = []
    answers: list[float] = []
    asked = questions()
    with (
        BotFrameworkServer(app_id=APP_ID, app_password=PASSWORD) as bot_framework,
        tempfile.TemporaryDirectory() as tmp,
    ):
        settings = {
            "DESKMATE_TEAMS_APP_ID": APP_ID,
            "DESKMATE_TEAMS_APP_PASSWORD": PASSWORD,
            "DESKMATE_TEAMS_OPENID_METADATA_URL": f"{bot_framework.url}/openid",
            "DESKMATE_TEAMS_TOKEN_URL": f"{bot_framework.url}/token",
            "DESKMATE_PUBLIC_URL": "https://deskmate.example.test",
        }
        with embedded(Path(tmp), settings) as stack, httpx.Client(timeout=30) as http:
            url = f"{stack.urls[0]}/api/messages"
            sent: dict[str, float] = {}
            lock = threading.Lock()

            def send(n: int, question: str) -> None:
                conversation = f"a:bench-{n:06d}"
                activity = message_activity(
                    activity_id=f"bench-{n:06d}",
                    conversation=conversation,
                    text=question,
                    user=f"29:bench-{n % 8}",
                    aad=f"aad-bench-{n % 8}",
                    service_url=bot_framework.url,
                )
                headers = bot_framework.signed_headers()
                started = time.perf_counter()
                with lock:
                    sent[conversation] = started
                response = http.post(url, content=json.dumps(activity), headers=headers)
                acks.append((time.perf_counter() - started) * 1000)
                assert response.status_code == 200, response.text

            # one warm-up activity (the metadata and keys, deskmate's connector token, the first turn)
            send(0, next(asked))
            bot_framework.wait_for(1)
            acks.clear()
            del sent["a:bench-000000"]
            total = 1
            for _ in range(args.rounds):
                batch = [(n, next(asked)) for n in range(total, total + args.concurrent)]
                with ThreadPoolExecutor(args.concurrent) as pool:
                    list(pool.map(lambda item: send(*item), batch))
                total += args.concurrent
                bot_framework.wait_for(total, timeout_s=300)
            posted = {p["conversation"]: p for p in bot_framework.posts()}
            for conversation, started in sent.items():
                answers.append((posted[conversation]["_arrived"] - started) * 1000)
    print(f"Teams activities: {args.rounds} rounds of {args.concurrent} at once ({len(acks)} activities), real HTTP")
    print(
        f"  acknowledgement     p50 {percentile(acks, 50):7.1f} ms   p95 {percentile(acks, 95):7.1f} ms"
        "   (target p95 <= 300 ms)"
    )
    print(f"  answer card posted  p50 {percentile(answers, 50):7.1f} ms   p95 {percentile(answers, 95):7.1f} ms")


if __name__ == "__main__":
    main()
