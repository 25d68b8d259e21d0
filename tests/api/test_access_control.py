"""Access control through the real app: admin key, signed callers, owned sessions/tickets/traces, audiences.

Real embedder, real Chroma, real BM25, real SQLite; the LLM (where one is used) is a local
OpenAI-compatible server on 127.0.0.1 whose request bodies are inspected.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from contextlib import contextmanager

import jwt
import pytest
from fastapi.testclient import TestClient
from pydantic import ValidationError

from app.identity import USER_HEADER, make_user_token
from tests.e2e.servers import OpenAICompatibleServer
from tests.unit.test_ticket_store import draft

pytestmark = pytest.mark.slow

ADMIN_KEY = "adm-" + "k7Qp2vX9rT4mZ8wL1nB6cF3hJ5sD0gY"
USER_SECRET = "usr-" + "Vb8Nq3Lx6Tz1Rk9Wm4Pc7Hs2Jd5Gf0Ya"
ADMIN = {"Authorization": f"Bearer {ADMIN_KEY}"}

# a fact only the finance-restricted document holds: its words must never reach anyone outside finance
PAYROLL_DOC = b"""# Payroll VPN profile

## Connecting to the payroll enclave

1. Open Secure Client and choose the profile named Kestrel-Payroll.
2. Approve the push on your hardware token; the enclave gateway is payroll-gw.corp.example.
3. The Kestrel-Payroll profile rotates its certificate every Tuesday.
"""
# words only the document holds (the question below uses none of them)
DOC_ONLY = ("payroll-gw.corp.example", "certificate every Tuesday", "hardware token")


def user(user_id: str, *groups: str, secret: str = USER_SECRET, ttl_s: float = 600) -> dict:
    return {USER_HEADER: make_user_token(secret, user_id, list(groups), ttl_s=ttl_s)}


@pytest.fixture
def secured(serve):
    """The app with an admin key and sign-in on (development mode, as a staging deployment would run)."""

    @contextmanager
    def run(**overrides):
        with serve(admin_key=ADMIN_KEY, user_token_secret=USER_SECRET, **overrides) as client:
            yield client

    return run


def upload(client, name: str, data: bytes, **fields):
    return client.post(
        "/documents?wait=true", files={"file": (name, data, "text/markdown")}, data=fields, headers=ADMIN
    )


def test_admin_endpoints_refuse_callers_without_the_admin_key(secured):
    with secured(kb_dir=None) as client:
        calls = [
            ("post", "/documents"),
            ("get", "/documents"),
            ("delete", "/documents/0123456789abcdef"),
            ("get", "/admin/tickets"),
            ("get", "/search?q=vpn"),
            ("get", "/feedback/stats"),
        ]
        for method, path in calls:
            kwargs = {"files": {"file": ("a.md", b"# A\n\ntext", "text/markdown")}} if method == "post" else {}
            anonymous = getattr(client, method)(path, **kwargs)
            assert anonymous.status_code == 401, (path, anonymous.text)
            assert "Authorization: Bearer" in anonymous.json()["detail"]
            wrong = getattr(client, method)(path, headers={"Authorization": "Bearer not-the-key"}, **kwargs)
            assert wrong.status_code == 401, path
            # a signed-in employee is still not an admin
            assert getattr(client, method)(path, headers=user("alice"), **kwargs).status_code == 401, path
        assert client.get("/traces").status_code == 401  # no user header and no admin key
        wrong_key = client.get("/traces", headers={"Authorization": "Bearer not-the-key"})
        assert wrong_key.status_code == 401 and "admin key" in wrong_key.json()["detail"]  # not "sign in first"
        assert client.get("/admin/tickets", headers=ADMIN).status_code == 200
        assert upload(client, "a.md", b"# A\n\nSome text about printers.").status_code == 201
        assert client.get("/documents", headers=ADMIN).json()["documents"][0]["title"] == "A"


def test_without_an_admin_key_admin_endpoints_answer_only_this_machine(serve, make_settings):
    from app.main import create_app

    with TestClient(
        create_app(make_settings(kb_dir=None)), client=("10.1.2.3", 40000), base_url="http://localhost"
    ) as remote:
        refused = remote.get("/documents")
        assert refused.status_code == 403 and "DESKMATE_ADMIN_KEY" in refused.json()["detail"]
        assert (
            remote.post("/documents?wait=true", files={"file": ("a.md", b"# A\n\nx", "text/markdown")}).status_code
            == 403
        )
        assert remote.get("/health").status_code == 200
    with TestClient(
        create_app(make_settings(kb_dir=None)), client=("127.0.0.1", 40000), base_url="http://localhost"
    ) as local:
        assert local.get("/documents").status_code == 200


def test_an_admin_key_set_with_spaces_or_a_newline_around_it_is_the_key(serve):
    with serve(admin_key=f"  {ADMIN_KEY}\n", kb_dir=None) as client:
        assert client.get("/documents", headers=ADMIN).status_code == 200
        assert client.get("/documents", headers={"Authorization": f"Bearer  {ADMIN_KEY} "}).status_code == 200
        assert client.get("/documents", headers={"Authorization": "Bearer  "}).status_code == 401


def test_production_mode_refuses_to_start_without_strong_distinct_secrets(make_settings, tmp_path):
    strong_a, strong_b = "pA7" + "x" * 3 + "Qm2Zr9Kt4Wn8Vb1Lc6Hd3Jf5Gs0Yp", "sE4" + "Tu7Ni1Ob9Rw3Xz6Ac2Dv8Fy5Gh0Kq"
    with pytest.raises(ValidationError, match="DESKMATE_ADMIN_KEY is not set.*DESKMATE_USER_TOKEN_SECRET is not set"):
        make_settings(mode="production")
    for placeholder in ("change-me-to-something-long-enough-ok", "0" * 64, "secret" + "x1y2z3" * 6, "Qwerty123!" * 4):
        with pytest.raises(ValidationError, match="placeholder or default"):
            make_settings(mode="production", admin_key=placeholder, user_token_secret=strong_b)
    with pytest.raises(ValidationError, match="shorter than 32"):
        make_settings(mode="production", admin_key="Ab3dE6gH9", user_token_secret=strong_b)
    with pytest.raises(ValidationError, match="are the same"):
        make_settings(mode="production", admin_key=strong_a, user_token_secret=strong_a)
    assert (
        make_settings(mode="production", admin_key=strong_a, user_token_secret=strong_b).security.mode == "production"
    )

    # the real command: no traceback, a message saying what to set, exit status 2, nothing served
    started = subprocess.run(
        [sys.executable, "-m", "app.cli", "serve", "--port", "1"],
        capture_output=True,
        text=True,
        timeout=120,
        env={"DESKMATE_MODE": "production", "PATH": "/usr/bin:/bin", "DESKMATE_DATA_DIR": str(tmp_path / "d")},
    )
    assert started.returncode == 2
    assert "refuses to start" in started.stderr and "DESKMATE_ADMIN_KEY is not set" in started.stderr
    assert "Traceback" not in started.stderr
    # a mistyped mode names the variable to fix
    mistyped = subprocess.run(
        [sys.executable, "-m", "app.cli", "serve", "--port", "1"],
        capture_output=True,
        text=True,
        timeout=120,
        env={"DESKMATE_MODE": "Prod", "PATH": "/usr/bin:/bin", "DESKMATE_DATA_DIR": str(tmp_path / "d")},
    )
    assert (
        mistyped.returncode == 2 and "DESKMATE_MODE: Input should be 'development' or 'production'" in mistyped.stderr
    )


def test_sign_in_rejects_missing_forged_expired_and_unverifiable_user_headers(secured, serve):
    with secured(kb_dir=None) as client:
        ask = {"message": "how do I connect to the vpn"}
        missing = client.post("/chat", json=ask)
        assert missing.status_code == 401 and USER_HEADER in missing.json()["detail"]
        forged = client.post("/chat", json=ask, headers=user("alice", secret="another-portal-secret-0123456789ab"))
        assert forged.status_code == 401 and "signed with DESKMATE_USER_TOKEN_SECRET" in forged.json()["detail"]
        expired = client.post("/chat", json=ask, headers=user("alice", ttl_s=-3600))
        assert expired.status_code == 401 and "expired" in expired.json()["detail"]
        garbage = client.post("/chat", json=ask, headers={USER_HEADER: "not.a.token"})
        assert garbage.status_code == 401
        text_expiry = jwt.encode({"sub": "alice", "exp": str(int(time.time()) + 600)}, USER_SECRET, algorithm="HS256")
        wrong_type = client.post("/chat", json=ask, headers={USER_HEADER: text_expiry})
        assert wrong_type.status_code == 401 and "'exp' claim is a str" in wrong_type.json()["detail"]
        assert client.post("/chat", json=ask, headers=user("alice")).status_code == 200
    with serve(kb_dir=None) as open_client:  # sign-in off: a header deskmate cannot check is refused, not ignored
        refused = open_client.post("/chat", json={"message": "hi"}, headers=user("alice"))
        assert refused.status_code == 401 and "DESKMATE_USER_TOKEN_SECRET" in refused.json()["detail"]


def test_a_caller_cannot_continue_read_or_vote_on_another_callers_conversation(secured):
    with secured() as client:
        alice, bob = user("alice"), user("bob")
        first = client.post("/chat", json={"message": "how do I connect to the vpn on macos"}, headers=alice)
        assert first.status_code == 200
        session = first.json()["session_id"]

        hijack = client.post("/chat", json={"message": "what did I ask before?", "session_id": session}, headers=bob)
        assert hijack.status_code == 404 and "belongs to you" in hijack.json()["detail"]
        streamed = client.post("/chat/stream", json={"message": "and now?", "session_id": session}, headers=bob)
        assert streamed.status_code == 404
        assert client.get(f"/sessions/{session}", headers=bob).status_code == 404
        vote = client.post(
            "/feedback",
            headers=bob,
            json={"message_id": first.json()["message_id"], "session_id": session, "rating": "down"},
        )
        assert vote.status_code == 404

        mine = client.get(f"/sessions/{session}", headers=alice)
        assert mine.status_code == 200
        assert [m["role"] for m in mine.json()["messages"]] == ["user", "assistant"]
        assert "vpn" in mine.json()["messages"][0]["content"].lower()
        assert client.get(f"/sessions/{session}", headers=ADMIN).status_code == 200  # admins may look
        again = client.post("/chat", json={"message": "it still fails", "session_id": session}, headers=alice)
        assert again.status_code == 200 and again.json()["session_id"] == session
        assert (
            client.post(
                "/feedback",
                headers=alice,
                json={"message_id": first.json()["message_id"], "session_id": session, "rating": "up"},
            ).status_code
            == 201
        )


def test_tickets_and_traces_are_visible_only_to_their_owner(secured):
    with secured(kb_dir=None) as client:
        tickets = client.app.state.resources.tickets
        hers = tickets.create(draft(topic="vpn drops"), session_id="s-a", user_id="alice")
        his = tickets.create(draft(topic="printer jam"), session_id="s-b", user_id="bob")
        alice, bob = user("alice"), user("bob")

        listed = client.get("/tickets", headers=alice)
        assert listed.status_code == 200 and [t["id"] for t in listed.json()["tickets"]] == [hers["id"]]
        assert client.get("/tickets", params={"user_id": "bob"}, headers=alice).status_code == 403
        assert client.get(f"/tickets/{his['id']}", headers=alice).status_code == 404
        assert client.get(f"/tickets/{hers['id']}", headers=alice).status_code == 200
        assert client.get(f"/tickets/{his['id']}", headers=ADMIN).status_code == 200
        assert client.get("/tickets").status_code == 401

        turn = client.post("/chat", json={"message": "my laptop wifi keeps dropping"}, headers=alice).json()
        client.post("/chat", json={"message": "how do I print from a kiosk"}, headers=bob)
        trace_id = turn["trace_id"]
        deadline = time.time() + 10
        while client.get(f"/traces/{trace_id}", headers=ADMIN).status_code != 200 and time.time() < deadline:
            time.sleep(0.1)
        assert client.get(f"/traces/{trace_id}", headers=alice).status_code == 200
        assert client.get(f"/traces/{trace_id}", headers=bob).status_code == 404
        bobs_runs = client.get("/traces", headers=bob).json()["traces"]
        assert bobs_runs and all(r["trace_id"] != trace_id for r in bobs_runs)
        assert {r["session_id"] for r in client.get("/traces", headers=ADMIN).json()["traces"]} >= {turn["session_id"]}


def _llm_reply(request: dict) -> str:
    prompt = json.dumps(request["body"]["messages"])
    if "Reply with one JSON object" in prompt:
        return json.dumps({"reasoning": "the sources cover it", "action": "answer"})
    return "Use the profile from the sources [1]."


def test_a_restricted_document_never_reaches_a_caller_outside_its_audience(secured):
    llm = OpenAICompatibleServer()
    llm.default_reply = _llm_reply
    with llm, secured(llm_base_url=f"{llm.url}/v1", llm_model="stub") as client:
        stored = upload(client, "payroll-vpn.md", PAYROLL_DOC, audience="Finance, payroll-admins")
        assert stored.status_code == 201, stored.text
        document = stored.json()["document"]
        assert document["audience"] == ["finance", "payroll-admins"]
        question = {"message": "how do I connect to the kestrel-payroll vpn profile for the payroll enclave?"}

        # inside the audience: the document is found, cited and downloadable
        llm.requests.clear()
        insider = client.post("/chat", json=question, headers=user("fiona", "finance")).json()
        assert document["id"] in {s["doc_id"] for s in insider["sources"]}
        assert any(DOC_ONLY[0] in json.dumps(r["body"]) for r in llm.requests)
        assert client.get(f"/documents/{document['id']}/content", headers=user("fiona", "finance")).status_code == 200
        assert client.get(f"/documents/{document['id']}/sections", headers=user("fiona", "finance")).status_code == 200

        # outside it (another group, no group, a restricted word in the query): as if it did not exist
        for outsider in (user("otto", "engineering"), user("nina")):
            llm.requests.clear()
            reply = client.post("/chat", json=question, headers=outsider)
            assert reply.status_code == 200
            body = reply.json()
            assert document["id"] not in {s["doc_id"] for s in body["sources"]}
            leaked = reply.text + json.dumps([r["body"] for r in llm.requests])  # the answer and every prompt
            assert [w for w in DOC_ONLY if w in leaked] == []
            trace = client.get(f"/traces/{body['trace_id']}", headers=ADMIN)
            deadline = time.time() + 10
            while trace.status_code != 200 and time.time() < deadline:
                time.sleep(0.1)
                trace = client.get(f"/traces/{body['trace_id']}", headers=ADMIN)
            assert [w for w in DOC_ONLY if w in trace.text] == [] and document["id"] not in trace.text
            assert client.get(f"/documents/{document['id']}/content", headers=outsider).status_code == 404
            assert client.get(f"/documents/{document['id']}/sections", headers=outsider).status_code == 404

        # admins' search sees it, and says who may
        hits = client.get("/search", params={"q": "Kestrel-Payroll profile"}, headers=ADMIN).json()["results"]
        assert hits[0]["doc_id"] == document["id"] and hits[0]["audience"] == ["finance", "payroll-admins"]


def test_a_restricted_document_uploaded_again_without_an_audience_is_open_to_everyone_again(secured):
    with secured() as client:
        restricted = upload(
            client,
            "payroll-vpn.md",
            PAYROLL_DOC,
            audience="finance",
            context_type="how-to",
            content_domain="network",
            document_category="guide",
            relevance_tags="vpn",
        )
        assert restricted.status_code == 201, restricted.text
        doc_id = restricted.json()["document"]["id"]
        assert restricted.json()["document"]["context"]["context_type"] == ["how-to"]
        assert client.get(f"/documents/{doc_id}/content", headers=user("otto", "engineering")).status_code == 404

        reopened = upload(client, "payroll-vpn.md", PAYROLL_DOC)  # the same bytes, no audience, no context
        assert reopened.status_code in (200, 201), reopened.text
        listed = {d["id"]: d for d in client.get("/documents", headers=ADMIN).json()["documents"]}[doc_id]
        assert "audience" not in listed or not listed["audience"]
        assert not listed.get("context")
        assert client.get(f"/documents/{doc_id}/content", headers=user("otto", "engineering")).status_code == 200
        hits = client.get("/search", params={"q": "Kestrel-Payroll profile"}, headers=ADMIN).json()["results"]
        assert hits[0]["doc_id"] == doc_id and not hits[0].get("audience")
        reply = client.post(
            "/chat",
            json={"message": "how do I connect to the kestrel-payroll vpn profile?"},
            headers=user("otto", "engineering"),
        ).json()
        assert doc_id in {s["doc_id"] for s in reply["sources"]}


def test_a_caller_without_a_valid_sign_in_cannot_tell_which_ids_exist(secured):
    with secured() as client:
        doc_id = upload(client, "payroll-vpn.md", PAYROLL_DOC, audience="finance").json()["document"]["id"]
        turn = client.post(
            "/chat", json={"message": "printer jammed, please open a ticket"}, headers=user("alice")
        ).json()
        session = turn["session_id"]
        client.post("/chat", json={"message": "yes", "session_id": session}, headers=user("alice"))
        ticket = client.get("/tickets", headers=user("alice")).json()["tickets"]
        pairs = [
            (f"/documents/{doc_id}/content", "/documents/0000000000000000/content"),
            (f"/sessions/{session}", "/sessions/no-such-session-123"),
        ]
        assert ticket, "the ticket was not created"
        pairs.append((f"/tickets/{ticket[0]['id']}", "/tickets/DM-000000"))
        for existing, missing in pairs:
            for headers in ({}, user("alice", secret="another-portal-secret-0123456789ab")):
                answers = [client.get(path, headers=headers) for path in (existing, missing)]
                assert [a.status_code for a in answers] == [401, 401], (existing, [a.text for a in answers])
                assert answers[0].json() == answers[1].json()
        # signed in, the owner and the admin still read them
        assert client.get(f"/sessions/{session}", headers=user("alice")).status_code == 200
        assert client.get(f"/documents/{doc_id}/content", headers=ADMIN).status_code == 200


PORTAL_DOC = b"""# Payroll portal not loading

## Troubleshooting

1. Sign out of the payroll portal and close every browser window.
2. Switch the Kestrel-Payroll VPN profile off and on again.
3. Clear the browser cache for payroll-gw.corp.example.
4. Ask the payroll desk to re-issue your hardware token.
"""


def test_a_walkthrough_from_a_restricted_document_stops_when_the_caller_leaves_its_audience(secured):
    with secured(kb_dir=None) as client:
        assert upload(client, "payroll-portal.md", PORTAL_DOC, audience="finance").status_code == 201
        first = client.post(
            "/chat",
            json={"message": "the payroll portal is not loading, it keeps failing"},
            headers=user("alice", "finance"),
        ).json()
        assert first["action"] == "troubleshoot" and "Sign out of the payroll portal" in first["answer"]
        session = first["session_id"]
        # still in finance: the next step comes
        second = client.post(
            "/chat", json={"message": "still broken", "session_id": session}, headers=user("alice", "finance")
        ).json()
        assert "Kestrel-Payroll VPN profile" in second["answer"]
        # her portal takes finance away: the walkthrough stops without showing another step
        after = client.post("/chat", json={"message": "still broken", "session_id": session}, headers=user("alice"))
        assert after.status_code == 200
        assert "no longer have access" in after.json()["answer"]
        assert "payroll-gw.corp.example" not in after.text and "hardware token" not in after.text


def test_a_token_that_claims_to_live_longer_than_the_maximum_is_refused(secured):
    with secured(kb_dir=None, user_token_max_ttl_s=3600) as client:
        ask = {"message": "how do I connect to the vpn"}
        assert client.post("/chat", json=ask, headers=user("alice", ttl_s=3000)).status_code == 200
        forever = client.post("/chat", json=ask, headers=user("alice", ttl_s=30 * 365 * 86400))
        assert forever.status_code == 401 and "DESKMATE_USER_TOKEN_MAX_TTL_S" in forever.json()["detail"]


FACT_DOC = b"""# Payroll enclave gateway

## Gateway address

The payroll enclave gateway address is payroll-gw.corp.example, reachable only from the finance VLAN.
"""


def test_a_fact_from_a_restricted_document_is_given_only_inside_its_audience(secured):
    with secured(kb_dir=None, fact_path=True) as client:
        assert upload(client, "payroll-gateway.md", FACT_DOC, audience="finance").status_code == 201
        question = {"message": "what is the payroll enclave gateway address?"}
        inside = client.post("/chat", json=question, headers=user("fiona", "finance"))
        assert inside.status_code == 200 and "payroll-gw.corp.example" in inside.json()["answer"]
        for outsider in (user("otto", "engineering"), user("nina")):
            outside = client.post("/chat", json=question, headers=outsider)
            assert outside.status_code == 200 and "payroll-gw.corp.example" not in outside.text
