"""Two `deskmate serve` processes on one Postgres database and one Chroma server are interchangeable:
whichever replica a request lands on, it sees the same documents, sessions, tickets, votes and traces."""

from __future__ import annotations

import threading
import time
import uuid

import psycopg
import pytest

from app.adapters.vector_index import MANIFEST_TTL_S
from tests.e2e.processes import REPO, Replica, chroma_run, deskmate_env
from tests.postgres import scratch_database

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1200)]  # four real processes start on a shared 2-core box


@pytest.fixture(scope="module")
def replicas(tmp_path_factory):
    root = tmp_path_factory.mktemp("replicas")
    with scratch_database() as database_url, chroma_run(root / "chroma") as chroma_port:
        shared = dict(
            DESKMATE_DATABASE_URL=database_url,
            CHROMA_MODE="server",
            CHROMA_HOST="127.0.0.1",
            CHROMA_PORT=str(chroma_port),
            DESKMATE_SESSION_LOCK_WAIT_S="60",
            DESKMATE_LEXICAL_BACKEND="postgres",
        )
        # A indexes the bundled KB; B starts with no KB dir and serves what A indexed into the shared Chroma
        # A also runs ingestion jobs in-process (server mode's default is a separate `deskmate worker`,
        # tests/e2e/test_worker_jobs.py), so its uploads are indexed without a third model-loading process
        a = Replica(
            "A", deskmate_env(root / "a", DESKMATE_KB_DIR=str(REPO / "kb"), DESKMATE_INPROCESS_WORKER="true", **shared)
        )
        b = Replica("B", deskmate_env(root / "b", **shared))
        a.wait_ready()
        b.wait_ready()
        try:
            yield a, b
        finally:
            a.stop()
            b.stop()


def say(replica: Replica, message: str, session: str | None = None, **extra) -> dict:
    body = {"message": message, **extra} | ({"session_id": session} if session else {})
    response = replica.http.post("/chat", json=body)
    assert response.status_code == 200, f"{replica.name}: {response.status_code} {response.text}"
    return response.json()


def test_a_document_uploaded_on_one_replica_is_cited_on_the_other(replicas):
    a, b = replicas
    code = uuid.uuid4().hex[:6].upper()
    text = (
        f"# Booking a meeting room\n\nTo book a meeting room, open the Roomfinder portal, choose the floor "
        f"and enter the booking code {code}. Rooms are held for ten minutes.\n"
    )
    uploaded = a.http.post("/documents?wait=true", files={"file": ("meeting-rooms.md", text.encode(), "text/markdown")})
    assert uploaded.status_code == 201, uploaded.text
    time.sleep(MANIFEST_TTL_S + 0.5)  # the documented bound: other replicas' writes are visible within it
    reply = say(b, "How do I book a meeting room?")
    assert reply["sources"] and reply["sources"][0]["source"] == "uploads/meeting-rooms.md"
    assert code in reply["answer"]
    # the BM25 side is the one index both replicas share in Postgres, not a copy each
    with psycopg.connect(a.env["DESKMATE_DATABASE_URL"]) as conn:
        held = conn.execute("SELECT count(*) FROM lexical_chunks WHERE record LIKE %s", (f"%{code}%",)).fetchone()[0]
    assert held == 1


def test_a_troubleshooting_session_alternating_replicas_reaches_one_confirmed_ticket(replicas):
    a, b = replicas
    first = say(a, "my vpn keeps disconnecting", user_os="windows")
    session = first["session_id"]
    assert first["action"] == "troubleshoot" and first["troubleshooting"]["step"] == 1
    assert say(b, "still broken", session)["troubleshooting"]["step"] == 2
    assert say(a, "no luck", session)["troubleshooting"]["step"] == 3
    offer = say(b, "still the same", session)
    assert offer["ticket_event"] == "offered" and offer["ticket_offer"]["steps_tried"] == 3
    created = say(a, "yes", session)
    ticket_id = created["ticket"]["id"]
    assert created["ticket_event"] == "created"
    # the same escalation on the other replica finds that ticket instead of raising a second one
    again = say(b, "please open a ticket for the vpn", session)
    assert again["ticket_event"] == "existing" and again["ticket"]["id"] == ticket_id
    for replica in (a, b):
        listed = replica.http.get("/tickets", params={"session_id": session}).json()["tickets"]
        assert [t["id"] for t in listed] == [ticket_id]
    history = a.http.get(f"/sessions/{session}").json()
    assert history == b.http.get(f"/sessions/{session}").json()


def test_a_vote_on_one_replica_for_an_answer_given_on_the_other_counts(replicas):
    a, b = replicas
    answer = say(a, "How do I connect to the VPN on my Mac?")
    assert answer["action"] == "answer" and answer["message_id"]
    vote = b.http.post(
        "/feedback",
        json={
            "session_id": answer["session_id"],
            "message_id": answer["message_id"],
            "rating": "up",
            "reason": "clear steps",
        },
    )
    assert vote.status_code == 201, vote.text
    assert vote.json()["chunks"] >= 1
    again = a.http.post(
        "/feedback", json={"session_id": answer["session_id"], "message_id": answer["message_id"], "rating": "down"}
    )
    assert again.status_code == 200 and again.json()["status"] == "updated"


def test_the_trace_of_a_run_on_one_replica_opens_on_the_other(replicas):
    a, b = replicas
    answer = say(a, "How do I connect to the VPN on my Mac?")
    for _ in range(50):  # the trace writer is a background thread: the record lands within moments
        trace = b.http.get(f"/traces/{answer['trace_id']}")
        if trace.status_code == 200:
            break
        threading.Event().wait(0.1)
    assert trace.status_code == 200, trace.text
    assert trace.json()["session_id"] == answer["session_id"] and trace.json()["action"] == answer["action"]


def test_two_concurrent_turns_of_one_session_on_two_replicas_are_serialised(replicas):
    a, b = replicas
    session = say(a, "my printer won't print")["session_id"]
    results: dict[str, object] = {}

    def turn(replica: Replica, message: str) -> None:
        results[replica.name] = replica.http.post("/chat", json={"message": message, "session_id": session})

    threads = [
        threading.Thread(target=turn, args=(a, "still not printing")),
        threading.Thread(target=turn, args=(b, "no change")),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    statuses = sorted(r.status_code for r in results.values())
    assert statuses in ([200, 200], [200, 409])
    history = b.http.get(f"/sessions/{session}").json()
    users = [m["content"] for m in history["messages"] if m["role"] == "user"]
    answered = 1 + statuses.count(200)
    # every answered turn is in the history exactly once, each followed by its reply: none overwrote the other
    assert len(users) == answered and users[0] == "my printer won't print"
    assert sorted(users[1:]) == sorted(
        m for m, r in (("still not printing", results["A"]), ("no change", results["B"])) if r.status_code == 200
    )
    roles = [m["role"] for m in history["messages"]]
    assert roles == ["user", "assistant"] * answered


def test_a_replica_killed_mid_turn_leaves_the_session_whole_for_the_other(replicas, tmp_path):
    a, b = replicas
    session = say(b, "my printer won't print")["session_id"]
    # a third replica takes a turn and is killed -9 while it runs; the other replicas continue the session
    shared = {k: v for k, v in a.env.items() if k.startswith(("DESKMATE_DATABASE_URL", "CHROMA_"))}
    c = Replica("C", deskmate_env(tmp_path / "c", **shared))
    try:
        c.wait_ready()
        worker = threading.Thread(
            target=lambda: _ignore(
                lambda: c.http.post("/chat", json={"message": "still not printing", "session_id": session}, timeout=30)
            )
        )
        worker.start()
        threading.Event().wait(0.15)
        c.kill()
        worker.join(30)
    finally:
        c.stop()
    after = say(a, "still not printing", session)  # the advisory lock died with C: no wait, no 409
    assert after["session_id"] == session and after["troubleshooting"]["step"] in (2, 3)
    history = b.http.get(f"/sessions/{session}").json()["messages"]
    assert [m["role"] for m in history] == ["user", "assistant"] * (len(history) // 2) and len(history) % 2 == 0


def _ignore(call) -> None:
    try:
        call()
    except Exception:  # noqa: BLE001 - the process was killed under the request, on purpose
        pass
