"""The storage tests run each store on both engines: an SQLite file and a scratch Postgres database."""

from __future__ import annotations

import pytest


@pytest.fixture(params=["sqlite", "postgres"])
def database_url(request, tmp_path):
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'deskmate.sqlite'}"
    else:
        yield request.getfixturevalue("postgres_url")
