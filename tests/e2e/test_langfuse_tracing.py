"""Langfuse tracing at the protocol level: the real SDK exports OTLP to a recording server on 127.0.0.1."""

import base64
import gzip
import json
import socket
import threading
import time
from contextlib import ExitStack

import pytest

from tests.e2e.servers import RecordingServer, free_port

pytestmark = pytest.mark.slow
SECRET = "Zebra!Secret77"


def decoded_spans(requests):
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    spans = []
    for request in requests:
        if request["path"] != "/api/public/otel/v1/traces":
            continue  # scores go to /api/public/scores
        body = request["body"]
        body = gzip.decompress(body) if body[:2] == b"\x1f\x8b" else body
        for resource in ExportTraceServiceRequest.FromString(body).resource_spans:
            for scope in resource.scope_spans:
                for span in scope.spans:
                    attrs = {
                        a.key: [v.string_value for v in a.value.array_value.values]
                        if a.value.HasField("array_value")
                        else a.value.string_value
                        for a in span.attributes
                    }
                    spans.append({"name": span.name, "trace_id": span.trace_id.hex(), "attrs": attrs})
    return spans


def test_every_chat_and_indexing_run_is_traced_with_session_and_redacted_content(serve):
    with RecordingServer() as langfuse:
        with serve(langfuse_public_key="pk-lf-1", langfuse_secret_key="sk-lf-1", langfuse_host=langfuse.url) as client:
            reply = client.post(
                "/chat", json={"message": f"my password is {SECRET} and the VPN fails", "session_id": "sess-42"}
            ).json()
        # leaving the app shuts the SDK down, which flushes every pending span
    assert langfuse.requests, "nothing was exported"
    auth = langfuse.requests[0]["headers"]["authorization"]
    assert auth == "Basic " + base64.b64encode(b"pk-lf-1:sk-lf-1").decode()
    assert all(SECRET.encode() not in r["body"] for r in langfuse.requests)

    spans = decoded_spans(langfuse.requests)
    chat = [s for s in spans if s["trace_id"] == reply["trace_id"]]
    names = {s["name"] for s in chat}
    assert {"support", "redact", "classify", "embed_query", "retrieve", "decide", "respond"} <= names
    assert all(s["attrs"].get("session.id") == "sess-42" for s in chat)
    root = next(s for s in chat if s["name"] == "support")
    assert "[REDACTED:PASSWORD]" in root["attrs"]["langfuse.observation.input"]
    indexing_runs = [s for s in spans if s["name"] == "indexing"]
    assert len(indexing_runs) == 4  # one per fixture document
    assert all("bytes>" in s["attrs"]["langfuse.observation.input"] for s in indexing_runs)  # raw files not traced


def test_an_uploaded_document_holding_a_password_is_traced_with_the_password_removed(serve):
    document = (
        f"# Guest Wi-Fi\n\nThe guest network is ACME-Guest. The admin password is {SECRET} and the "
        "router sits in room 4.\n"
    ).encode()
    with RecordingServer() as langfuse:
        with serve(
            kb_dir=None, langfuse_public_key="pk-lf-2", langfuse_secret_key="sk-lf-2", langfuse_host=langfuse.url
        ) as client:
            assert client.post("/documents?wait=true", files={"file": ("guest-wifi.md", document)}).status_code in (
                200,
                201,
            )
    spans = decoded_spans(langfuse.requests)
    parse = [s for s in spans if s["name"] == "parse"]
    assert parse and "ACME-Guest" in parse[0]["attrs"]["langfuse.observation.output"]  # the parsed text is traced
    assert all(SECRET.encode() not in r["body"] for r in langfuse.requests)
    assert "[REDACTED:PASSWORD]" in parse[0]["attrs"]["langfuse.observation.output"]


def test_no_keys_means_nothing_is_sent(serve):
    with RecordingServer() as langfuse:
        with serve(langfuse_host=langfuse.url) as client:
            client.post("/chat", json={"message": "how do I connect to the vpn"})
            assert client.get("/ready").json()["tracing"] == "off"
    assert langfuse.requests == []


def test_an_unreachable_langfuse_does_not_break_the_chat(serve):
    dead = f"http://127.0.0.1:{free_port()}"
    with serve(langfuse_public_key="pk", langfuse_secret_key="sk", langfuse_host=dead) as client:
        response = client.post("/chat", json={"message": "how do I connect to the vpn"})
    assert response.status_code == 200 and response.json()["sources"]


def _payload(span: dict, key: str):
    return json.loads(span["attrs"][key])


def test_a_chat_trace_carries_user_tags_redacted_io_retrieval_scores_and_the_users_vote(serve):
    """What the Langfuse test asserts, over real HTTP on 127.0.0.1, decoding what the SDK sends:
    session and user id on every span of the run; the trace tagged with the action taken and the intent;
    the redacted message as input and the answer as output; the retrieved chunk ids with their scores on
    the retrieve span; a thumbs-down with its (redacted) reason as a `user_feedback` score on the trace;
    and, in no request at all, the typed password or the e-mail address."""
    with RecordingServer() as langfuse:
        with serve(langfuse_public_key="pk-lf-7", langfuse_secret_key="sk-lf-7", langfuse_host=langfuse.url) as client:
            reply = client.post(
                "/chat", json={"message": f"how do I connect to the vpn on linux? pw: {SECRET}", "session_id": "sess-7"}
            ).json()
            vote = client.post(
                "/feedback",
                json={
                    "session_id": "sess-7",
                    "message_id": reply["message_id"],
                    "rating": "down",
                    "reason": "wrong OS, mail me at pat@corp.example",
                },
            )
            assert vote.status_code == 201
    bodies = b"".join(r["body"] for r in langfuse.requests)
    assert SECRET.encode() not in bodies and b"pat@corp.example" not in bodies

    spans = [s for s in decoded_spans(langfuse.requests) if s["trace_id"] == reply["trace_id"]]
    assert spans and all(s["attrs"].get("session.id") == "sess-7" for s in spans)
    assert all(s["attrs"].get("user.id") == "anonymous" for s in spans)
    root = next(s for s in spans if s["name"] == "support")
    assert {"chat", f"action:{reply['action']}", "intent:informative"} <= set(root["attrs"]["langfuse.trace.tags"])
    assert "[REDACTED:PASSWORD]" in _payload(root, "langfuse.observation.input")["query"]
    traced_answer = _payload(root, "langfuse.observation.output")["answer"]
    assert (
        "sudo openconnect vpn.example.test" in traced_answer and "sudo openconnect vpn.example.test" in reply["answer"]
    )
    retrieved = _payload(next(s for s in spans if s["name"] == "retrieve"), "langfuse.observation.output")[
        "retrieved_chunks"
    ]
    scores = {c["chunk_id"]: c["score"] for c in retrieved}
    assert {s["chunk_id"] for s in reply["sources"]} <= set(scores)
    assert all(scores[s["chunk_id"]] == pytest.approx(s["score"], abs=1e-3) for s in reply["sources"])

    score_posts = [json.loads(r["body"]) for r in langfuse.requests if r["path"] == "/api/public/scores"]
    sent = [score for body in score_posts for score in (body if isinstance(body, list) else body.get("scores", [body]))]
    vote_score = next(s for s in sent if s.get("traceId") == reply["trace_id"])
    assert vote_score["name"] == "user_feedback" and vote_score["value"] == 0 and vote_score["dataType"] == "BOOLEAN"
    assert vote_score["comment"] == "wrong OS, mail me at [REDACTED:EMAIL_1]"


def test_status_checks_are_traced_too(serve):
    from tests.e2e.servers import StatusPageServer

    page = json.dumps(
        {
            "page": {
                "id": "p",
                "name": "Acme",
                "url": "https://status.acme.example",
                "updated_at": "2026-11-22T09:55:00Z",
            },
            "status": {"indicator": "none", "description": "All Systems Operational"},
            "components": [],
            "incidents": [],
            "scheduled_maintenances": [],
        }
    ).encode()
    with RecordingServer() as langfuse, StatusPageServer(page) as status_page:
        with serve(
            langfuse_public_key="pk-lf-status",
            langfuse_secret_key="sk",
            langfuse_host=langfuse.url,
            status_page_url=status_page.url,
        ) as client:
            assert client.get("/status").json()["ok"] is True
            local = client.get("/traces", params={"graph": "status"}).json()["traces"]
    assert local and local[0]["path"][0] == "fetch"
    status_roots = [s for s in decoded_spans(langfuse.requests) if s["name"] == "status"]
    assert status_roots and status_roots[0]["trace_id"] == local[0]["trace_id"]
    assert "status" in status_roots[0]["attrs"]["langfuse.trace.tags"]


class BlackHole:
    """Accepts connections on 127.0.0.1, reads them and never answers: a Langfuse that hangs.

    `pending()` is the connections whose sender has not given up yet (it closes its end when it does)."""

    def __init__(self) -> None:
        self._sock = socket.socket()
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(64)
        self.url = f"http://127.0.0.1:{self._sock.getsockname()[1]}"
        self._held: list[socket.socket] = []
        self._given_up: set[int] = set()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        self._sock.settimeout(0.2)
        while not self._stop.is_set():
            try:
                conn = self._sock.accept()[0]
            except OSError:
                continue
            with self._lock:
                self._held.append(conn)
                number = len(self._held) - 1
            threading.Thread(target=self._drain, args=(conn, number), daemon=True).start()

    def _drain(self, conn: socket.socket, number: int) -> None:
        try:
            while conn.recv(65536):
                pass
        except OSError:
            pass
        with self._lock:
            self._given_up.add(number)

    def accepted(self) -> int:
        with self._lock:
            return len(self._held)

    def pending(self, since: int = 0) -> set[int]:
        """The connections still waiting for an answer, of those accepted after the first `since`."""
        with self._lock:
            return set(range(since, len(self._held))) - self._given_up

    def close(self) -> None:
        self._stop.set()
        for conn in self._held:
            conn.close()
        self._sock.close()


def _wait_for(condition, failure: str, bound_s: float = 120.0):
    """Poll `condition` until it returns something true; the bound only ends a wait that would never end."""
    deadline = time.monotonic() + bound_s
    while not (found := condition()):
        assert time.monotonic() < deadline, failure
        time.sleep(0.02)
    return found


def test_a_hanging_langfuse_neither_slows_nor_breaks_the_chat(serve):
    hole = BlackHole()
    try:
        app = ExitStack()
        # a public key no other test uses: the SDK keeps one client per public key in a process
        client = app.enter_context(
            serve(langfuse_public_key="pk-lf-hole", langfuse_secret_key="sk", langfuse_host=hole.url)
        )
        client.post("/chat", json={"message": "how do I connect to the vpn"})  # its trace is exported, and hangs
        for _ in range(3):
            # an export the SDK has just started (older ones may be about to time out): the chat runs beside it
            seen = hole.accepted()
            hanging = _wait_for(lambda seen=seen: hole.pending(since=seen), "the SDK never tried to export to Langfuse")
            response = client.post("/chat", json={"message": "how do I connect to the vpn on linux"})
            assert response.status_code == 200 and response.json()["sources"]
            # the answer came back while the export was still waiting on Langfuse: the chat did not wait for it
            # (a chat that flushed would have returned only after the SDK gave that export up)
            assert hanging & hole.pending(), "the chat waited for the hanging export"
        # the final flush on shutdown gives up too; the bound only ends a shutdown that would never end
        shutdown = threading.Thread(target=app.close, daemon=True)
        shutdown.start()
        shutdown.join(120)
        assert not shutdown.is_alive(), "shutdown is still flushing to a Langfuse that never answers"
    finally:
        hole.close()


def test_a_misconfigured_langfuse_host_leaves_tracing_off_and_the_chat_working(serve):
    with serve(langfuse_public_key="pk-lf-bad", langfuse_secret_key="sk", langfuse_host="not a url at all") as client:
        response = client.post("/chat", json={"message": "how do I connect to the vpn"})
        assert response.status_code == 200 and response.json()["sources"]
