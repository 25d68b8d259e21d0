"""An exception no handler expected still answers JSON with a request id, logged once with its stack."""

import logging
import sqlite3

from fastapi.testclient import TestClient

from app.main import create_app


def _break_session_store(settings) -> None:
    """A real fault from outside the process: the sessions database loses its checkpoint table."""
    with sqlite3.connect(settings.storage.sessions_db) as db:
        db.execute("DROP TABLE checkpoints")


def test_a_broken_session_store_answers_json_500_with_a_request_id_and_logs_the_stack_once(make_settings, caplog):
    settings = make_settings(kb_dir="")
    with TestClient(create_app(settings), raise_server_exceptions=False, base_url="http://localhost") as client:
        _break_session_store(settings)
        caplog.clear()
        with caplog.at_level(logging.ERROR):
            reply = client.post("/chat", json={"message": "my printer is jammed"})
    assert reply.status_code == 500
    assert reply.headers["content-type"] == "application/json"
    body = reply.json()
    assert body["request_id"] == reply.headers["X-Request-ID"]
    assert body["request_id"] in body["detail"] and "OperationalError" in body["detail"]
    logged = [r for r in caplog.records if r.exc_info or r.exc_text]
    assert len(logged) == 1 and body["request_id"] in logged[0].getMessage()
    assert "no such table" in (logged[0].exc_text or "")


def test_under_v1_the_same_failure_answers_in_openais_error_shape(make_settings):
    settings = make_settings(kb_dir="")
    with TestClient(create_app(settings), raise_server_exceptions=False, base_url="http://localhost") as client:
        _break_session_store(settings)
        reply = client.post(
            "/v1/chat/completions",
            json={"model": "deskmate", "messages": [{"role": "user", "content": "my printer is jammed"}]},
        )
    assert reply.status_code == 500
    error = reply.json()["error"]
    assert error["type"] == "server_error" and reply.headers["X-Request-ID"] in error["message"]


def test_every_answer_carries_a_request_id_and_a_plain_proxy_id_is_kept(make_settings):
    with TestClient(create_app(make_settings(kb_dir="")), base_url="http://localhost") as client:
        mine = client.get("/health", headers={"X-Request-ID": "edge-4f1c2a9b"})
        hostile = client.get("/health", headers={"X-Request-ID": 'x" onload=alert(1)'})
        missing = client.get("/no-such-page")
    assert mine.headers["X-Request-ID"] == "edge-4f1c2a9b"
    assert len(hostile.headers["X-Request-ID"]) == 32 and "alert" not in hostile.headers["X-Request-ID"]
    assert missing.status_code == 404 and len(missing.headers["X-Request-ID"]) == 32


def test_a_secret_in_the_failing_request_does_not_reach_the_log(make_settings, caplog):
    settings = make_settings(kb_dir="")
    with TestClient(create_app(settings), raise_server_exceptions=False, base_url="http://localhost") as client:
        _break_session_store(settings)
        caplog.clear()
        with caplog.at_level(logging.INFO):
            client.post("/chat", json={"message": "my password is Hunter2-Sup3r-S3cret! and the vpn fails"})
    assert caplog.records and not any(
        "Hunter2-Sup3r-S3cret" in (r.getMessage() + (r.exc_text or "")) for r in caplog.records
    )
