"""GET /traces, GET /traces/{id}, the /chat timings, the admin gate and the UI files, through the real app
(real MiniLM, real Chroma, the fixture KB)."""

import sqlite3

import pytest
from fastapi import HTTPException
from fastapi.testclient import TestClient
from starlette.requests import Request

from app.deps import require_admin
from app.main import create_app
from app.settings import Settings
from tests.conftest import FIXTURE_KB

pytestmark = pytest.mark.slow
SECRET = "Zebra!Secret77"


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    settings = Settings(_env_file=None, data_dir=tmp_path_factory.mktemp("data"), kb_dir=FIXTURE_KB)
    with TestClient(create_app(settings), base_url="http://localhost") as test_client:
        yield test_client


def test_a_chat_reply_carries_its_trace_id_and_per_stage_timings(client):
    reply = client.post("/chat", json={"message": "How do I connect to the VPN on Linux?"}).json()
    timings = reply["timings"]
    assert set(timings) == {"embedding_ms", "retrieval_ms", "decision_ms", "generation_ms", "total_ms"}
    assert timings["embedding_ms"] > 0 and timings["retrieval_ms"] > 0
    assert sum(v for k, v in timings.items() if k != "total_ms") <= timings["total_ms"]
    trace = client.get(f"/traces/{reply['trace_id']}").json()
    assert trace["path"] == ["redact", "classify", "embed_query", "retrieve", "decide", "answer", "respond"]
    assert trace["timings"] == timings and trace["action"] == reply["action"] == "answer"
    durations = {n["name"]: n["duration_ms"] for n in trace["nodes"]}
    assert durations["embed_query"] == pytest.approx(timings["embedding_ms"], abs=0.02)
    assert (
        trace["decisions"][0]["action"] == "answer"
        and "answers it with probability" in trace["decisions"][0]["reasoning"]
    )
    candidate_ids = [c["chunk_id"] for c in trace["retrieval"][0]["candidates"]]
    assert {s["chunk_id"] for s in reply["sources"]} <= set(candidate_ids)
    assert all(0 < c["score"] <= 1 for c in trace["retrieval"][0]["candidates"])
    # the graph drawn with this run's path: every visited node and taken edge highlighted
    svg = trace["diagram"]["svg"]
    for node in trace["path"]:
        assert f'class="node visited" data-node="{node}"' in svg
    assert 'class="node" data-node="troubleshoot"' in svg  # not on this path
    assert 'data-source="retrieve" data-target="decide"' in svg and "edge taken" in svg
    assert "class answer,classify,decide,embed_query,redact,respond,retrieve visited" in trace["diagram"]["mermaid"]


def test_traces_hold_no_secret_and_no_embedding(client):
    reply = client.post("/chat", json={"message": f"my password is {SECRET} and the vpn fails"}).json()
    trace = client.get(f"/traces/{reply['trace_id']}").json()
    assert "[REDACTED:PASSWORD]" in trace["input"]["query"]
    assert SECRET not in str(trace)
    embed = next(n for n in trace["nodes"] if n["name"] == "embed_query")
    assert embed["output"]["query_embedding"] == "<384 floats>"
    data_dir = client.app.state.settings.storage.data_dir
    with sqlite3.connect(data_dir / "deskmate.sqlite") as db:
        dump = "\n".join(db.iterdump())
    assert SECRET not in dump and "[REDACTED:PASSWORD]" in dump


def test_traces_can_be_listed_by_session_action_graph_and_time(client):
    session = client.post("/chat", json={"message": "It's not working"}).json()
    clarify = client.get("/traces", params={"session_id": session["session_id"]}).json()["traces"]
    assert [t["trace_id"] for t in clarify] == [session["trace_id"]]
    assert clarify[0]["action"] == "clarify" and clarify[0]["summary"] == "It's not working"
    assert clarify[0]["path"][:2] == ["redact", "classify"]
    actions = {t["action"] for t in client.get("/traces", params={"action": "clarify"}).json()["traces"]}
    assert actions == {"clarify"}
    assert client.get("/traces", params={"since": "2999-01-01T00:00:00Z"}).json()["traces"] == []
    assert len(client.get("/traces", params={"until": "2999-01-01T00:00:00", "limit": 2}).json()["traces"]) == 2
    assert client.get("/traces", params={"since": "yesterday"}).status_code == 422


def test_indexing_runs_are_traced_without_the_raw_file(client):
    runs = client.get("/traces", params={"graph": "indexing"}).json()["traces"]
    assert sorted(r["summary"] for r in runs) == sorted(f"kb/{p.name}" for p in FIXTURE_KB.iterdir())
    trace = client.get(f"/traces/{runs[0]['trace_id']}").json()
    assert trace["path"] == ["load", "parse", "chunk", "embed", "store"]
    assert trace["input"]["data"].endswith(" bytes>")


def test_a_vote_shows_up_on_the_trace(client):
    reply = client.post("/chat", json={"message": "How do I connect to the VPN on my Mac?"}).json()
    vote = client.post(
        "/feedback",
        json={
            "session_id": reply["session_id"],
            "message_id": reply["message_id"],
            "rating": "up",
            "reason": "worked, thanks",
        },
    )
    assert vote.status_code == 201
    assert client.get(f"/traces/{reply['trace_id']}").json()["feedback"] == {"rating": "up", "reason": "worked, thanks"}


def test_unknown_and_malformed_trace_ids_are_refused_clearly(client):
    missing = client.get(f"/traces/{'0' * 32}")
    assert missing.status_code == 404 and "retention" in missing.json()["detail"]
    assert client.get("/traces/not-a-trace").status_code == 422


def test_with_an_admin_key_traces_need_it_and_the_chat_does_not(serve):
    with serve(admin_key="s3cret-admin") as client:
        reply = client.post("/chat", json={"message": "how do I connect to the vpn"})
        assert reply.status_code == 200
        trace_id = reply.json()["trace_id"]
        refused = client.get(f"/traces/{trace_id}")
        assert refused.status_code == 401 and "Authorization: Bearer" in refused.json()["detail"]
        assert client.get("/traces", headers={"Authorization": "Bearer wrong"}).status_code == 401
        ok = client.get(f"/traces/{trace_id}", headers={"Authorization": "Bearer s3cret-admin"})
        assert ok.status_code == 200 and ok.json()["trace_id"] == trace_id
        assert client.get("/admin/tickets").status_code == 401
        assert client.get("/admin").status_code == 200  # the page holds no data; it asks for the key


def _request(host: str, headers: dict | None = None, key: str | None = None) -> Request:
    class _State:
        settings = Settings(_env_file=None, admin_key=key)

    class _App:
        state = _State()

    scope = {
        "type": "http",
        "method": "GET",
        "path": "/traces",
        "client": (host, 5000),
        "app": _App(),
        "headers": [(k.lower().encode(), v.encode()) for k, v in (headers or {}).items()],
    }
    return Request(scope)


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.53", "::1", "::ffff:127.0.0.1", "testclient"])
def test_without_an_admin_key_clients_on_this_machine_are_admins(host):
    require_admin(_request(host))


@pytest.mark.parametrize("host", ["10.0.0.5", "192.168.1.20", "2001:db8::1", ""])
def test_without_an_admin_key_other_clients_are_refused(host):
    with pytest.raises(HTTPException) as refused:
        require_admin(_request(host))
    assert refused.value.status_code == 403 and "DESKMATE_ADMIN_KEY" in refused.value.detail


def test_with_an_admin_key_even_local_clients_must_send_it():
    with pytest.raises(HTTPException) as refused:
        require_admin(_request("127.0.0.1", key="k"))
    assert refused.value.status_code == 401
    require_admin(_request("10.0.0.5", {"Authorization": "Bearer k"}, key="k"))


def test_local_traces_can_be_switched_off(serve):
    with serve(local_traces=False) as client:
        reply = client.post("/chat", json={"message": "how do I connect to the vpn"}).json()
        assert reply["timings"]["total_ms"] > 0  # timings do not depend on the store
        off = client.get("/traces")
        assert off.status_code == 404 and "DESKMATE_LOCAL_TRACES" in off.json()["detail"]
        assert not (client.app.state.settings.storage.data_dir / "traces.sqlite").exists()


# --- the web UI's files --------------------------------------------------------------------------------
def test_the_chat_page_and_its_files_are_served_with_a_strict_content_security_policy(client):
    page = client.get("/")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    policy = page.headers["content-security-policy"]
    assert "script-src 'self'" in policy and "unsafe-inline" not in policy and "frame-ancestors 'none'" in policy
    for name in ("chat.js", "common.js", "markdown.js", "app.css"):
        served = client.get(f"/ui/{name}")
        assert served.status_code == 200 and served.headers["x-content-type-options"] == "nosniff"
    assert client.get("/ui/chat.js").headers["content-type"].startswith("text/javascript")
    assert '<script src="/ui/chat.js">' in page.text and "http" not in page.text.split("<body")[1].split("</body>")[0]


@pytest.mark.parametrize("name", ["..%2Fmain.py", "diagram.py", "__init__.py", ".hidden.js", "nope.js"])
def test_nothing_but_the_ui_files_can_be_fetched_under_ui(client, name):
    assert client.get(f"/ui/{name}").status_code == 404


def test_the_admin_page_is_served_to_this_machine(client):
    page = client.get("/admin")
    assert page.status_code == 200 and '<script src="/ui/admin.js">' in page.text


def test_admins_can_list_every_ticket(client):
    chat = client.post("/chat", json={"message": "please open a ticket, my laptop fan is very loud"}).json()
    confirm = client.post("/chat", json={"message": "yes", "session_id": chat["session_id"]}).json()
    assert confirm["ticket_event"] == "created"
    listed = client.get("/admin/tickets").json()["tickets"]
    assert confirm["ticket"]["id"] in {t["id"] for t in listed}
