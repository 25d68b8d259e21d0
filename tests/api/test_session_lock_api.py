"""Through the real app: a turn of a session another turn holds waits a bounded time, then gets a clear 409;
a database that cannot be reached is a 503 with a message, not a stack trace."""

from __future__ import annotations

from app.storage import DatabaseUnavailable


def test_a_turn_of_a_session_still_being_answered_gets_409_and_the_next_one_is_answered(serve):
    with serve(session_lock_wait_s=0.2) as client:
        first = client.post("/chat", json={"message": "How do I connect to the VPN on my Mac?"}).json()
        sessions = client.app.state.resources.sessions
        with sessions.turn_lock(first["session_id"]):  # another turn of it, still running
            busy = client.post("/chat", json={"message": "and on Windows?", "session_id": first["session_id"]})
        assert busy.status_code == 409
        assert "still being answered" in busy.json()["detail"]
        history = client.get(f"/sessions/{first['session_id']}").json()["messages"]
        assert [m["content"] for m in history if m["role"] == "user"] == ["How do I connect to the VPN on my Mac?"]
        after = client.post("/chat", json={"message": "and on Windows?", "session_id": first["session_id"]})
        assert after.status_code == 200


def test_a_database_that_went_away_answers_503_with_what_to_do_then_recovers(serve, monkeypatch):
    with serve() as client:
        database = client.app.state.resources.database
        working = database.connect

        def unreachable():
            raise DatabaseUnavailable("The database (postgresql://db/deskmate) cannot be reached: connection refused")

        monkeypatch.setattr(database, "connect", unreachable)  # every store's next checkout, as with the server down
        down = client.post("/chat", json={"message": "How do I connect to the VPN on my Mac?"})
        assert down.status_code == 503 and "database is unreachable" in down.json()["detail"]
        monkeypatch.setattr(database, "connect", working)  # the server is back: no restart needed
        assert client.post("/chat", json={"message": "How do I connect to the VPN on my Mac?"}).status_code == 200
