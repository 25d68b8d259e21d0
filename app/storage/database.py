"""One SQLAlchemy engine for every relational store, on SQLite (embedded) or Postgres (server mode).

Why SQLAlchemy 2 Core over bare psycopg 3: the same statements run on both engines (the embedded default
must keep working with no server), Alembic migrations are built on it, and its pool (psycopg 3 underneath
on Postgres) gives pre-ping and bounded checkout. No ORM: the stores write plain rows.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from sqlalchemy import create_engine, event, text
from sqlalchemy.dialects import postgresql as pg_dialect
from sqlalchemy.dialects import sqlite as sqlite_dialect
from sqlalchemy.engine import Connection, Engine, make_url
from sqlalchemy.exc import DBAPIError, OperationalError

log = logging.getLogger(__name__)
logging.getLogger("alembic").setLevel(logging.WARNING)  # one line per plugin at every start-up otherwise

MIGRATIONS = Path(__file__).with_name("migrations")
# every replica runs the migrations at start-up; one at a time, under this Postgres advisory lock
_MIGRATION_LOCK = 0x6465736B6D617465  # "deskmate"
LOCK_POLL_S = 0.05
# Named locks (a turn's session lock) hold a connection for as long as they are held, so they come from a pool
# of their own: were they drawn from the stores' pool, enough concurrent turns would hold every connection
# while each waits for one more to read its session's owner — all stuck until the pool timeout (500s at 32
# clients). At most this many locks are held at once per process; further turns queue for a slot (within the
# same bounded wait). Per replica Postgres then sees at most 16 + 15 (stores) + 8 (checkpoints) connections.
LOCK_SLOTS = 16
# a WAL that grew while readers kept it from being checkpointed is cut back to this once it restarts
# (otherwise the file stays at its largest size until the next retention pass truncates it)
WAL_SIZE_LIMIT_BYTES = 16 * 1024 * 1024


class DatabaseUnavailable(RuntimeError):
    """The database cannot be reached (server down, restarting, full): answered 503, retried by the client."""


class SessionBusy(RuntimeError):
    """Another turn of the same session holds its lock (on this replica or another) past the wait: 409."""


class TurnsBusy(RuntimeError):
    """Every lock slot of this process stayed taken past the wait (far more turns at once than cores): 503."""


def database_url_for(settings) -> str:
    """DESKMATE_DATABASE_URL, or the embedded SQLite file in the data dir."""
    url = (settings.storage.database_url or "").strip()
    if url:
        return url
    return f"sqlite:///{Path(settings.storage.data_dir).resolve() / 'deskmate.sqlite'}"


def engine_url(url: str) -> str:
    """postgresql:// and postgres:// mean psycopg 3 (SQLAlchemy's default Postgres driver is psycopg2)."""
    for prefix in ("postgresql://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix) :]
    return url


def libpq_url(url: str) -> str:
    """The URL psycopg itself accepts (the LangGraph Postgres saver connects without SQLAlchemy)."""
    return make_url(engine_url(url)).set(drivername="postgresql").render_as_string(hide_password=False)


def saver_connection(url: str, *, read_only: bool = False, pool_size: int = 8):
    """The one place deskmate opens a connection that is not SQLAlchemy's: LangGraph's checkpoint savers take
    the driver's own (an `sqlite3.Connection`; a psycopg `ConnectionPool` on Postgres) and nothing else reads
    or writes through it — deskmate's own statements on the checkpoint tables go through a `Database`.

    SQLite: `url` is the checkpoint file's sqlite:/// URL; the file gets the embedded store's settings
    (`_sqlite_pragmas`), or is opened read-only. Postgres: the saver's documented connection settings —
    autocommit, no server-side prepared statements (they break behind PgBouncer), rows as dicts; `check` tests
    a pooled connection before handing it out (like SQLAlchemy's pre-ping), so after a Postgres restart the
    stale ones are replaced instead of failing one turn each. A turn waits at most `timeout` for a connection:
    with the server down the pool cannot make one, and the turn is answered 503 after that long, not after a
    longer hang (checkpoint reads and writes take milliseconds, so under load a free one comes far sooner)."""
    parsed = make_url(engine_url(url))
    if parsed.get_backend_name() == "sqlite":
        import sqlite3

        path = Path(parsed.database or "")
        if read_only:
            return sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)
        path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(str(path), check_same_thread=False, timeout=10)
        _sqlite_pragmas(conn, None)
        return conn
    from psycopg.rows import dict_row
    from psycopg_pool import ConnectionPool

    return ConnectionPool(
        libpq_url(url),
        min_size=1,
        max_size=pool_size,
        open=True,
        timeout=5,
        check=ConnectionPool.check_connection,
        kwargs={"autocommit": True, "prepare_threshold": None, "row_factory": dict_row, "connect_timeout": 5},
    )


def lock_key(name: str) -> int:
    """A stable signed 64-bit advisory-lock key for a name (a session id, a job kind)."""
    return int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "big", signed=True)


class Database:
    """The engine, its dialect, and the few things that differ between SQLite and Postgres."""

    def __init__(self, url: str, *, pool_size: int = 5, connect_timeout_s: float = 5.0) -> None:
        self.url = engine_url(url)
        parsed = make_url(self.url)
        self.dialect = parsed.get_backend_name()
        if self.dialect == "sqlite":
            if parsed.database and parsed.database != ":memory:":
                Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
            self.engine: Engine = create_engine(self.url, connect_args={"check_same_thread": False, "timeout": 10})
            event.listen(self.engine, "connect", _sqlite_pragmas)
        elif self.dialect == "postgresql":
            connect_args = {"connect_timeout": max(1, int(connect_timeout_s))}
            self.engine = create_engine(
                self.url,
                pool_size=pool_size,
                max_overflow=pool_size * 2,
                pool_pre_ping=True,
                pool_timeout=10,
                connect_args=connect_args,
            )
            self._lock_engine = create_engine(
                self.url,
                pool_size=LOCK_SLOTS,
                max_overflow=0,
                pool_pre_ping=True,
                pool_timeout=10,
                connect_args=connect_args,
            )
            self._lock_slots = threading.BoundedSemaphore(LOCK_SLOTS)
        else:
            raise ValueError(f"DESKMATE_DATABASE_URL must be sqlite:///PATH or postgresql://…, not {parsed.drivername}")
        self._local_locks: dict[str, threading.Lock] = {}
        self._local_guard = threading.Lock()

    @classmethod
    def open(cls, url: str, *, migrate: bool = True) -> Database:
        """The database at `url`, its schema brought to the newest revision (unless `migrate` is False)."""
        db = cls(url)
        if migrate:
            db.upgrade()
        return db

    @property
    def is_postgres(self) -> bool:
        return self.dialect == "postgresql"

    def describe(self) -> str:
        """The URL without its password, for logs and the CLI."""
        return make_url(self.url).render_as_string(hide_password=True)

    # --- schema -------------------------------------------------------------------------------------------
    def upgrade(self, revision: str = "head") -> str | None:
        """Run the Alembic migrations up to `revision`; returns the revision the database is now at."""
        from alembic import command

        with self.connect() as conn:
            if self.is_postgres:
                conn.execute(text("SELECT pg_advisory_lock(:k)"), {"k": _MIGRATION_LOCK})
                conn.commit()
            try:
                config = self._alembic_config(conn)
                command.upgrade(config, revision)
                conn.commit()
            finally:
                if self.is_postgres:
                    conn.execute(text("SELECT pg_advisory_unlock(:k)"), {"k": _MIGRATION_LOCK})
                    conn.commit()
            return self.revision(conn)

    def revision(self, conn: Connection | None = None) -> str | None:
        from alembic.runtime.migration import MigrationContext

        if conn is None:
            with self.connect() as own:
                return MigrationContext.configure(own).get_current_revision()
        return MigrationContext.configure(conn).get_current_revision()

    def _alembic_config(self, conn: Connection):
        from alembic.config import Config

        config = Config()
        config.set_main_option("script_location", str(MIGRATIONS))
        config.attributes["connection"] = conn
        return config

    # --- connections --------------------------------------------------------------------------------------
    @contextmanager
    def connect(self, engine: Engine | None = None) -> Iterator[Connection]:
        """A pooled connection; a server that cannot be reached is DatabaseUnavailable."""
        try:
            conn = (engine or self.engine).connect()
        except OperationalError as exc:
            raise DatabaseUnavailable(
                f"The database ({self.describe()}) cannot be reached: {_first_line(exc)}"
            ) from exc
        try:
            yield conn
        except OperationalError as exc:
            if self.is_postgres and _connection_lost(exc):
                raise DatabaseUnavailable(f"The database ({self.describe()}) went away: {_first_line(exc)}") from exc
            raise
        finally:
            conn.close()

    @contextmanager
    def begin(self) -> Iterator[Connection]:
        """A connection in a transaction, committed on success and rolled back on any error."""
        with self.connect() as conn:
            with conn.begin():
                yield conn

    def insert(self, table):
        """The dialect's INSERT, which has on_conflict_do_update / on_conflict_do_nothing on both engines."""
        return (pg_dialect.insert if self.is_postgres else sqlite_dialect.insert)(table)

    # --- cross-process locks ------------------------------------------------------------------------------
    @contextmanager
    def named_lock(self, name: str, *, wait_s: float) -> Iterator[None]:
        """Hold a lock named `name` across every process on this database, waiting at most `wait_s`.

        Postgres: a session-level advisory lock on a connection of its own (it dies with the process, so a
        replica killed mid-turn never leaves a session locked). SQLite: the embedded default is one process,
        so an in-process lock is the whole story. SessionBusy when the wait runs out."""
        if not self.is_postgres:
            with self._local_guard:
                lock = self._local_locks.setdefault(name, threading.Lock())
            if not lock.acquire(timeout=max(0.0, wait_s)):
                raise SessionBusy(name)
            try:
                yield
            finally:
                lock.release()
                with self._local_guard:
                    if not lock.locked():
                        self._local_locks.pop(name, None)
            return
        key = lock_key(name)
        deadline = time.monotonic() + max(0.0, wait_s)
        if not self._lock_slots.acquire(timeout=max(0.0, wait_s)):
            raise TurnsBusy(name)
        try:
            with self.connect(self._lock_engine) as conn:
                while not conn.execute(text("SELECT pg_try_advisory_lock(:k)"), {"k": key}).scalar():
                    conn.commit()
                    if time.monotonic() >= deadline:
                        raise SessionBusy(name)
                    time.sleep(LOCK_POLL_S)
                conn.commit()
                try:
                    yield
                finally:
                    try:
                        conn.execute(text("SELECT pg_advisory_unlock(:k)"), {"k": key})
                        conn.commit()
                    except DBAPIError:  # the connection died: the server already released the lock
                        conn.invalidate()
        finally:
            self._lock_slots.release()

    def close(self) -> None:
        self.engine.dispose()
        if self.is_postgres:
            self._lock_engine.dispose()


def _sqlite_pragmas(dbapi_connection, _record) -> None:
    cursor = dbapi_connection.cursor()
    # before WAL, which writes the header: a new file can then hand pages back (reclaim_sqlite); an existing
    # one takes the mode at its next VACUUM (`deskmate db vacuum`)
    cursor.execute("PRAGMA auto_vacuum = INCREMENTAL")
    cursor.execute("PRAGMA journal_mode = WAL")
    cursor.execute(f"PRAGMA journal_size_limit = {WAL_SIZE_LIMIT_BYTES}")
    cursor.execute("PRAGMA synchronous = NORMAL")
    cursor.execute("PRAGMA foreign_keys = ON")
    # deleted rows (closed tickets, pruned traces) are overwritten, not left readable in free pages
    cursor.execute("PRAGMA secure_delete = ON")
    cursor.close()


def reclaim_sqlite(dbapi_connection, *, vacuum: bool = False) -> None:
    """Hand an SQLite file's free pages back to the disk: all of them by rewriting the file (VACUUM, which
    also switches a file created before incremental auto-vacuum to it) or, cheaply, the pages retention
    freed (incremental vacuum); then the WAL truncated. Outside any transaction."""
    if vacuum:
        dbapi_connection.execute("VACUUM")
    # executescript steps the pragma to the end (one execute() frees a single page)
    dbapi_connection.executescript("PRAGMA incremental_vacuum;")
    dbapi_connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def _first_line(exc: BaseException) -> str:
    return str(getattr(exc, "orig", exc)).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


# SQLSTATE classes of a server that is gone or not yet back: 08 connection exceptions, 57P01-57P03 (an admin
# shutdown, a crash shutdown, "the database system is starting up / shutting down")
_OUTAGE_SQLSTATES = ("08", "57P01", "57P02", "57P03")
_OUTAGE_WORDS = ("connection", "shutting down", "starting up", "terminating", "server closed", "recovery mode")


def is_database_outage(exc: BaseException) -> bool:
    """True when `exc`, or an exception it was raised from, is a database server gone or not yet back (a
    restart under a turn, "the database system is starting up"), whichever client raised it."""
    import psycopg

    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, DatabaseUnavailable | psycopg.OperationalError):
            return True
        if isinstance(current, OperationalError) and _connection_lost(current):
            return True
        current = current.__cause__ or current.__context__
    return False


def _connection_lost(exc: OperationalError) -> bool:
    if getattr(exc, "connection_invalidated", False):
        return True
    sqlstate = str(getattr(getattr(exc, "orig", None), "sqlstate", "") or "")
    if sqlstate.startswith(_OUTAGE_SQLSTATES):
        return True
    text = str(exc).lower()
    return any(word in text for word in _OUTAGE_WORDS)
