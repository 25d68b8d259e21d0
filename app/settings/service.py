"""Settings of the service itself: serving, storage, background jobs, retention."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, field_validator

from app.settings.base import BUNDLED_KB_DIR, Group, env


class ServerSettings(Group):
    """How `deskmate serve` listens, logs and shuts down."""

    host: str = Field(
        "127.0.0.1", validation_alias=env("DESKMATE_HOST"), description="Address `deskmate serve` binds to."
    )
    port: int = Field(8000, validation_alias=env("DESKMATE_PORT"), description="Port `deskmate serve` listens on.")
    allowed_hosts: str = Field(
        "",
        max_length=2000,
        validation_alias=env("DESKMATE_ALLOWED_HOSTS"),
        description="Host names the server answers to, comma-separated (`*`: any); a request naming another "
        "host gets 400, which stops DNS rebinding. Empty: the bind address, localhost, 127.0.0.1 and ::1 (any "
        "name when bound to 0.0.0.0 — set it there).",
    )
    log_level: str = Field("INFO", validation_alias=env("DESKMATE_LOG_LEVEL"), description="Python logging level.")
    shutdown_timeout_s: float = Field(
        20.0,
        gt=0,
        le=600,
        validation_alias=env("DESKMATE_SHUTDOWN_TIMEOUT_S"),
        description="On SIGTERM/SIGINT: how long in-flight requests may finish; the process exits after at "
        "most this plus 10 s whatever is still running.",
    )
    header_timeout_s: float = Field(
        10.0,
        gt=0,
        le=300,
        validation_alias=env("DESKMATE_HEADER_TIMEOUT_S"),
        description="A connection whose request line and headers have not all arrived within this many seconds "
        "is closed (slow-header clients cannot hold sockets).",
    )
    keep_alive_s: int = Field(
        5,
        ge=1,
        le=300,
        validation_alias=env("DESKMATE_KEEP_ALIVE_S"),
        description="Idle keep-alive connections are closed after this many seconds (keep it above a reverse "
        "proxy's upstream keep-alive timeout, so the proxy never reuses a closing connection).",
    )
    tracemalloc_file: Path | None = Field(
        None,
        validation_alias=env("DESKMATE_TRACEMALLOC_FILE"),
        description="Memory investigation (costs memory and speed; off when unset): `deskmate serve` traces "
        "allocations, and each SIGUSR1 after the first appends the allocation sites that grew since "
        "the first to this file (bench/soak.py --tracemalloc does this).",
    )


class StorageSettings(Group):
    """Where data lives: the data dir, the relational database, the vector store, the bundled knowledge base."""

    data_dir: Path = Field(
        Path("data"),
        validation_alias=env("DESKMATE_DATA_DIR"),
        description="Where Chroma, sessions and uploads live (created if missing).",
    )
    database_url: str = Field(
        "",
        validation_alias=env("DESKMATE_DATABASE_URL"),
        description="Where tickets, votes, traces, sessions and their owners live: empty for the embedded SQLite "
        "files in the data dir, or postgresql://user:pass@host:5432/db for server mode (replicas "
        "share it; migrations run at start-up and by `deskmate db upgrade`).",
    )
    session_lock_wait_s: float = Field(
        60.0,
        ge=0,
        le=600,
        validation_alias=env("DESKMATE_SESSION_LOCK_WAIT_S"),
        description="How long a turn waits for another turn of the same session (on any replica) before it is "
        "answered 409.",
    )
    min_free_mb: int = Field(
        200,
        ge=0,
        le=1_000_000,
        validation_alias=env("DESKMATE_MIN_FREE_MB"),
        description="Free space (MB) the data directory's disk must keep: below it writes (chat turns, uploads, "
        "feedback, tickets) answer 507 while reads keep working, and /ready says degraded; 0 turns "
        "the check off.",
    )
    vector_write_timeout_s: float = Field(
        60.0,
        gt=0,
        le=3600,
        validation_alias=env("DESKMATE_VECTOR_WRITE_TIMEOUT_S"),
        description="Longest a write into the vector store (an upload's chunks, a delete) may take before it is "
        "abandoned and answered 503, so a stuck store cannot hang the process.",
    )
    chroma_mode: Literal["persistent", "server"] = Field(
        "persistent",
        validation_alias=env("CHROMA_MODE", "DESKMATE_CHROMA_MODE"),
        description="persistent (embedded, under the data dir) or server (Chroma HTTP server).",
    )
    chroma_host: str = Field(
        "127.0.0.1",
        validation_alias=env("CHROMA_HOST", "DESKMATE_CHROMA_HOST"),
        description="Chroma server host (server mode).",
    )
    chroma_port: int = Field(
        8001,
        validation_alias=env("CHROMA_PORT", "DESKMATE_CHROMA_PORT"),
        description="Chroma server port (server mode).",
    )
    chroma_ssl: bool = Field(
        False,
        validation_alias=env("CHROMA_SSL", "DESKMATE_CHROMA_SSL"),
        description="Use HTTPS to reach the Chroma server.",
    )
    chroma_collection: str = Field(
        "deskmate_chunks",
        validation_alias=env("CHROMA_COLLECTION", "DESKMATE_CHROMA_COLLECTION"),
        min_length=3,
        max_length=60,
        description=(
            "Collection holding the chunks (a second collection `<name>_documents` holds one record per document)."
        ),
    )
    kb_dir: Path | None = Field(
        BUNDLED_KB_DIR,
        validation_alias=env("DESKMATE_KB_DIR"),
        description=(
            "Folder indexed at start-up (the bundled sample KB by default); empty to skip. Files removed "
            "from it are removed from the index."
        ),
    )

    @field_validator("kb_dir", mode="before")
    @classmethod
    def _empty_means_unset(cls, value):
        return None if isinstance(value, str) and not value.strip() else value

    @property
    def uses_postgres(self) -> bool:
        return self.database_url.strip().startswith(("postgresql://", "postgres://", "postgresql+"))

    @property
    def chroma_dir(self) -> Path:
        return self.data_dir / "chroma"

    @property
    def sessions_db(self) -> Path:
        return self.data_dir / "sessions.sqlite"

    @property
    def uploads_dir(self) -> Path:
        return self.data_dir / "uploads"

    @property
    def traces_db(self) -> Path:
        return self.data_dir / "traces.sqlite"

    @property
    def tickets_db(self) -> Path:
        return self.data_dir / "tickets.sqlite"


class JobsSettings(Group):
    """Background work: ingestion jobs, their workers, source syncs."""

    inprocess_worker: bool | None = Field(
        None,
        validation_alias=env("DESKMATE_INPROCESS_WORKER"),
        description="Run ingestion jobs (uploads, source syncs) in a thread of `deskmate serve`. Default: on with "
        "the embedded database (one command runs everything), off with DESKMATE_DATABASE_URL "
        "(server mode runs `deskmate worker` processes, and the replicas keep their CPU for chats).",
    )
    job_lease_s: float = Field(
        60.0,
        ge=3,
        le=3600,
        validation_alias=env("DESKMATE_JOB_LEASE_S"),
        description="A running job's worker renews its lease every second; a job whose lease runs out (the "
        "worker was killed) is run again from the start by another worker.",
    )
    job_max_attempts: int = Field(
        3,
        ge=1,
        le=20,
        validation_alias=env("DESKMATE_JOB_MAX_ATTEMPTS"),
        description="How many times a job whose worker died is started before it is failed with a message.",
    )
    upload_wait_s: float = Field(
        300.0,
        ge=0,
        le=3600,
        validation_alias=env("DESKMATE_UPLOAD_WAIT_S"),
        description="How long POST /documents?wait=true waits for the upload's job before answering 202 with it.",
    )
    kb_sync_wait_s: float = Field(
        600.0,
        ge=0,
        le=7200,
        validation_alias=env("DESKMATE_KB_SYNC_WAIT_S"),
        description="How long a starting replica waits for another one's sync of the bundled knowledge base.",
    )
    source_schedule_interval_s: float = Field(
        30.0,
        ge=0.1,
        le=3600,
        validation_alias=env("DESKMATE_SOURCE_SCHEDULE_INTERVAL_S"),
        description="How often deskmate looks for synced sources whose schedule (`every 30m`) has come round "
        "and starts their sync (one at a time per source; of several replicas, one starts it).",
    )

    @field_validator("inprocess_worker", mode="before")
    @classmethod
    def _empty_means_unset(cls, value):
        return None if isinstance(value, str) and not value.strip() else value


class RetentionSettings(Group):
    """What is kept, how long, and how often retention runs."""

    session_idle_days: float = Field(
        30.0,
        gt=0,
        le=3650,
        validation_alias=env("DESKMATE_SESSION_IDLE_DAYS"),
        description="A conversation untouched for this long is deleted with its checkpoints.",
    )
    trace_max_mb: float = Field(
        200.0,
        gt=0,
        le=1_000_000,
        validation_alias=env("DESKMATE_TRACE_MAX_MB"),
        description="Local traces are kept under this total size (the oldest go first), beside the age and "
        "count limits.",
    )
    retention_interval_s: float = Field(
        600.0,
        ge=1,
        le=86400,
        validation_alias=env("DESKMATE_RETENTION_INTERVAL_S"),
        description="How often the background pass expires idle sessions, prunes checkpoints and traces, and "
        "hands freed space back to SQLite.",
    )
    trace_retention_days: float = Field(
        14.0,
        gt=0,
        le=3650,
        validation_alias=env("DESKMATE_TRACE_RETENTION_DAYS"),
        description="Local traces older than this are deleted.",
    )
    insights_retention_days: float = Field(
        396.0,
        gt=0,
        le=3650,
        validation_alias=env("DESKMATE_INSIGHTS_RETENTION_DAYS"),
        description=(
            "The outcome record of each chat turn (what GET /admin/insights and `deskmate report` count) is "
            "kept this long: 13 months by default, so a month compares with the same month a year before. "
            "The question text of an unanswered turn goes earlier, with the traces "
            "(DESKMATE_TRACE_RETENTION_DAYS)."
        ),
    )
    trace_max_runs: int = Field(
        20_000,
        ge=100,
        le=10_000_000,
        validation_alias=env("DESKMATE_TRACE_MAX_RUNS"),
        description="At most this many local traces are kept (the oldest go first).",
    )
