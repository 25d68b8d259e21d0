"""Langfuse tracing at the protocol level: the real SDK exports OTLP to a recording server on 127.0.0.1."""

import base64
import gzip

import pytest

from tests.e2e.servers import RecordingServer, free_port

pytestmark = pytest.mark.slow
SECRET = "Zebra!Secret77"


def decoded_spans(requests):
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    spans = []
    for request in requests:
        assert request["path"] == "/api/public/otel/v1/traces"
        body = request["body"]
        body = gzip.decompress(body) if body[:2] == b"\x1f\x8b" else body
        for resource in ExportTraceServiceRequest.FromString(body).resource_spans:
            for scope in resource.scope_spans:
                for span in scope.spans:
                    attrs = {a.key: a.value.string_value for a in span.attributes}
                    spans.append({"name": span.name, "trace_id": span.trace_id.hex(), "attrs": attrs})
    return spans


def test_every_chat_and_indexing_run_is_traced_with_session_and_redacted_content(serve):
    with RecordingServer() as langfuse:
        with serve(langfuse_public_key="pk-lf-1", langfuse_secret_key="sk-lf-1", langfuse_host=langfuse.url) as client:
            reply = client.post("/chat", json={"message": f"my password is {SECRET} and the VPN fails",
                                               "session_id": "sess-42"}).json()
        # leaving the app shuts the SDK down, which flushes every pending span
    assert langfuse.requests, "nothing was exported"
    auth = langfuse.requests[0]["headers"]["authorization"]
    assert auth == "Basic " + base64.b64encode(b"pk-lf-1:sk-lf-1").decode()
    assert all(SECRET.encode() not in r["body"] for r in langfuse.requests)

    spans = decoded_spans(langfuse.requests)
    chat = [s for s in spans if s["trace_id"] == reply["trace_id"]]
    names = {s["name"] for s in chat}
    assert {"support", "redact", "classify", "embed_query", "retrieve", "decide", "answer", "respond"} <= names
    assert all(s["attrs"].get("session.id") == "sess-42" for s in chat)
    root = next(s for s in chat if s["name"] == "support")
    assert "[REDACTED:PASSWORD]" in root["attrs"]["langfuse.observation.input"]
    indexing_runs = [s for s in spans if s["name"] == "indexing"]
    assert len(indexing_runs) == 4  # one per fixture document
    assert all("bytes>" in s["attrs"]["langfuse.observation.input"] for s in indexing_runs)  # raw files not traced


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
