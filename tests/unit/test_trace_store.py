"""The local trace store: what a graph run leaves behind (RunRecorder), and how it is kept (TraceStore)."""

import base64
import json
import sqlite3
import threading
import time
import zlib
from typing import TypedDict

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.graph import END, START, StateGraph

from app.adapters.memory import SessionStore
from app.adapters.redactor import PatternRedactor
from app.adapters.traces import (
    _BINARY_ZDICT,
    _ZDICT,
    RecordingTracer,
    RunRecorder,
    TraceStore,
    recorder_in,
    redact_value,
    shape,
    unpack_record,
)
from app.adapters.tracing import NullTracer, run_config
from app.chat_service import ChatService, TurnRequest
from core.errors import EmbeddingError
from graphs.support import build_support_graph

SECRET = "Zebra!Secret77"


class CountingRedactor:
    """The pattern redactor, counting its calls; can be held up to stall the writer thread."""

    def __init__(self) -> None:
        self.inner = PatternRedactor()
        self.calls = 0
        self.gate = threading.Event()
        self.gate.set()

    def redact(self, text):
        self.gate.wait(10)
        self.calls += 1
        return self.inner.redact(text)


@pytest.fixture
def store(tmp_path):
    trace_store = TraceStore(tmp_path / "traces.sqlite", redactor=PatternRedactor())
    yield trace_store
    trace_store.close()


@pytest.fixture
def chat(tmp_path, fake_kb_context, store):
    sessions = SessionStore(tmp_path / "sessions.sqlite")
    service = ChatService(
        build_support_graph(sessions.checkpointer), fake_kb_context(), sessions, RecordingTracer(NullTracer(), store)
    )
    yield service
    sessions.close()


def test_a_chat_turn_leaves_its_ordered_path_node_timings_decision_and_candidates(chat, store):
    turn = chat.ask("how do I connect to the vpn on linux")
    assert store.flush()
    record = store.get(turn.trace_id)
    assert record["graph"] == "support" and record["status"] == "ok" and record["session_id"] == turn.session_id
    assert record["path"] == ["redact", "classify", "embed_query", "retrieve", "decide", "answer", "respond"]
    assert [n["name"] for n in record["nodes"]] == record["path"]
    previous_end = 0.0
    for node in record["nodes"]:  # in order, not overlapping, each with a measured duration
        assert node["start_ms"] >= previous_end - 0.01 and node["duration_ms"] >= 0
        previous_end = node["end_ms"]
    retrieve = record["nodes"][3]
    assert (
        retrieve["output_keys"] == ["articles", "confidence", "question_type", "retrieved_chunks", "search_count"]
        and "query_embedding" in retrieve["input_keys"]
    )
    assert record["decisions"] == [
        {"action": "answer", "decided_by": "policy", "reasoning": turn.output["decision_reasoning"]}
    ]
    candidates = record["retrieval"][0]["candidates"]
    assert [c["chunk_id"] for c in candidates] == [c["chunk_id"] for c in turn.output["retrieved_chunks"]]
    assert candidates[0]["score"] == round(turn.output["retrieved_chunks"][0]["score"], 4)
    assert "text" not in candidates[0]  # ids, titles and scores; never the chunk bodies
    assert record["action"] == "answer" and record["intent"] == turn.output["intent"]


def test_the_turn_reports_per_stage_timings_that_add_up_to_no_more_than_the_total(chat):
    turn = chat.ask("how do I connect to the vpn on linux")
    timings = turn.timings
    assert set(timings) == {"embedding_ms", "retrieval_ms", "decision_ms", "generation_ms", "total_ms"}
    stages = timings["embedding_ms"] + timings["retrieval_ms"] + timings["decision_ms"] + timings["generation_ms"]
    assert 0 < stages <= timings["total_ms"]
    assert all(value > 0 for value in timings.values())


def test_no_secret_and_no_embedding_reaches_the_trace_database(chat, store, tmp_path):
    turn = chat.ask(f"my password is {SECRET} and I can't connect to the vpn")
    assert store.flush()
    raw = (tmp_path / "traces.sqlite").read_bytes() + b"".join(
        p.read_bytes() for p in tmp_path.glob("traces.sqlite-*")
    )  # the WAL too
    assert SECRET.encode() not in raw
    with sqlite3.connect(store.path) as db:  # the records compressed in that file, read back: redacted too
        stored = [unpack_record(row[0]) for row in db.execute("SELECT packed FROM runs")]
    assert stored and all(SECRET not in text for text in stored)
    record = store.get(turn.trace_id)
    assert "[REDACTED:PASSWORD]" in record["input"]["query"]
    assert record["nodes"][2]["output"]["query_embedding"] == "<256 floats>"


def test_a_record_is_stored_compressed_with_the_candidates_once_and_node_outputs_citing_them_by_id(chat, store):
    turn = chat.ask("how do I connect to the vpn on linux")
    assert store.flush()
    with sqlite3.connect(store.path) as db:
        text, stored = db.execute("SELECT record, packed FROM runs WHERE trace_id = ?", (turn.trace_id,)).fetchone()
    plain = unpack_record(stored)
    assert text == "" and isinstance(stored, bytes) and len(stored) * 4 < len(plain)
    record = store.get(turn.trace_id)
    ids = [c["chunk_id"] for c in turn.output["retrieved_chunks"]]
    assert [c["chunk_id"] for c in record["retrieval"][0]["candidates"]] == ids
    retrieve = next(n for n in record["nodes"] if n["name"] == "retrieve")
    assert retrieve["output"]["retrieved_chunks"] == ids  # ids, the rows themselves once under `retrieval`
    assert retrieve["output"]["articles"] == [a["doc_id"] for a in turn.output["articles"]]
    assert record["output"]["retrieved_chunks"] == ids
    assert "hits" not in plain  # the articles' per-chunk hits are not repeated beside the candidates
    assert plain.count(f'"chunk_id":"{ids[0]}","doc_id"') == 1  # the candidate's row, once


def test_a_record_reads_back_whole_though_its_row_stores_only_what_cannot_be_rebuilt(tmp_path, fake_kb_context):
    written = []
    store = TraceStore(tmp_path / "traces.sqlite", redactor=PatternRedactor())
    sink = store.submit
    store.submit = lambda record: (written.append(redact_value(record, PatternRedactor())), sink(record))
    sessions = SessionStore(tmp_path / "sessions.sqlite")
    chat = ChatService(
        build_support_graph(sessions.checkpointer), fake_kb_context(), sessions, RecordingTracer(NullTracer(), store)
    )
    session = chat.ask("how do I connect to the vpn").session_id
    for text in ("im on linux", "my printer is not working", "it still does not work"):
        chat.ask(text, session_id=session)
    assert store.flush()
    for record in written:
        expected = {k: v for k, v in record.items() if k != "started_ts"} | {"feedback": None}
        assert store.get(record["trace_id"]) == json.loads(json.dumps(expected, default=str))
    with sqlite3.connect(store.path) as db:
        slim = [json.loads(unpack_record(row[0])) for row in db.execute("SELECT packed FROM runs")]
    # the ids, the path and the per-node keys live in the row's columns or are rebuilt: not in the stored JSON
    assert slim and all("trace_id" not in s and "path" not in s and "decisions" not in s for s in slim)
    assert all("output_keys" not in n and "duration_ms" not in n for s in slim for n in s["nodes"])
    sessions.close()
    store.close()


def test_the_compression_dictionary_of_stored_records_is_the_one_they_were_written_with():
    # every binary row is only readable with this exact dictionary: an edit needs a new format byte instead
    assert zlib.adler32(_BINARY_ZDICT) == 2163975357 and len(_BINARY_ZDICT) <= 32 * 1024


def test_a_row_written_before_compression_is_still_read(store):
    record = {"trace_id": "plain-1", "graph": "support", "status": "ok", "path": ["redact"], "nodes": []}
    with store.db.begin() as conn:
        conn.exec_driver_sql(
            "INSERT INTO runs (trace_id, graph, status, started_at, summary, path, record) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            ("plain-1", "support", "ok", time.time(), "", '["redact"]', json.dumps(record)),
        )
    assert store.get("plain-1")["path"] == ["redact"]


def test_a_row_written_as_compressed_text_before_the_binary_column_is_still_read(store):
    record = {"trace_id": "text-1", "graph": "support", "status": "ok", "path": ["redact", "respond"], "nodes": []}
    packer = zlib.compressobj(9, zdict=_ZDICT)
    text = "z:" + base64.b85encode(packer.compress(json.dumps(record).encode()) + packer.flush()).decode()
    with store.db.begin() as conn:
        conn.exec_driver_sql(
            "INSERT INTO runs (trace_id, graph, status, started_at, summary, path, record) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            ("text-1", "support", "ok", time.time(), "", '["redact", "respond"]', text),
        )
    assert store.get("text-1")["path"] == ["redact", "respond"]


def test_a_failing_node_is_recorded_as_an_error_with_the_path_so_far(tmp_path, fake_kb_context, store):
    class BrokenEmbedder:
        dimension = 256

        def embed_query(self, text):
            raise EmbeddingError("model crashed")

    sessions = SessionStore(tmp_path / "s.sqlite")
    service = ChatService(
        build_support_graph(sessions.checkpointer),
        fake_kb_context(embedder=BrokenEmbedder()),
        sessions,
        RecordingTracer(NullTracer(), store),
    )
    with pytest.raises(EmbeddingError):
        service.ask("how do I connect to the vpn")
    sessions.close()
    assert store.flush()
    [run] = store.list()
    record = store.get(run["trace_id"])
    assert record["status"] == "error" and record["path"] == ["redact", "classify", "embed_query"]
    error = record["nodes"][-1]["error"]
    assert error.startswith("EmbeddingError: could not embed the query")
    assert {"node": "embed_query", "error": error} in record["errors"]


class _State(TypedDict, total=False):
    question: str
    reply: str


def test_llm_calls_are_recorded_with_their_node_model_and_token_counts(store):
    model = GenericFakeChatModel(
        messages=iter(
            [
                AIMessage(
                    content="Restart the router.",
                    usage_metadata={"input_tokens": 42, "output_tokens": 7, "total_tokens": 49},
                )
            ]
        )
    )

    def answer(state: _State) -> dict:
        return {"reply": model.invoke([HumanMessage(state["question"])]).content}

    builder = StateGraph(_State)
    builder.add_node("answer", answer)
    builder.add_edge(START, "answer")
    builder.add_edge("answer", END)
    tracer = RecordingTracer(NullTracer(), store)
    config = run_config(tracer=tracer, trace_id="a" * 32, run_name="tiny", session_id="s-1")
    builder.compile().invoke({"question": "wifi drops"}, config)
    assert store.flush()
    record = store.get("a" * 32)
    [call] = record["llm_calls"]
    assert call["node"] == "answer" and call["duration_ms"] >= 0
    assert (call["prompt_tokens"], call["completion_tokens"], call["total_tokens"]) == (42, 7, 49)
    assert record["graph"] == "tiny" and record["session_id"] == "s-1"


def test_a_stream_closed_early_is_recorded_as_cancelled_and_the_session_stays_usable(chat, store):
    events = chat.stream(chat.start(TurnRequest("my vpn keeps disconnecting", session_id="s-early")))
    for kind, data in events:
        if kind == "node" and data["name"] == "retrieve":
            break
    events.close()
    assert store.flush()
    [run] = store.list(session_id="s-early")
    assert run["status"] == "cancelled" and run["path"] == ["redact", "classify", "embed_query", "retrieve"]
    again = chat.ask("how do I connect to the vpn", session_id="s-early")  # the session lock was released
    assert again.output["action"] == "answer"
    assert chat.history("s-early")[0]["content"] == "how do I connect to the vpn"  # nothing kept of the cut turn


def test_feedback_is_kept_beside_the_trace_with_its_reason_redacted(chat, store):
    turn = chat.ask("how do I connect to the vpn")
    RecordingTracer(NullTracer(), store).record_feedback(turn.trace_id, "down", "wrong; mail me at a.b@example.com")
    assert store.flush()
    assert store.get(turn.trace_id)["feedback"] == {"rating": "down", "reason": "wrong; mail me at [REDACTED:EMAIL_1]"}
    assert store.list()[0]["feedback"] == "down"


def test_traces_are_filtered_by_session_action_graph_and_time(chat, store):
    first = chat.ask("how do I connect to the vpn", session_id="s-a")
    chat.ask("It's not working", session_id="s-b")
    assert store.flush()
    assert [r["trace_id"] for r in store.list(session_id="s-a")] == [first.trace_id]
    assert {r["session_id"] for r in store.list(action="clarify")} == {"s-b"}
    assert store.list(graph="indexing") == []
    assert len(store.list(since=time.time() - 60)) == 2 and store.list(until=time.time() - 60) == []


def _run(i: int, started: float) -> dict:
    return {"trace_id": f"{i:032x}", "graph": "support", "status": "ok", "started_ts": started, "input": {"query": "q"}}


def test_old_runs_and_runs_beyond_the_cap_are_pruned(tmp_path):
    now = [1_000_000.0]
    trace_store = TraceStore(
        tmp_path / "t.sqlite", redactor=PatternRedactor(), retention_days=1, max_runs=100, clock=lambda: now[0]
    )
    for i in range(105):
        trace_store.submit(_run(i, now[0] - (3 * 86400 if i < 2 else 1000 - i)))
    assert trace_store.flush()
    trace_store.prune()
    assert trace_store.count() == 100  # 2 older than a day, then the 3 oldest of the rest
    assert all(trace_store.get(f"{i:032x}") is None for i in range(5))
    assert trace_store.get(f"{5:032x}") is not None
    # the writer prunes by itself, at most every PRUNE_EVERY_S: two days later the old runs go with the next write
    now[0] += 2 * 86400
    trace_store.submit(_run(200, now[0]))
    assert trace_store.flush()
    deadline = time.time() + 5
    while trace_store.count() > 1 and time.time() < deadline:
        time.sleep(0.05)
    assert trace_store.count() == 1 and trace_store.get(f"{200:032x}") is not None
    trace_store.close()


def test_a_full_queue_drops_records_instead_of_making_the_chat_wait(tmp_path):
    redactor = CountingRedactor()
    redactor.gate.clear()  # the writer is stuck on its first record
    trace_store = TraceStore(tmp_path / "t.sqlite", redactor=redactor, max_pending=2)

    def submit_six():
        for i in range(6):
            trace_store.submit(
                {
                    "trace_id": f"{i:032x}",
                    "graph": "support",
                    "status": "ok",
                    "started_ts": time.time(),
                    "input": {"query": "x"},
                }
            )

    submitter = threading.Thread(target=submit_six, daemon=True)
    submitter.start()
    submitter.join(10)
    assert not submitter.is_alive(), "submit blocked behind a stuck writer"
    # the stuck writer holds what it took in its batch (one or two records), the queue holds two: the rest dropped
    assert 2 <= trace_store.dropped <= 4
    redactor.gate.set()
    assert trace_store.flush(5)
    assert trace_store.count() == 6 - trace_store.dropped
    trace_store.close()


def test_shaping_caps_strings_and_lists_and_replaces_bytes_and_vectors():
    shaped = shape(
        {
            "data": b"\x00" * 2048,
            "query_embedding": [0.1] * 384,
            "answer": "word " * 1000,
            "items": list(range(100)),
            "nested": {"a": {"b": {"c": {"d": {"e": {"f": {"g": 1}}}}}}},
        }
    )
    assert shaped["data"] == "<2048 bytes>" and shaped["query_embedding"] == "<384 floats>"
    assert len(shaped["answer"]) < 1600 and shaped["answer"].endswith("[5000 chars]")
    assert len(shaped["items"]) == 31 and shaped["items"][-1] == "… 70 more"
    assert "…" in str(shaped["nested"])


def test_a_run_config_carries_one_recorder_that_the_chat_service_reads(store):
    config = run_config(tracer=RecordingTracer(NullTracer(), store), trace_id="b" * 32, run_name="support")
    recorder = recorder_in(config)
    assert isinstance(recorder, RunRecorder) and recorder.trace_id == "b" * 32
    assert recorder_in(run_config(tracer=NullTracer(), trace_id="c" * 32, run_name="x")) is None


def test_the_database_holds_one_row_per_run(chat, store):
    chat.ask("how do I connect to the vpn")
    chat.ask("how do I connect to the vpn")
    assert store.flush()
    with sqlite3.connect(store.path) as db:
        assert db.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 2


class TextsSeen:
    """A redactor that keeps every text it is given (and redacts with the pattern redactor)."""

    def __init__(self) -> None:
        self.inner = PatternRedactor()
        self.texts: list[str] = []

    def redact(self, text):
        self.texts.append(text)
        return self.inner.redact(text)


def test_only_text_from_a_person_or_a_document_reaches_the_trace_redactor():
    record = {
        "trace_id": "9f1c2e",
        "user_id": "anna.berg@example.com",
        "session_id": "s-1",
        "path": ["redact", "retrieve"],
        "nodes": [{"name": "retrieve", "input_keys": ["turn"], "output_keys": ["retrieved_chunks"]}],
        "output": {
            "query": "my vpn drops, call me on +44 20 7946 0958",
            "response_mode": "SMART_FALLBACK",
            "question_type": "how-to",
            "query_embedding": "<384 floats>",
            "retrieved_chunks": ["8f2d2c1ee5e2dc15"],
            "chunk_ids": ["8f2d2c1ee5e2dc15"],
            "a_field_nobody_classified": "Zebra!Secret77 is my password",
        },
        "retrieval": [{"candidates": [{"chunk_id": "8f2d", "title": "Connecting to the VPN", "score": 0.8}]}],
    }
    redactor = TextsSeen()
    redacted = redact_value(record, redactor)
    assert sorted(redactor.texts) == sorted(
        [
            "anna.berg@example.com",
            "s-1",
            "my vpn drops, call me on +44 20 7946 0958",
            "Zebra!Secret77 is my password",
            "Connecting to the VPN",
        ]
    )
    assert "anna.berg@example.com" not in json.dumps(redacted)  # a client's id is a person's: redacted
    assert "Zebra!Secret77" not in json.dumps(redacted)  # an unclassified field is redacted
    assert redacted["output"]["response_mode"] == "SMART_FALLBACK" and redacted["path"] == ["redact", "retrieve"]


class BatchesSeen(TextsSeen):
    """Takes batches too (as the service's redactors do), noting each batch it was given."""

    def __init__(self) -> None:
        super().__init__()
        self.batches: list[list[str]] = []

    def redact_many(self, texts):
        self.batches.append(list(texts))
        return [self.inner.redact(text) for text in texts]


def test_the_person_texts_of_a_batch_of_records_go_to_the_redactor_as_one_batch(tmp_path):
    redactor = BatchesSeen()
    trace_store = TraceStore(tmp_path / "traces.sqlite", redactor=redactor)
    try:
        trace_store._write(
            [
                ("run", {"trace_id": f"t{n}", "graph": "support", "status": "ok", "started_ts": 1.0, "input": text})
                for n, text in enumerate([{"query": f"my password is {SECRET}"}, {"query": "the vpn drops"}])
            ]
        )
        stored = trace_store.get("t0")
    finally:
        trace_store.close()
    assert redactor.batches == [[f"my password is {SECRET}", "the vpn drops"]] and redactor.texts == []
    assert stored is not None and SECRET not in json.dumps(stored)
