"""A Postgres connection that the server drops under a request is an outage (503 with what to do), however it
reaches the top of the request: through Database.connect, or raised raw from a pooled connection."""

from __future__ import annotations

import psycopg
import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy import text
from sqlalchemy.exc import OperationalError

from app.error_middleware import UnexpectedErrorMiddleware
from app.storage import Database, DatabaseUnavailable
from app.storage.database import is_database_outage


def _terminate(url: str, pid: int) -> None:
    """What a server restart does to a connection: the backend serving it goes away."""
    with psycopg.connect(url, autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", (pid,))


def _raw_dropped_connection_error(db: Database, url: str) -> OperationalError:
    with db.engine.connect() as conn:
        _terminate(url, conn.execute(text("SELECT pg_backend_pid()")).scalar())
        with pytest.raises(OperationalError) as raised:
            conn.execute(text("SELECT 1"))
    return raised.value


def test_a_connection_the_server_drops_inside_database_connect_is_database_unavailable(postgres_url):
    db = Database.open(postgres_url)
    try:
        with pytest.raises(DatabaseUnavailable, match="went away"):
            with db.connect() as conn:
                _terminate(postgres_url, conn.execute(text("SELECT pg_backend_pid()")).scalar())
                conn.execute(text("SELECT 1"))
        with db.connect() as conn:  # the pool hands out a working connection afterwards
            assert conn.execute(text("SELECT 1")).scalar() == 1
    finally:
        db.close()


def test_a_dropped_connection_raised_raw_still_answers_503_with_what_to_do(postgres_url):
    db = Database.open(postgres_url)
    try:
        error = _raw_dropped_connection_error(db, postgres_url)
    finally:
        db.close()
    assert is_database_outage(error)

    app = FastAPI()

    @app.get("/turn")
    def turn():
        raise error

    app.add_middleware(UnexpectedErrorMiddleware)
    with TestClient(app, raise_server_exceptions=False) as client:
        reply = client.get("/turn")
    assert reply.status_code == 503
    assert "database is unreachable" in reply.json()["detail"] and "try again" in reply.json()["detail"]


def test_a_bug_in_a_query_is_not_mistaken_for_an_outage(postgres_url):
    db = Database.open(postgres_url)
    try:
        with db.connect() as conn, pytest.raises(Exception) as raised:
            conn.execute(text("SELECT * FROM no_such_table"))
    finally:
        db.close()
    assert not is_database_outage(raised.value)
