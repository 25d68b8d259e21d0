"""A throw-away Postgres database per test: created on the server at $DESKMATE_TEST_POSTGRES (default: the
local server, trust auth) under a unique name, dropped afterwards. Without a server the test is skipped,
unless DESKMATE_REQUIRE_POSTGRES=1 (CI), which fails it instead."""

from __future__ import annotations

import os
import uuid
from contextlib import contextmanager
from typing import Iterator

import pytest

ADMIN_URL = "postgresql://postgres@127.0.0.1:5432/postgres"


def admin_url() -> str:
    return os.environ.get("DESKMATE_TEST_POSTGRES", ADMIN_URL)


@contextmanager
def scratch_database() -> Iterator[str]:
    """The URL of a new, empty database; dropped (with its connections) on exit."""
    import psycopg
    from sqlalchemy.engine import make_url

    try:
        admin = psycopg.connect(admin_url(), autocommit=True, connect_timeout=3)
    except psycopg.OperationalError as exc:
        if os.environ.get("DESKMATE_REQUIRE_POSTGRES") == "1":
            pytest.fail(f"PostgreSQL is required (DESKMATE_REQUIRE_POSTGRES=1) but unreachable: {exc}")
        pytest.skip(f"no PostgreSQL server at {admin_url()}: {exc}")
    name = f"deskmate_test_{uuid.uuid4().hex[:12]}"
    with admin:
        admin.execute(f'CREATE DATABASE "{name}"')
        try:
            yield make_url(admin_url()).set(database=name).render_as_string(hide_password=False)
        finally:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
