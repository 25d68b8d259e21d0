"""Copy an SQLite data dir (today's embedded layout or the older one-file-per-store layout) into the
configured database — `deskmate db migrate-from-sqlite PATH`.

Every row of every relational table is copied as it is (an existing row with the same key is left alone, so
a second run adds nothing), and each session's newest checkpoint — the only one deskmate keeps — is written
through the target's LangGraph saver, so a conversation continues where it stopped."""

from __future__ import annotations

import json
import logging
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import Checkpoint
from sqlalchemy import create_engine, func, inspect, select, text
from sqlalchemy.engine import Connection
from sqlalchemy.pool import NullPool

from app.storage.database import Database, saver_connection
from app.storage.schema import metadata

log = logging.getLogger(__name__)

BATCH = 500
# where each table lived in the one-file-per-store layout (the embedded layout has them all in deskmate.sqlite)
LEGACY_FILES = {
    "tickets": "tickets.sqlite",
    "ticket_comments": "tickets.sqlite",
    "answers": "feedback.sqlite",
    "cited_chunks": "feedback.sqlite",
    "votes": "feedback.sqlite",
    "runs": "traces.sqlite",
    "run_feedback": "traces.sqlite",
    "session_owners": "sessions.sqlite",
    "conversation_aliases": "sessions.sqlite",
    "session_activity": "sessions.sqlite",
    "sources": "sources.sqlite",
    "source_documents": "sources.sqlite",
}
SOURCE_TABLES = ("sources", "source_documents")
COPY_ORDER = (
    "tickets",
    "ticket_comments",
    "cited_chunks",
    "answers",
    "votes",
    "runs",
    "run_feedback",
    "session_owners",
    "conversation_aliases",
    "session_activity",
    *SOURCE_TABLES,
)
# before the compact feedback tables, an answer's citations were rows of `answer_chunks`
FORMER_NAMES = {"cited_chunks": ("cited_chunks", "answer_chunks")}


@dataclass
class ImportReport:
    tables: dict[str, tuple[int, int]] = field(default_factory=dict)  # table → (rows in the source, rows copied)
    sessions: tuple[int, int] = (0, 0)  # (sessions in the source, sessions copied)

    def lines(self) -> list[str]:
        out = [f"{name}: {copied} of {found} row(s) copied" for name, (found, copied) in self.tables.items()]
        out.append(f"sessions: {self.sessions[1]} of {self.sessions[0]} conversation(s) copied")
        return out


def _source_for(data_dir: Path, table: str) -> Path | None:
    for name in ("deskmate.sqlite", LEGACY_FILES[table]):
        path = data_dir / name
        if path.is_file() and _has_table(path, table):
            return path
    return None


@contextmanager
def _reading(path: Path) -> Iterator[Connection]:
    """A read-only connection to an SQLite file (SQLAlchemy, like every store; the file is never written)."""
    engine = create_engine(f"sqlite:///file:{path.resolve()}?mode=ro&uri=true", poolclass=NullPool)
    try:
        with engine.connect() as conn:
            yield conn
    finally:
        engine.dispose()


def _has_table(path: Path, table: str) -> bool:
    with _reading(path) as conn:
        return any(_table_in(conn, name) for name in FORMER_NAMES.get(table, (table,)))


def _table_in(conn: Connection, table: str) -> bool:
    return inspect(conn).has_table(table)


def _read_rows(conn: Connection, name: str) -> list[dict]:
    """The rows of `name` in a source file, in today's shape (citations rows of old become packed ids)."""
    from app.adapters.feedback import chunk_ref, pack_refs

    legacy = _table_in(conn, "answer_chunks")
    if name == "cited_chunks" and not _table_in(conn, "cited_chunks"):
        passages: dict[str, dict] = {}
        found = conn.execute(text("SELECT key, chunk_id, label, source FROM answer_chunks ORDER BY message_id, key"))
        for passage in found.mappings():
            passages.setdefault(passage["key"], {"id": chunk_ref(passage["key"]), **dict(passage)})
        return list(passages.values())
    rows = [dict(row) for row in conn.execute(text(f'SELECT * FROM "{name}"')).mappings()]  # noqa: S608 (a known name)
    if name == "answers" and legacy and rows and "cited" not in rows[0]:
        keys: dict[str, list[str]] = {}
        for message_id, key in conn.execute(text("SELECT message_id, key FROM answer_chunks ORDER BY message_id, key")):
            keys.setdefault(message_id, []).append(key)
        for row in rows:
            row["cited"] = pack_refs([chunk_ref(key) for key in keys.get(row["message_id"], [])])
    return rows


def import_data_dir(data_dir: Path, target: Database, sessions) -> ImportReport:
    """Copy every row and every session of `data_dir` into `target` (and `sessions`, the target SessionStore)."""
    data_dir = Path(data_dir)
    if not data_dir.is_dir():
        raise FileNotFoundError(f"{data_dir} is not a folder; give the data dir that holds the .sqlite files")
    report = ImportReport()
    for name in COPY_ORDER:
        source = _source_for(data_dir, name)
        report.tables[name] = _copy_table(name, source, target) if source is not None else (0, 0)
    report.sessions = _copy_sessions(data_dir / "sessions.sqlite", sessions)
    return report


def import_legacy_files(data_dir: Path, target: Database, tables: tuple[str, ...] = COPY_ORDER) -> ImportReport:
    """Rows an older deskmate kept in one file per store (tickets.sqlite, feedback.sqlite, traces.sqlite, the
    owner and alias tables of sessions.sqlite) copied into `target`; conversations stay where they are. Safe to
    run again: a row already there is skipped."""
    report = ImportReport()
    for name in tables:
        path = Path(data_dir) / LEGACY_FILES[name]
        found = path.is_file() and _has_table(path, name)
        report.tables[name] = _copy_table(name, path, target) if found else (0, 0)
    return report


def _copy_table(name: str, source: Path, target: Database) -> tuple[int, int]:
    table = metadata.tables[name]
    with _reading(source) as conn:
        rows = _read_rows(conn, name)
    wanted = {c.name for c in table.columns}
    for row in rows:
        if name == "runs" and "path" not in row:  # the older trace table kept the path inside the record only
            row["path"] = json.dumps(json.loads(row["record"]).get("path") or [])
        for extra in set(row) - wanted:
            row.pop(extra)
    with target.begin() as conn:
        before = conn.execute(select(func.count()).select_from(table)).scalar_one()
        for start in range(0, len(rows), BATCH):
            conn.execute(target.insert(table).on_conflict_do_nothing(), rows[start : start + BATCH])
        after = conn.execute(select(func.count()).select_from(table)).scalar_one()
    return len(rows), int(after - before)


def _string_versions(checkpoint: Checkpoint) -> Checkpoint:
    """The checkpoint with integer channel versions (the embedded store's) written the way the Postgres saver
    writes its own, so the conversation's next turn never compares the two kinds."""

    def as_text(version: str | int | float) -> str | int | float:
        return f"{version:032}.{0.0:016}" if isinstance(version, int) else version

    return {
        **checkpoint,
        "channel_versions": {k: as_text(v) for k, v in checkpoint["channel_versions"].items()},
        "versions_seen": {
            node: {k: as_text(v) for k, v in seen.items()} for node, seen in checkpoint.get("versions_seen", {}).items()
        },
    }


def _copy_sessions(path: Path, sessions) -> tuple[int, int]:
    if not path.is_file() or not _has_table(path, "checkpoints"):
        return 0, 0
    from langgraph.checkpoint.sqlite import SqliteSaver

    from app.adapters.memory import CompressedSerializer

    with _reading(path) as reader:
        threads = list(
            reader.execute(text("SELECT DISTINCT thread_id FROM checkpoints WHERE checkpoint_ns = ''")).scalars()
        )
    # LangGraph's saver reads the checkpoints themselves, on a connection of its own
    conn = saver_connection(f"sqlite:///{path.resolve()}", read_only=True)
    try:
        source = SqliteSaver(conn, serde=CompressedSerializer())  # reads the compressed and the stock rows
        copied = 0
        for thread_id in threads:
            config: RunnableConfig = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}
            if sessions.exists(thread_id):
                continue  # already there (a second run, or a session that moved on in the target)
            latest = source.get_tuple(config)
            if latest is None:
                continue
            checkpoint = _string_versions(latest.checkpoint)
            sessions.checkpointer.put(config, checkpoint, latest.metadata, dict(checkpoint["channel_versions"]))
            copied += 1
        return len(threads), copied
    finally:
        conn.close()
