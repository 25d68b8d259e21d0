"""A throw-away Postgres database per test: created on the server at $DESKMATE_TEST_POSTGRES (default: the
local server, trust auth) under a unique name, dropped afterwards. Without a server the test is skipped,
unless DESKMATE_REQUIRE_POSTGRES=1 (CI), which fails it instead.

`private_postgres()` starts a server of the test's own, for tests that stop and restart it."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import uuid
from contextlib import contextmanager
from pathlib import Path
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
        # a net for a server that is not there, not a speed limit: connecting takes seconds on a busy machine
        admin = psycopg.connect(admin_url(), autocommit=True, connect_timeout=30)
    except psycopg.OperationalError as exc:
        if os.environ.get("DESKMATE_REQUIRE_POSTGRES") == "1":
            pytest.fail(f"PostgreSQL is required (DESKMATE_REQUIRE_POSTGRES=1) but unreachable: {exc}")
        pytest.skip(f"no PostgreSQL server at {admin_url()}: {exc}")
    name = f"deskmate_test_{uuid.uuid4().hex[:12]}"
    with admin:
        # from template0, which nobody connects to: a session on template1 (another run's, a developer's psql)
        # would make CREATE DATABASE fail with "source database is being accessed by other users"
        admin.execute(f'CREATE DATABASE "{name}" TEMPLATE template0')
        try:
            yield make_url(admin_url()).set(database=name).render_as_string(hide_password=False)
        finally:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


class PrivatePostgres:
    """A Postgres server of the test's own (initdb in a temporary directory, on a free port of 127.0.0.1, trust
    auth) that it may stop and start again: the machine's shared server is never restarted. initdb refuses
    to run as root, so as root the server runs as the `postgres` user."""

    def __init__(self, root: Path, port: int) -> None:
        self.root, self.port = root, port
        self.data = root / "pgdata"
        self.log = root / "postgres.log"
        self.url = f"postgresql://postgres@127.0.0.1:{port}/deskmate"
        as_postgres = os.geteuid() == 0
        self._prefix = ["runuser", "-u", "postgres", "--"] if as_postgres else []
        if as_postgres:
            shutil.chown(root, "postgres", "postgres")

    def _run(self, *args: str) -> None:
        subprocess.run(self._prefix + list(args), check=True, capture_output=True, text=True, timeout=120)

    def init(self) -> PrivatePostgres:
        self._run(_tool("initdb"), "-D", str(self.data), "-U", "postgres", "--auth=trust", "--no-sync")
        self.start()
        import psycopg

        with psycopg.connect(f"postgresql://postgres@127.0.0.1:{self.port}/postgres", autocommit=True) as admin:
            admin.execute("CREATE DATABASE deskmate")
        return self

    def start(self) -> None:
        options = f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.root} -c fsync=off"
        self._run(_tool("pg_ctl"), "-D", str(self.data), "-l", str(self.log), "-o", options, "-w", "-t", "60", "start")

    def stop(self) -> None:
        """A fast shutdown (what a restart or a failover does to open connections): clients are cut off."""
        self._run(_tool("pg_ctl"), "-D", str(self.data), "-m", "fast", "-w", "-t", "60", "stop")


def _tool(name: str) -> str:
    found = shutil.which(name)
    if found:
        return found
    for candidate in sorted(Path("/usr/lib/postgresql").glob(f"*/bin/{name}"), reverse=True):
        return str(candidate)
    return name


@contextmanager
def private_postgres() -> Iterator[PrivatePostgres]:
    """A private Postgres server with an empty `deskmate` database; stopped and deleted on exit. Skipped (with
    the reason) when initdb is missing, unless DESKMATE_REQUIRE_POSTGRES=1."""
    from tests.e2e.servers import free_port

    if not Path(_tool("initdb")).exists() or not Path(_tool("pg_ctl")).exists():
        if os.environ.get("DESKMATE_REQUIRE_POSTGRES") == "1":
            pytest.fail("PostgreSQL is required (DESKMATE_REQUIRE_POSTGRES=1) but initdb/pg_ctl are not installed")
        pytest.skip("initdb/pg_ctl are not installed: a private Postgres server cannot be started")
    root = Path(tempfile.mkdtemp(prefix="deskmate-pg-"))  # not under pytest's tmp_path: `postgres` must reach it
    server = PrivatePostgres(root, free_port())
    try:
        server.init()
        yield server
    finally:
        try:
            server.stop()
        except subprocess.SubprocessError:
            pass  # already stopped by the test
        shutil.rmtree(root, ignore_errors=True)
