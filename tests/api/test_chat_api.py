"""POST /chat through the real app: real MiniLM embeddings, real Chroma, real SQLite sessions."""

import pytest

from tests.conftest import REPO

ROOMLY = b"""# Booking a Meeting Room in Roomly

Roomly is the room-booking system for all offices.

## Book a room

1. Open https://roomly.example.test and sign in.
2. Pick the office and the date, then drag across the free slot.
3. Add the attendees and click Book. Roomly sends the invitation.
"""


@pytest.mark.slow
def test_vpn_on_a_mac_is_answered_from_the_bundled_kb_with_steps_and_a_citation(serve):
    with serve(kb_dir=REPO / "kb") as client:
        reply = client.post("/chat", json={"message": "How do I connect to the VPN on my Mac?"}).json()
    assert reply["action"] == "answer" and reply["user_os"] == "macos"
    assert "vpn.brightwave.example" in reply["answer"] and "1. " in reply["answer"]
    assert reply["sources"][0]["source"] == "kb/vpn-setup.md"
    assert reply["sources"][0]["section"] == "macOS"
    assert "[1] Connecting to the VPN" in reply["answer"]
    assert len(reply["trace_id"]) == 32 and reply["session_id"]


def test_an_uploaded_document_answers_a_question_only_it_covers(serve):
    with serve() as client:
        before = client.post("/chat", json={"message": "How do I book a meeting room in Roomly?"}).json()
        assert "couldn't find" in before["answer"]
        upload = client.post("/documents?wait=true", files={"file": ("roomly.md", ROOMLY, "text/markdown")})
        assert upload.status_code == 201, upload.text
        reply = client.post("/chat", json={"message": "How do I book a meeting room in Roomly?"}).json()
    assert reply["sources"][0]["source"] == "uploads/roomly.md"
    assert "drag across the free slot" in reply["answer"]


def test_a_session_continues_after_the_server_restarts(serve, make_settings):
    settings = make_settings()
    with serve(settings) as client:
        first = client.post("/chat", json={"message": "how do I connect to the vpn"}).json()
    with serve(settings) as client:  # same data dir, new process state
        follow_up = client.post("/chat", json={"message": "im on linux", "session_id": first["session_id"]}).json()
    assert follow_up["session_id"] == first["session_id"]
    assert "sudo openconnect vpn.example.test" in follow_up["answer"]


def test_a_vague_message_gets_a_clarifying_question(serve):
    with serve() as client:
        reply = client.post("/chat", json={"message": "It's not working"}).json()
    assert reply["action"] == "clarify" and reply["needs_input"] and reply["is_clarifying"]
    assert reply["answer"].endswith("?")


def test_a_typed_password_is_not_stored_in_session_memory(serve, make_settings):
    settings = make_settings()
    with serve(settings) as client:
        reply = client.post("/chat", json={"message": "My password is Zebra!Secret77 and the VPN rejects it"}).json()
    assert reply["redaction_notice"] and "Zebra!Secret77" not in reply["answer"]
    for path in settings.storage.data_dir.rglob("*"):
        if path.is_file():
            assert b"Zebra!Secret77" not in path.read_bytes(), path


@pytest.mark.parametrize(
    "body, expected",
    [
        ({"message": ""}, "empty"),
        ({"message": "   \n\t "}, "empty"),
        ({"message": "x" * 4001}, "limit is 4,000"),
        ({}, "'message' is required"),
        ({"message": 42}, "message"),
        ({"message": "hi", "user_os": "amiga"}, "windows, macos, linux"),
        ({"message": "hi", "session_id": "../../etc/passwd"}, "session_id"),
    ],
)
def test_bad_chat_requests_get_a_clear_422(serve, body, expected):
    with serve() as client:
        response = client.post("/chat", json=body)
    assert response.status_code == 422
    assert expected in response.json()["detail"]


def test_invalid_json_is_a_clear_422(serve):
    with serve() as client:
        response = client.post("/chat", content=b"{not json", headers={"content-type": "application/json"})
    assert response.status_code == 422 and "not valid JSON" in response.json()["detail"]


def test_a_body_that_is_not_a_json_object_is_a_clear_422(serve):
    with serve() as client:
        for response in (
            client.post("/chat", data={"message": "hi"}),  # a form
            client.post("/chat", content=b'{"message": "hi"}', headers={"content-type": "text/plain"}),
            client.post("/chat", json=["hi"]),
        ):
            assert response.status_code == 422
            assert response.json()["detail"] == (
                "The request body must be a JSON object sent with Content-Type: application/json."
            )


def test_control_characters_are_stripped_from_messages(serve):
    with serve() as client:
        reply = client.post("/chat", json={"message": "\x00\x07thanks\x1b"}).json()
    assert "welcome" in reply["answer"]


def test_health_and_readiness(serve):
    with serve() as client:
        assert client.get("/health").json() == {"status": "ok"}
        ready = client.get("/ready").json()
    assert ready["status"] == "ready" and ready["documents"] == 4 and ready["chunks"] > 4
    assert ready["embedding_dimension"] == 384 and ready["llm"] == "none"


def test_terminal_colour_codes_pasted_with_a_log_are_removed_whole(serve):
    with serve() as client:
        reply = client.post(
            "/chat",
            json={"message": "outlook says \x1b[31mERROR 0x800CCC0E\x1b[0m when sending", "session_id": "ansi-1"},
        ).json()
        history = client.get("/sessions/ansi-1").text
    assert "ERROR 0x800CCC0E" in history and "[31m" not in history and "[0m" not in history
    assert "[31m" not in reply["answer"]


def test_a_long_message_under_the_limit_is_answered_not_failed(serve):
    # ~3,900 characters is far more than the embedding model reads (256 word pieces): the query is cut
    # there, it does not fail the turn
    message = (
        "My laptop cannot connect to the VPN from home since this morning, it says the server is unreachable. "
    ) * 38
    assert len(message) < 4000
    with serve() as client:
        reply = client.post("/chat", json={"message": message})
        search = client.get("/search", params={"q": message[:3000]})
    assert reply.status_code == 200, reply.text
    assert reply.json()["answer"]
    assert search.status_code == 200 and search.json()["results"], search.text
