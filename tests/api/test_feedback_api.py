"""POST /feedback and GET /feedback/stats through the real app; votes reach retrieval (or not, when off)."""

from __future__ import annotations

import logging

import pytest

from app.storage.database import Database, database_url_for

pytestmark = pytest.mark.slow
QUESTION = "How do I connect to the VPN on my Mac?"


def ask(client, message: str = QUESTION) -> dict:
    reply = client.post("/chat", json={"message": message}).json()
    assert reply["message_id"] == reply["trace_id"] and reply["sources"], reply
    return reply


def vote(client, reply: dict, rating: str, **extra):
    return client.post(
        "/feedback",
        json={"session_id": reply["session_id"], "message_id": reply["message_id"], "rating": rating, **extra},
    )


def test_a_vote_is_recorded_once_per_message_and_its_reason_is_redacted(serve):
    with serve() as client:
        reply = ask(client)
        first = vote(client, reply, "up")
        assert first.status_code == 201
        assert first.json() == {
            "status": "recorded",
            "message_id": reply["message_id"],
            "rating": "up",
            "chunks": len(reply["sources"]),
        }
        again = vote(client, reply, "down", reason="wrong steps, my password is Hunter2Secret! btw")
        assert again.status_code == 200 and again.json()["status"] == "updated"
        stats = client.get("/feedback/stats").json()
    assert stats["votes"] == {"up": 0, "down": 1, "total": 1} and stats["adjustment_enabled"] is True
    reason = stats["recent_reasons"][0]["reason"]
    assert "Hunter2Secret" not in reason and "[REDACTED:PASSWORD]" in reason


def test_the_chat_still_answers_when_the_feedback_store_fails(serve, make_settings, caplog):
    settings = make_settings()
    with serve(settings) as client:
        ask(client)
        store = Database(database_url_for(settings))  # the real SQLite file the app writes, broken under it
        with store.begin() as conn:
            conn.exec_driver_sql("DROP TABLE votes")
            conn.exec_driver_sql("DROP TABLE answers")
        store.close()
        with caplog.at_level(logging.WARNING, logger="app.chat_service"):
            response = client.post("/chat", json={"message": QUESTION})
    assert response.status_code == 200, response.text
    reply = response.json()
    assert reply["answer"] and reply["sources"]
    assert f"could not record answer {reply['message_id']} for feedback" in caplog.text


@pytest.mark.parametrize(
    "change, status",
    [
        ({"session_id": "someone-else"}, 404),
        ({"message_id": "0" * 32}, 404),
        ({"rating": "meh"}, 422),
        ({"message_id": "../etc"}, 422),
        ({"reason": "x" * 1001}, 422),
    ],
)
def test_feedback_on_an_unknown_message_or_with_bad_fields_is_refused(serve, change, status):
    with serve() as client:
        reply = ask(client)
        body = {"session_id": reply["session_id"], "message_id": reply["message_id"], "rating": "up", **change}
        response = client.post("/feedback", json=body)
        assert response.status_code == status and response.json()["detail"]
        assert client.get("/feedback/stats").json()["votes"]["total"] == 0


def _cited_chunk_after_votes(client, rating: str) -> dict:
    cited = None
    for _ in range(3):  # three people ask and vote: the minimum before retrieval changes
        reply = ask(client)
        cited = reply["sources"][0]["chunk_id"]
        assert vote(client, reply, rating).status_code == 201
    hits = client.post("/search", json={"query": QUESTION, "top_k": 20}).json()["results"]
    return next(h for h in hits if h["chunk_id"] == cited)


def test_three_down_votes_lower_the_cited_passage_within_the_bound(serve):
    with serve() as client:
        before = client.post("/search", json={"query": QUESTION}).json()["results"][0]
        hit = _cited_chunk_after_votes(client, "down")
        stats = client.get("/feedback/stats").json()
    assert 1 / 1.2 <= hit["feedback_multiplier"] < 1
    assert hit["score"] < before["score"] or hit["chunk_id"] != before["chunk_id"]
    assert stats["top_penalised"][0]["chunk_id"] == hit["chunk_id"]


def test_votes_do_not_touch_retrieval_when_adjustment_is_switched_off(serve):
    with serve(feedback_adjustment=False) as client:
        hit = _cited_chunk_after_votes(client, "down")
        assert client.get("/feedback/stats").json()["adjustment_enabled"] is False
    assert hit.get("feedback_multiplier") is None
