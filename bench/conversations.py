"""Replay the product brief's example conversations and the escalation paths through POST /chat of a
real `deskmate serve`, and print every turn: what was said, what deskmate did, what it answered.

    python bench/conversations.py                                        # embedded defaults, no LLM
    python bench/conversations.py --llm-url http://127.0.0.1:8080/v1 --llm-model smollm2   # any OpenAI-compatible server

It starts `deskmate serve` (the command `make run` runs) on a free port with a fresh data folder and the
bundled knowledge base, and a Statuspage-speaking status page on 127.0.0.1 that it switches to an
outage for example 3. Each turn is checked against what the conversation must do (the action, the
step, the ticket event); the script prints ✓/✗ per check and exits 1 if any failed. The transcript is
what an issue's closing note quotes.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parent.parent


def status_summary(outage: bool) -> bytes:
    vpn = "major_outage" if outage else "operational"
    incident = {
        "id": "inc1",
        "name": "VPN connectivity issues",
        "status": "investigating",
        "impact": "major",
        "shortlink": "https://stspg.io/x",
        "updated_at": "2026-11-22T09:55:00Z",
        "components": [{"id": "c1", "name": "VPN", "status": vpn}],
        "incident_updates": [
            {
                "body": "We are investigating reports of VPN disconnects.",
                "created_at": "2026-11-22T09:55:00Z",
                "status": "investigating",
            }
        ],
    }
    return json.dumps(
        {
            "page": {
                "id": "p",
                "name": "Brightwave",
                "url": "https://status.brightwave.example",
                "updated_at": "2026-11-22T09:55:00Z",
            },
            "status": {
                "indicator": "major" if outage else "none",
                "description": "Partial System Outage" if outage else "All Systems Operational",
            },
            "components": [
                {"id": "c1", "name": "VPN", "status": vpn, "group": False},
                {"id": "c2", "name": "Email", "status": "operational", "group": False},
                {
                    "id": "c3",
                    "name": "SharePoint",
                    "status": "degraded_performance" if outage else "operational",
                    "group": False,
                },
            ],
            "incidents": [incident] if outage else [],
            "scheduled_maintenances": [],
        }
    ).encode()


class StatusPage:
    """A status page on 127.0.0.1 whose state the script switches."""

    def __init__(self) -> None:
        self.body = status_summary(False)
        page = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_GET(self) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(page.body)))
                self.end_headers()
                self.wfile.write(page.body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def outage(self, on: bool) -> None:
        self.body = status_summary(on)
        time.sleep(1.2)  # the status cache's TTL is 1 s here


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# (message, extra request fields, checks on the reply) — checks are (description, predicate)
def has(action):
    return (f"action={action}", lambda r: r["action"] == action)


CONVERSATIONS = [
    (
        "B1 factual VPN question",
        None,
        [
            (
                "How do I connect to the VPN on my Mac?",
                {},
                [
                    has("answer"),
                    (
                        "cites kb/vpn-setup.md",
                        lambda r: r["sources"] and r["sources"][0]["source"] == "kb/vpn-setup.md",
                    ),
                    ("names the VPN address", lambda r: "vpn.brightwave.example" in r["answer"]),
                ],
            ),
        ],
    ),
    (
        "B2 printer troubleshooting to resolution",
        None,
        [
            (
                "My printer won't print",
                {},
                [
                    has("troubleshoot"),
                    ("step 1 of ≥3", lambda r: r["troubleshooting"] and r["troubleshooting"]["step"] == 1),
                ],
            ),
            (
                "still not printing",
                {},
                [("step 2", lambda r: r["troubleshooting"] and r["troubleshooting"]["step"] == 2)],
            ),
            (
                "It works!",
                {},
                [("resolved", lambda r: r["troubleshooting"] and r["troubleshooting"]["status"] == "resolved")],
            ),
        ],
    ),
    (
        "B3 status check during an outage",
        "outage",
        [
            (
                "Is there an outage?",
                {},
                [
                    has("answer"),
                    ("names VPN and SharePoint", lambda r: "VPN" in r["answer"] and "SharePoint" in r["answer"]),
                ],
            ),
            (
                "my VPN keeps disconnecting",
                {"new_session": True},
                [("mentions the incident", lambda r: "VPN connectivity issues" in r["answer"])],
            ),
        ],
    ),
    (
        "B4 vague message",
        None,
        [
            (
                "It's not working",
                {},
                [has("clarify"), ("asks a question", lambda r: r["answer"].rstrip().endswith("?"))],
            ),
        ],
    ),
    (
        "B5 password redaction",
        None,
        [
            (
                "My password abc123 doesn't work for VPN",
                {},
                [
                    ("redaction notice", lambda r: bool(r["redaction_notice"])),
                    ("password not echoed", lambda r: "abc123" not in r["answer"]),
                ],
            ),
        ],
    ),
    (
        "Escalation: three failed steps → one confirmed ticket → closed when it works",
        None,
        [
            ("my vpn keeps disconnecting", {"user_os": "windows"}, [has("troubleshoot")]),
            ("still broken", {}, []),
            ("no luck", {}, []),
            ("still the same", {}, [("ticket offered", lambda r: r["ticket_event"] == "offered")]),
            ("yes", {}, [("ticket created", lambda r: r["ticket_event"] == "created" and r["ticket"])]),
            (
                "please open a ticket for the vpn",
                {},
                [("same ticket again", lambda r: r["ticket_event"] == "existing")],
            ),
            ("it works now", {}, [("ticket closed", lambda r: r["ticket_event"] == "closed")]),
        ],
    ),
    (
        "An OS named after a walkthrough keeps its topic",
        None,
        [
            ("Outlook keeps asking for my password", {}, [has("troubleshoot")]),
            (
                "and on my mac?",
                {},
                [
                    has("troubleshoot"),
                    ("on macOS", lambda r: r["user_os"] == "macos"),
                    ("same article", lambda r: r["sources"][0]["source"] == "kb/outlook-password-prompts.md"),
                ],
            ),
        ],
    ),
    (
        "A request: the KB's request procedure first, the request offered beside it",
        None,
        [
            (
                "I need Adobe Acrobat Pro installed",
                {},
                [
                    ("cites the request section", lambda r: r["sources"][0]["section"].startswith("Request software")),
                    ("request offered", lambda r: r["ticket_event"] == "offered" and "open a request" in r["answer"]),
                ],
            ),
            (
                "Great, please do, it's urgent!",
                {},
                [("created at high priority", lambda r: r["ticket_event"] == "created" and "high" in r["answer"])],
            ),
        ],
    ),
    (
        "A person, shouted, mid-walkthrough",
        None,
        [
            ("the wifi keeps dropping in the office", {}, [has("troubleshoot")]),
            (
                "STOP WASTING MY TIME AND GIVE ME A HUMAN",
                {},
                [("handoff offered", lambda r: r["ticket_event"] == "offered" and "a person" in r["answer"])],
            ),
        ],
    ),
    (
        "No IT topic, another language",
        None,
        [
            (
                "what's on the canteen menu today?",
                {},
                [has("converse"), ("no ticket", lambda r: not r["ticket_offer"])],
            ),
            (
                "Mein Drucker im zweiten Stock druckt nicht mehr",
                {"new_session": True},
                [("ticket offered in German", lambda r: r["ticket_event"] == "offered" and "Ticket" in r["answer"])],
            ),
        ],
    ),
    (
        "Ticket status question",
        None,
        [
            ("please open a ticket, teams screen sharing is greyed out", {}, []),
            ("yes", {}, [("ticket created", lambda r: r["ticket_event"] == "created")]),
            ("what's the status of my ticket?", {}, [has("search_tickets")]),
        ],
    ),
]


def short(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def explain(client: httpx.Client, trace_id: str) -> str:
    """How the turn was decided and which LLM calls it made (from deskmate's own trace of the run)."""
    for _ in range(20):
        trace = client.get(f"/traces/{trace_id}")
        if trace.status_code == 200:
            break
        time.sleep(0.1)
    else:
        return "(no trace)"
    record = trace.json()
    decisions = "; ".join(f"{d['decided_by']}: {short(d['reasoning'], 140)}" for d in record.get("decisions", []))
    calls = ", ".join(
        f"{c['node']} {c['duration_ms'] / 1000:.1f}s{' ERROR ' + short(c['error'], 60) if c.get('error') else ''}"
        for c in record.get("llm_calls", [])
    )
    return f"decisions: {decisions or '-'} | llm calls: {calls or 'none'}"


def run(base_url: str, page: StatusPage, answer_chars: int, show_trace: bool = False) -> tuple[int, int]:
    passed = failed = 0
    with httpx.Client(base_url=base_url, timeout=180) as client:
        for title, setting, turns in CONVERSATIONS:
            print(f"\n## {title}")
            page.outage(setting == "outage") if setting == "outage" else None
            session = None
            for message, extra, checks in turns:
                extra = dict(extra)
                if extra.pop("new_session", False):
                    session = None
                body = {"message": message, **extra} | ({"session_id": session} if session else {})
                started = time.perf_counter()
                response = client.post("/chat", json=body)
                took = (time.perf_counter() - started) * 1000
                if response.status_code != 200:
                    print(f"  user: {message}\n  ✗ HTTP {response.status_code}: {response.text[:200]}")
                    failed += 1
                    continue
                reply = response.json()
                session = reply["session_id"]
                flow = reply.get("troubleshooting")
                state = [f"action={reply['action']}"]
                if flow:
                    state.append(f"step {flow['step']}/{flow['total']} {flow['status']}")
                if reply.get("ticket_event"):
                    state.append(
                        f"ticket {reply['ticket_event']}" + (f" {reply['ticket']['id']}" if reply.get("ticket") else "")
                    )
                if reply.get("fallback_notice"):
                    state.append(f"fallback: {short(reply['fallback_notice'], 80)}")
                print(f"  user: {message}" + (f"  {extra}" if extra else ""))
                print(f"  deskmate [{', '.join(state)}; {took:.0f} ms]: {short(reply['answer'], answer_chars)}")
                if show_trace:
                    print(f"    ({explain(client, reply['trace_id'])})")
                for description, check in checks:
                    try:
                        ok = bool(check(reply))
                    except (KeyError, TypeError, IndexError):
                        ok = False
                    passed, failed = passed + ok, failed + (not ok)
                    print(f"    {'✓' if ok else '✗'} {description}")
            if setting == "outage":
                page.outage(False)
    return passed, failed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--llm-url", help="OpenAI-compatible base URL (…/v1); default: no LLM (extractive)")
    parser.add_argument("--llm-model", default="local", help="model name sent to that server")
    parser.add_argument("--answer-chars", type=int, default=400, help="how much of each answer to print")
    parser.add_argument("--show-trace", action="store_true", help="print each turn's decisions and LLM calls")
    args = parser.parse_args()

    page = StatusPage()
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="deskmate-conversations-") as data_dir:
        env = {
            **os.environ,
            "DESKMATE_DATA_DIR": data_dir,
            "DESKMATE_STATUS_PAGE_URL": page.url,
            "DESKMATE_STATUS_TTL_S": "1",
            "DESKMATE_LOG_LEVEL": "WARNING",
        }
        if args.llm_url:
            env |= {
                "DESKMATE_LLM_PROVIDER": "openai",
                "DESKMATE_LLM_BASE_URL": args.llm_url,
                "DESKMATE_LLM_MODEL": args.llm_model,
            }
        server = subprocess.Popen(
            [sys.executable, "-m", "app.cli", "serve", "--port", str(port)],
            cwd=REPO,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        base_url = f"http://127.0.0.1:{port}"
        try:
            started = time.perf_counter()
            while True:
                if server.poll() is not None:
                    print(server.stderr.read()[-3000:], file=sys.stderr)
                    return 2
                try:
                    if httpx.get(f"{base_url}/ready", timeout=2).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                if time.perf_counter() - started > 600:
                    print("deskmate did not become ready within 600 s", file=sys.stderr)
                    return 2
                time.sleep(0.5)
            health = httpx.get(f"{base_url}/health").json()
            print(
                f"# deskmate on {base_url} — ready in {time.perf_counter() - started:.0f} s; "
                f"llm: {health.get('llm', args.llm_url or 'none')}"
            )
            passed, failed = run(base_url, page, args.answer_chars, args.show_trace)
        finally:
            server.terminate()
            try:
                server.wait(30)
            except subprocess.TimeoutExpired:
                server.kill()
    print(f"\n{passed} checks passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
