"""Document context at upload, filtered search (/search and /chat), and the lexical index across restarts —
through the real app with the real MiniLM model and a real Chroma."""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.slow

PASSWORD_HOWTO = (
    b"# Resetting your password\n\n## Steps\n\n1. Open password.example.test.\n"
    b"2. Click Forgot password and follow the e-mail link.\n"
)
PASSWORD_POLICY = (
    b"# Password policy\n\nPasswords must be 14 characters long and are changed every year. Never reuse a password.\n"
)
PRINTER = b"# Kiosk printers\n\nTap your badge on the printer and choose Release all to print your jobs.\n"
HOWTO = {
    "context_type": "how-to",
    "content_domain": "Accounts",
    "document_category": ["guide"],
    "relevance_tags": "password, self-service",
    "description": "Self-service reset",
}
POLICY = {"context_type": "policy", "content_domain": "accounts, security", "document_category": "policy"}


def upload(client, name: str, data: bytes, form: dict | None = None):
    response = client.post("/documents?wait=true", files={"file": (name, data)}, data=form or {})
    assert response.status_code in (200, 201), response.text
    return response.json()["document"]


def sources(response) -> set[str]:
    return {hit["source"] for hit in response.json()["results"]}


def test_documents_carry_their_context_and_filtered_search_returns_only_matching_ones(serve):
    with serve(kb_dir=None) as client:
        howto = upload(client, "reset.md", PASSWORD_HOWTO, HOWTO)
        upload(client, "policy.md", PASSWORD_POLICY, POLICY)
        upload(client, "kiosk.md", PRINTER)  # no context at all
        assert howto["context"] == {
            "context_type": ["how-to"],
            "content_domain": ["accounts"],
            "document_category": ["guide"],
            "relevance_tags": ["password", "self-service"],
            "description": "Self-service reset",
        }
        listed = {d["source"]: d["context"] for d in client.get("/documents").json()["documents"]}
        assert listed["uploads/policy.md"]["content_domain"] == ["accounts", "security"]
        assert listed["uploads/kiosk.md"] is None

        unfiltered = client.post("/search", json={"query": "password"})
        assert {"uploads/reset.md", "uploads/policy.md"} <= sources(unfiltered)
        policy_only = client.post(
            "/search", json={"query": "how do I reset my password", "filters": {"context_type": ["Policy"]}}
        )
        assert policy_only.status_code == 200 and sources(policy_only) == {"uploads/policy.md"}
        by_domain = client.get(
            "/search", params={"q": "password", "filters": json.dumps({"content_domain": "security"})}
        )
        assert sources(by_domain) == {"uploads/policy.md"}
        nothing = client.post("/search", json={"query": "printer", "filters": {"context_type": "how-to"}})
        assert "uploads/kiosk.md" not in sources(nothing)  # untagged documents never match a filter

        hit = unfiltered.json()["results"][0]
        assert {"score", "dense_score", "lexical_score", "origin", "confident"} <= set(hit)
        assert 0 <= hit["score"] <= 1

        question = {"message": "How do I reset my password?"}
        plain = client.post("/chat", json=question).json()
        assert plain["sources"][0]["source"] == "uploads/reset.md"
        filtered = client.post("/chat", json=question | {"filters": {"context_type": "policy"}}).json()
        assert "uploads/reset.md" not in {s["source"] for s in filtered["sources"]}


@pytest.mark.parametrize(
    "call",
    [
        lambda c: c.post("/search", json={"query": "password", "filters": {"colour": ["red"]}}),
        lambda c: c.get("/search", params={"q": "password", "filters": '{"colour": "red"}'}),
        lambda c: c.post("/chat", json={"message": "password", "filters": {"colour": "red"}}),
    ],
)
def test_a_filter_naming_an_unknown_field_is_a_422_that_names_the_fields(serve, call):
    with serve(kb_dir=None) as client:
        response = call(client)
    assert response.status_code == 422
    assert "colour" in response.json()["detail"] and "context_type" in response.json()["detail"]


def test_bad_filters_and_incomplete_contexts_are_refused_and_change_nothing(serve):
    with serve(kb_dir=None) as client:
        assert client.get("/search", params={"q": "x", "filters": "{not json"}).status_code == 422
        assert client.post("/search", json={"query": "x", "filters": {"context_type": []}}).status_code == 422
        too_long = client.post("/search", json={"query": "x" * 5000})
        assert too_long.status_code == 422 and too_long.json()["detail"].startswith("'query':")  # the field is named
        partial = client.post(
            "/documents?wait=true", files={"file": ("reset.md", PASSWORD_HOWTO)}, data={"context_type": "how-to"}
        )
        assert partial.status_code == 422
        assert "content_domain, document_category are required" in partial.json()["detail"]
        assert client.get("/documents").json()["documents"] == []


def test_the_same_file_with_a_new_context_is_reindexed(serve):
    with serve(kb_dir=None) as client:
        upload(client, "reset.md", PASSWORD_HOWTO, HOWTO)
        again = client.post("/documents?wait=true", files={"file": ("reset.md", PASSWORD_HOWTO)}, data=POLICY)
        assert again.json()["status"] == "replaced" and again.json()["document"]["context"]["context_type"] == [
            "policy"
        ]
        found = client.post("/search", json={"query": "reset password", "filters": {"context_type": "policy"}})
        assert sources(found) == {"uploads/reset.md"}


def test_the_lexical_index_survives_a_restart_and_follows_deletes(serve, make_settings):
    settings = make_settings(kb_dir=None)
    with serve(settings) as client:
        doc = upload(client, "kiosk.md", PRINTER)
        upload(client, "reset.md", PASSWORD_HOWTO)
    with serve(settings) as client:  # a new process: BM25 is rebuilt from Chroma at start-up
        hits = client.post("/search", json={"query": "release badge kiosk"}).json()["results"]
        assert hits[0]["source"] == "uploads/kiosk.md" and hits[0]["lexical_score"] > 0
        assert client.delete(f"/documents/{doc['id']}").status_code == 204
        after = client.post("/search", json={"query": "release badge kiosk"}).json()["results"]
        assert "uploads/kiosk.md" not in {h["source"] for h in after}
    with serve(settings) as client:
        after_restart = client.post("/search", json={"query": "release badge kiosk"}).json()["results"]
        assert "uploads/kiosk.md" not in {h["source"] for h in after_restart}


def test_a_password_typed_into_admin_search_is_searched_and_echoed_redacted(serve):
    with serve(kb_dir=None) as client:
        upload(client, "reset.md", PASSWORD_HOWTO, HOWTO)
        for reply in (
            client.post("/search", json={"query": "reset my password, it is Tr0ub4dor&3x9"}),
            client.get("/search", params={"q": "reset my password, it is Tr0ub4dor&3x9"}),
        ):
            assert reply.status_code == 200, reply.text
            assert "Tr0ub4dor" not in reply.text
            assert reply.json()["query"].startswith("reset my password, it is [REDACTED:")
            assert sources(reply) == {"uploads/reset.md"}


def test_a_presence_state_or_a_german_noun_reaches_search_as_typed_when_names_are_removed(serve):
    """With names removed from every message (`DESKMATE_REDACT_MEMORY` with PERSON), the status word "Away"
    and the German "Drucker" are searched as typed, while a person's name is still removed."""
    with serve(kb_dir=None, redact_memory="EMAIL,PERSON") as client:
        upload(client, "kiosk.md", PRINTER)
        for typed in ("My Teams status is stuck on Away", "Der Drucker im zweiten Stock druckt nicht"):
            reply = client.post("/search", json={"query": typed})
            assert reply.status_code == 200, reply.text
            assert reply.json()["query"] == typed
        named = client.post("/search", json={"query": "my manager Alice Johnson cannot print"}).json()["query"]
        assert named == "my manager [REDACTED:PERSON_1] cannot print"


def test_a_typing_slip_is_searched_and_answered_as_the_word_the_documents_hold(serve):
    with serve(kb_dir=None) as client:
        upload(client, "reset.md", PASSWORD_HOWTO)
        upload(client, "kiosk.md", PRINTER)
        search = client.post("/search", json={"query": "forgot my pasword"}).json()
        chat = client.post("/chat", json={"message": "forgot my pasword, help"}).json()
        as_typed = client.post("/search", json={"query": "my kiosk badge"}).json()
    assert search["query"] == "forgot my pasword" and search["searched_as"] == "forgot my password"
    assert search["results"][0]["source"] == "uploads/reset.md"
    assert chat["sources"] and chat["sources"][0]["source"] == "uploads/reset.md"
    assert "password.example.test" in chat["answer"]
    assert as_typed["searched_as"] is None  # nothing read differently
