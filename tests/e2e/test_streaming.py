"""POST /chat/stream: Server-Sent Events through the real app, LLM tokens from a streaming OpenAI-compatible
server on 127.0.0.1, and a client that hangs up in the middle of a run."""

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient

from app.main import create_app
from tests.conftest import FIXTURE_KB
from tests.e2e.servers import OpenAICompatibleServer, _OpenAIHandler, _Server, completion, free_port

pytestmark = pytest.mark.slow
ANSWER = (
    "On Linux, install openconnect and run sudo openconnect vpn.example.test [1]. Approve the sign-in on your phone."
)
DECISION = '{"action": "answer", "reasoning": "the knowledge base has the Linux steps"}'


def parse_sse(text: str) -> list[tuple[str, dict]]:
    events = []
    for block in text.strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.split("\n"))
        events.append((lines["event"], json.loads(lines["data"])))
    return events


# --- through the app in-process ---------------------------------------------------------------------------
def test_a_streamed_turn_sends_node_progress_sources_and_the_same_envelope_as_chat(serve):
    with serve() as client:
        with client.stream("POST", "/chat/stream", json={"message": "How do I connect to the VPN on Linux?"}) as resp:
            assert resp.status_code == 200 and resp.headers["content-type"].startswith("text/event-stream")
            events = parse_sse(resp.read().decode())
        plain = client.post("/chat", json={"message": "How do I connect to the VPN on Linux?"}).json()
        kinds = [kind for kind, _ in events]
        assert kinds[0] == "start" and kinds[-1] == "message_complete"
        assert [d["name"] for k, d in events if k == "node"] == [
            "redact",
            "classify",
            "embed_query",
            "retrieve",
            "decide",
            "answer",
            "respond",
        ]
        assert all(d["duration_ms"] >= 0 for k, d in events if k == "node")
        assert kinds.index("sources") < kinds.index("message_complete")
        final = events[-1][1]
        assert set(final) == set(plain)  # the very envelope /chat returns
        assert final["answer"] == plain["answer"] and final["sources"] == plain["sources"]
        assert final["session_id"] == events[0][1]["session_id"] and final["trace_id"] == events[0][1]["trace_id"]
        assert dict(events)["sources"]["sources"] == final["sources"]
        assert dict(events)["content_chunk"]["text"] in final["answer"]
        assert final["timings"]["total_ms"] > 0
        # a streamed answer can be voted on like any other, and its trace is there
        vote = client.post(
            "/feedback", json={"session_id": final["session_id"], "message_id": final["message_id"], "rating": "up"}
        )
        assert vote.status_code == 201
        trace = client.get(f"/traces/{final['trace_id']}").json()
        assert trace["status"] == "ok" and "stream" in trace["tags"] and trace["feedback"]["rating"] == "up"


def test_a_bad_message_is_refused_before_any_event(serve):
    with serve() as client:
        empty = client.post("/chat/stream", json={"message": "   "})
        assert empty.status_code == 422 and "empty" in empty.json()["detail"]
        assert client.post("/chat/stream", json={"message": "hi", "user_os": "beos"}).status_code == 422


def test_a_failure_during_the_run_ends_the_stream_with_an_error_event(make_settings, real_embedder):
    class QueryEmbeddingFails:
        """Indexes the KB fine; every question fails to embed (a crashed model)."""

        dimension = real_embedder.dimension

        def embed_query(self, text):
            raise RuntimeError("the model process died")

        def embed_documents(self, texts):
            return real_embedder.embed_documents(texts)

        def count_tokens(self, text):
            return real_embedder.count_tokens(text)

    with TestClient(create_app(make_settings(), embedder=QueryEmbeddingFails()), base_url="http://localhost") as client:
        with client.stream("POST", "/chat/stream", json={"message": "how do I connect to the vpn"}) as resp:
            events = parse_sse(resp.read().decode())
        # the same failure on the OpenAI-compatible stream: an OpenAI-shaped error chunk, then [DONE]
        with client.stream(
            "POST",
            "/v1/chat/completions",
            json={
                "model": "deskmate",
                "stream": True,
                "messages": [{"role": "user", "content": "how do I connect to the vpn"}],
            },
        ) as resp:
            v1 = [line[6:] for line in resp.read().decode().split("\n") if line.startswith("data: ")]
        ready = client.get("/ready")  # the service started, and says what is broken
    assert ready.status_code == 503 and "embedding model" in ready.json()["detail"]
    kind, data = events[-1]
    assert kind == "error" and data["status"] == 503 and "try again" in data["detail"]
    assert "message_complete" not in [k for k, _ in events]
    error = json.loads(v1[-2])["error"]
    assert (error["code"], error["type"]) == ("503", "server_error") and "try again" in error["message"]
    assert v1[-1] == "[DONE]" and not any('"finish_reason": "stop"' in chunk for chunk in v1)


# --- over real HTTP, with a streaming LLM ------------------------------------------------------------------
class StreamingLLM(OpenAICompatibleServer):
    """An OpenAI-compatible server that streams its replies token by token (`"stream": true`), with a
    pause between tokens; it can be told to think for a while before the decision."""

    def __init__(self) -> None:
        self.replies, self.delay_s = [], 0.0
        self.token_gap_s = 0.05
        self.decision_delay_s = 0.0
        # when a test sets it: the answer's last word waits for it (a hang net bounds the wait), and
        # `last_word_released` says whether it came, i.e. whether the client saw the earlier words in time
        self.last_word_gate: threading.Event | None = None
        self.last_word_released: bool | None = None
        self.default_reply = self.reply_for
        _Server.__init__(self, _StreamingHandler)

    @staticmethod
    def reply_for(request: dict) -> str:
        prompt = request["body"]["messages"][-1]["content"]
        return DECISION if prompt.startswith("Decide the next action") else ANSWER


class _StreamingHandler(_OpenAIHandler):
    def do_POST(self) -> None:
        body = json.loads(self._body() or b"{}")
        record = {
            "path": self.path,
            "headers": {k.lower(): v for k, v in self.headers.items()},
            "body": body,
            "at": time.monotonic(),
        }
        self.owner.requests.append(record)
        reply = self.owner.next_reply(record)
        if reply == DECISION and self.owner.decision_delay_s:
            time.sleep(self.owner.decision_delay_s)
        if not body.get("stream"):
            self._send(200, json.dumps(completion(reply)).encode())
            return
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.end_headers()
        try:
            words = reply.split(" ")
            for i, word in enumerate(words):
                gate = self.owner.last_word_gate
                if reply == ANSWER and i == len(words) - 1 and gate is not None:
                    self.owner.last_word_released = gate.wait(60)
                delta = {"content": word if i == 0 else " " + word}
                chunk = {
                    "id": "c1",
                    "object": "chat.completion.chunk",
                    "created": 0,
                    "model": "stub",
                    "choices": [{"index": 0, "delta": delta, "finish_reason": None}],
                }
                self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                self.wfile.flush()
                time.sleep(self.owner.token_gap_s)
            done = {
                "id": "c1",
                "object": "chat.completion.chunk",
                "created": 0,
                "model": "stub",
                "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
            }
            self.wfile.write(f"data: {json.dumps(done)}\n\ndata: [DONE]\n\n".encode())
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass


@pytest.fixture(scope="module")
def llm():
    with StreamingLLM() as server:
        yield server


@pytest.fixture(scope="module")
def server(llm, tmp_path_factory):
    """`deskmate serve` as a user starts it, its LLM the streaming server above."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DESKMATE_", "GROQ_", "LANGFUSE_", "CHROMA_"))}
    env |= {
        "DESKMATE_DATA_DIR": str(tmp_path_factory.mktemp("data")),
        "DESKMATE_KB_DIR": str(FIXTURE_KB),
        "DESKMATE_LLM_BASE_URL": f"{llm.url}/v1",
        "DESKMATE_LLM_MODEL": "stub",
        "DESKMATE_LOG_LEVEL": "WARNING",
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "app.cli", "serve", "--port", str(port)],
        env=env,
        cwd=Path(__file__).resolve().parents[2],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.time() + 180
    try:
        while time.time() < deadline:
            try:
                if httpx.get(f"{base}/ready", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if process.poll() is not None:
                pytest.fail(f"server exited: {process.stderr.read()[-3000:]}")
            time.sleep(0.3)
        else:
            pytest.fail("server not ready within 180 s")
        yield base
    finally:
        process.terminate()
        process.wait(timeout=30)


@pytest.fixture
def gated_llm(llm):
    """The LLM holding its answer's last word until the test says the client has seen a token."""
    llm.last_word_gate, llm.last_word_released = threading.Event(), None
    yield llm
    llm.last_word_gate.set()
    llm.last_word_gate = None


def test_llm_tokens_arrive_one_by_one_while_the_answer_is_written(server, gated_llm):
    arrivals = []
    with httpx.stream(
        "POST", f"{server}/chat/stream", json={"message": "How do I connect to the VPN on Linux?"}, timeout=120
    ) as response:
        buffer = ""
        for text in response.iter_text():
            buffer += text
            while "\n\n" in buffer:
                block, buffer = buffer.split("\n\n", 1)
                lines = dict(line.split(": ", 1) for line in block.split("\n"))
                arrivals.append((lines["event"], json.loads(lines["data"])))
                if lines["event"] == "token":
                    gated_llm.last_word_gate.set()
    kinds = [kind for kind, _ in arrivals]
    tokens = [data for kind, data in arrivals if kind == "token"]
    assert len(tokens) == len(ANSWER.split(" "))
    assert "".join(d["text"] for d in tokens) == ANSWER  # the reply, not the decision's JSON
    assert {d["node"] for d in tokens} == {"answer"}
    # streamed, not delivered at the end: a token reached the client before the LLM wrote its last word
    assert gated_llm.last_word_released is True
    first_token = kinds.index("token")
    assert kinds[first_token - 1] == "node" and arrivals[first_token - 1][1]["name"] == "decide"
    assert kinds.index("message_complete") > max(i for i, k in enumerate(kinds) if k == "token")
    final = arrivals[-1][1]
    assert final["answer"].startswith(ANSWER) and final["sources"][0]["source"] == "kb/vpn-connect.md"
    trace = httpx.get(f"{server}/traces/{final['trace_id']}", timeout=10).json()
    assert [c["node"] for c in trace["llm_calls"]] == ["decide", "answer"]
    assert trace["decisions"][0]["decided_by"] == "llm"


def test_a_client_that_hangs_up_stops_the_run_and_frees_its_session(server, llm):
    llm.decision_delay_s = 3.0  # the LLM thinks about the decision; the client leaves meanwhile
    try:
        seen_before = len(llm.requests)
        session = None
        with httpx.Client(timeout=30) as client:
            with client.stream(
                "POST", f"{server}/chat/stream", json={"message": "How do I connect to the VPN on Linux?"}
            ) as response:
                for line in response.iter_lines():
                    if line.startswith("data: ") and '"session_id"' in line and session is None:
                        session = json.loads(line[6:])["session_id"]
                    if '"name": "retrieve"' in line:
                        break  # leaving the `with` closes the connection mid-run
        time.sleep(llm.decision_delay_s + 2.0)
        # the decision was asked for; the answer never was: the run stopped before its next step
        assert len(llm.requests) - seen_before == 1
        runs = httpx.get(f"{server}/traces", params={"session_id": session}, timeout=10).json()["traces"]
        assert len(runs) == 1 and runs[0]["status"] == "cancelled"
        assert runs[0]["path"][-1] == "decide" and "answer" not in runs[0]["path"]
    finally:
        llm.decision_delay_s = 0.0
    again = httpx.post(
        f"{server}/chat", json={"message": "How do I connect to the VPN on Linux?", "session_id": session}, timeout=30
    )
    # the session lock was released: a held one answers 409 after a 60 s wait, past this client's timeout
    assert again.status_code == 200
    assert again.json()["answer"].startswith(ANSWER)


def test_many_clients_leaving_at_once_leave_the_server_healthy(server, llm):
    def leave_early():
        with httpx.stream(
            "POST", f"{server}/chat/stream", json={"message": "how do I connect to the vpn"}, timeout=30
        ) as response:
            for line in response.iter_lines():
                if line.startswith("event: node"):
                    return

    threads = [threading.Thread(target=leave_early) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert httpx.get(f"{server}/ready", timeout=10).json()["status"] == "ready"
    reply = httpx.post(f"{server}/chat", json={"message": "How do I connect to the VPN on Linux?"}, timeout=30)
    assert reply.status_code == 200


def test_the_openai_client_gets_the_llm_tokens_as_they_are_written_then_the_finished_reply(server, gated_llm):
    from openai import OpenAI

    client = OpenAI(base_url=f"{server}/v1", api_key="unused", max_retries=0, timeout=120)
    arrivals = []
    for chunk in client.chat.completions.create(
        model="deskmate", stream=True, messages=[{"role": "user", "content": "How do I connect to the VPN on Linux?"}]
    ):
        if chunk.choices and chunk.choices[0].delta.content:
            arrivals.append(chunk.choices[0].delta.content)
            gated_llm.last_word_gate.set()
        final = chunk
    text = "".join(arrivals)
    envelope = final.model_extra["deskmate"]
    assert text == envelope["answer"] and text.startswith(ANSWER)  # tokens, then what the finished turn added
    # streamed while the LLM wrote, not replayed at the end: a piece arrived before the LLM's last word
    assert gated_llm.last_word_released is True
    assert final.choices[0].finish_reason == "stop" and envelope["sources"][0]["source"] == "kb/vpn-connect.md"


def test_a_replaced_reply_is_streamed_marked_after_the_tokens_it_replaces():
    from app.routers.openai_compat import REPLACED, rest_of

    assert rest_of("Steps [1].\n\n_Note._", "Steps [1].") == "\n\n_Note._"
    assert rest_of("From the knowledge base: …", "Ask someone [7].") == f"\n\n{REPLACED}\n\nFrom the knowledge base: …"
