"""Session memory: LangGraph's checkpointer (SQLite embedded, Postgres in server mode), keyed by session id,
kept small and private; session owners and OpenAI-history aliases live in the relational store (app/storage).

In server mode every replica reads and writes the same checkpoints, owners and aliases, and a turn holds a
Postgres advisory lock on its session, so any turn of any session can land on any replica."""

from __future__ import annotations

import logging
import threading
import time
import zlib
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Iterator

from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from sqlalchemy import bindparam, delete, select, text

from app.storage import Database
from app.storage.database import reclaim_sqlite, saver_connection
from app.storage.schema import conversation_aliases, session_activity, session_owners

if TYPE_CHECKING:
    from langgraph.checkpoint.base import Checkpoint

log = logging.getLogger(__name__)


MAX_ALIASES = 50_000
AMBIGUOUS = ""  # a fingerprint two sessions reached: it continues neither
DEFAULT_LOCK_WAIT_S = 60.0
CHECKPOINT_METADATA = ("source", "step", "parents")  # what LangGraph itself writes and reads back


class SessionStore:
    """The checkpointer plus the owner and alias tables, over one Database.

    `db` a path: one SQLite file holds everything (tools and tests). `db` a Database on SQLite: the
    checkpoints go to `checkpoints` (an SQLite file beside it). `db` on Postgres: the checkpoints go to the
    same Postgres database through langgraph-checkpoint-postgres and a psycopg pool of its own. The savers'
    connections come from `app.storage.database.saver_connection`; every statement of deskmate's own on the
    checkpoint tables (pruning, expiry, counts) goes through SQLAlchemy, the same text on both engines."""

    def __init__(
        self,
        db: Database | Path | str,
        *,
        checkpoints: Path | None = None,
        lock_wait_s: float = DEFAULT_LOCK_WAIT_S,
        pool_size: int = 8,
    ) -> None:
        self._owns_db = not isinstance(db, Database)
        if not isinstance(db, Database):
            checkpoints = Path(db)
            db = Database.open(f"sqlite:///{Path(db).resolve()}")
        self.db = db
        self.lock_wait_s = lock_wait_s
        if db.is_postgres:
            from langgraph.checkpoint.postgres import PostgresSaver

            self._saver_connection = saver_connection(db.url, pool_size=pool_size)
            self.checkpointer = PostgresSaver(self._saver_connection)
            with db.named_lock("checkpoint-migrations", wait_s=120):  # replicas starting together
                self.checkpointer.setup()
            # the saver's tables live in the same database; deskmate's own statements on them go through it
            self.checkpoint_db = db
            self._writes_table = "checkpoint_writes"
        else:
            if checkpoints is None:
                raise ValueError("an SQLite session store needs the checkpoint file's path")
            url = f"sqlite:///{checkpoints.resolve()}"
            self._saver_connection = saver_connection(url)
            self.checkpointer = _compact_sqlite_saver(self._saver_connection)
            self.checkpointer.setup()
            self.checkpoint_db = Database(url)  # no migrations: the saver owns the tables of this file
            self._writes_table = "writes"
        self._lock = threading.Lock()
        # the statements every turn runs, built once (their parameters bound at each call)
        self._new_owner = self.db.insert(session_owners).on_conflict_do_nothing()
        touch = self.db.insert(session_activity)
        self._touch = touch.on_conflict_do_update(
            index_elements=[session_activity.c.thread_id], set_={"last_ts": touch.excluded.last_ts}
        )
        self._forget = delete(conversation_aliases).where(
            conversation_aliases.c.thread_id == bindparam("thread_id", type_=conversation_aliases.c.thread_id.type)
        )

    # --- one turn at a time per session, across replicas ---------------------------------------------
    @contextmanager
    def turn_lock(self, thread_id: str, wait_s: float | None = None) -> Iterator[None]:
        """Hold the session for one turn; SessionBusy (→ 409) when another turn holds it past the wait."""
        with self.db.named_lock(f"session:{thread_id}", wait_s=self.lock_wait_s if wait_s is None else wait_s):
            yield

    # --- aliases ------------------------------------------------------------------------------------
    def find_alias(self, fingerprint: str) -> str | None:
        """The session a history continues; None when none does, or when two sessions reached the same history."""
        with self.db.connect() as conn:
            owner = conn.execute(
                select(conversation_aliases.c.thread_id).where(conversation_aliases.c.fingerprint == fingerprint)
            ).scalar()
        return owner if owner else None

    def add_alias(self, fingerprint: str, thread_id: str, *, keep: int = MAX_ALIASES) -> None:
        """Remember that a conversation whose history has this fingerprint continues `thread_id`
        (the oldest aliases beyond `keep` are forgotten: such a conversation then starts afresh).

        A history is not a secret: two people who open with the same question get the same offline answer,
        and anyone can type what someone else typed. So a fingerprint two sessions reached continues neither
        (it is marked ambiguous, never re-pointed to the newer one), and only a session's latest history is
        kept (`forget_aliases` after every turn) — replaying someone's first question cannot reach the
        conversation they went on to have."""
        statement = self.db.insert(conversation_aliases).values(
            fingerprint=fingerprint, thread_id=thread_id, created_ts=time.time()
        )
        # one statement, so two replicas racing on one fingerprint still end ambiguous, never re-pointed
        statement = statement.on_conflict_do_update(
            index_elements=[conversation_aliases.c.fingerprint],
            set_={"thread_id": _same_or_ambiguous(statement), "created_ts": statement.excluded.created_ts},
        )
        with self.db.begin() as conn:
            conn.execute(statement)
            edge = conn.execute(
                select(conversation_aliases.c.created_ts)
                .order_by(conversation_aliases.c.created_ts.desc())
                .offset(keep)
                .limit(1)
            ).scalar()
            if edge is not None:
                conn.execute(delete(conversation_aliases).where(conversation_aliases.c.created_ts <= edge))

    def forget_aliases(self, thread_id: str) -> None:
        """The session moved on: the histories that led to its earlier states no longer continue it."""
        with self.db.begin() as conn:
            conn.execute(self._forget, {"thread_id": thread_id})

    # --- owners -------------------------------------------------------------------------------------
    def claim(self, thread_id: str, user_id: str, *, minted: bool = False) -> bool:
        """Make `user_id` the owner of a new session; True when the session is (now) theirs.

        A session that has checkpoints but no owner row predates sign-in: it belongs to 'anonymous'.
        `minted`: the caller has just drawn `thread_id` at random (a new conversation), so it has neither an
        owner nor checkpoints; the owner row is written in one statement, and only if that row was already
        there (it never is) is the session looked up as usual.
        """
        if minted:
            with self.db.begin() as conn:
                written = conn.execute(
                    self._new_owner, {"thread_id": thread_id, "user_id": user_id, "created_ts": time.time()}
                ).rowcount
            if written == 1:
                return True
        with self.db.connect() as conn:
            owner = conn.execute(
                select(session_owners.c.user_id).where(session_owners.c.thread_id == thread_id)
            ).scalar()
        if owner is not None:
            return owner == user_id
        owner = "anonymous" if self.exists(thread_id) else user_id
        with self.db.begin() as conn:
            # two replicas claiming one new session: the first row wins, the other reads it back
            conn.execute(
                self.db.insert(session_owners)
                .values(thread_id=thread_id, user_id=owner, created_ts=time.time())
                .on_conflict_do_nothing()
            )
            owner = conn.execute(
                select(session_owners.c.user_id).where(session_owners.c.thread_id == thread_id)
            ).scalar()
        return owner == user_id

    def owner(self, thread_id: str) -> str | None:
        """Who a session belongs to (None: no such session)."""
        with self.db.connect() as conn:
            owner = conn.execute(
                select(session_owners.c.user_id).where(session_owners.c.thread_id == thread_id)
            ).scalar()
        if owner is not None:
            return owner
        return "anonymous" if self.exists(thread_id) else None

    # --- checkpoints --------------------------------------------------------------------------------
    def after_turn(self, thread_id: str, *, new: bool = False) -> None:
        """What every finished turn does to its session: `prune` it and `forget_aliases` (the turn's time and
        the forgotten aliases in one transaction). A session drawn for this turn (`new`: the caller minted its id,
        `claim(minted=True)`) holds only the checkpoint the turn wrote (durability "exit": one a run) and no alias
        yet (one is added after the turn): only its time is noted, with nothing to prune or forget."""
        if new:
            self._note_turn(thread_id)
            return
        self.prune(thread_id, forget_aliases=True)

    def prune(self, thread_id: str, *, now: float | None = None, forget_aliases: bool = False) -> None:
        """After a turn: keep only the newest checkpoint of a session (its state already holds the bounded
        history) and note the turn's time for idle expiry; with `forget_aliases`, also `forget_aliases`."""
        self._note_turn(thread_id, now, forget_aliases=forget_aliases)
        self._prune_checkpoints_of(thread_id)

    def _note_turn(self, thread_id: str, now: float | None = None, *, forget_aliases: bool = False) -> None:
        with self.db.begin() as conn:
            conn.execute(self._touch, {"thread_id": thread_id, "last_ts": time.time() if now is None else now})
            if forget_aliases:
                conn.execute(self._forget, {"thread_id": thread_id})

    def _prune_checkpoints_of(self, thread_id: str) -> None:
        with self._serial(), self.checkpoint_db.begin() as conn:
            latest = conn.execute(
                text(
                    "SELECT checkpoint_id FROM checkpoints WHERE thread_id = :t AND checkpoint_ns = '' "
                    "ORDER BY checkpoint_id DESC LIMIT 1"
                ),
                {"t": thread_id},
            ).scalar()
            if latest is None:
                return
            for table in ("checkpoints", self._writes_table):
                conn.execute(
                    text(f"DELETE FROM {table} WHERE thread_id = :t AND checkpoint_id <> :latest"),
                    {"t": thread_id, "latest": latest},
                )
            if self.db.is_postgres:
                # channel values are stored once per version: keep only the versions the newest checkpoint uses
                conn.execute(
                    text(
                        "DELETE FROM checkpoint_blobs b WHERE b.thread_id = :t AND NOT EXISTS (SELECT 1 FROM "
                        "checkpoints c WHERE c.thread_id = b.thread_id AND c.checkpoint_ns = b.checkpoint_ns AND "
                        "c.checkpoint -> 'channel_versions' ->> b.channel = b.version)"
                    ),
                    {"t": thread_id},
                )

    @contextmanager
    def _serial(self) -> Iterator[None]:
        """On SQLite, deskmate's writes to the checkpoint file wait for the saver's (one writer at a time in a
        process, never a busy file); Postgres orders them itself."""
        if self.db.is_postgres:
            yield
            return
        with self._lock, self.checkpointer.lock:
            yield

    @property
    def _checkpoint_tables(self) -> tuple[str, ...]:
        return (
            ("checkpoints", self._writes_table, "checkpoint_blobs")
            if self.db.is_postgres
            else ("checkpoints", "writes")
        )

    # --- retention (app/retention.py runs these) -----------------------------------------------------
    def _checkpoint_threads(self) -> list[str]:
        with self.checkpoint_db.connect() as conn:
            return list(conn.execute(text("SELECT DISTINCT thread_id FROM checkpoints")).scalars())

    def _delete_checkpoints(self, threads: list[str]) -> None:
        with self._serial(), self.checkpoint_db.begin() as conn:
            for table in self._checkpoint_tables:
                statement = text(f"DELETE FROM {table} WHERE thread_id IN :threads")
                conn.execute(statement.bindparams(bindparam("threads", expanding=True)), {"threads": threads})

    def expire_idle(self, cutoff_ts: float, *, batch: int = 500) -> int:
        """Delete every session whose last turn is older than `cutoff_ts`, with its checkpoints, owner and
        aliases; returns how many went. A session with no recorded turn (from before the activity table) is
        given the current time, so it expires one idle period from now rather than at once."""
        known = self._checkpoint_threads()
        if known:
            with self.db.begin() as conn:
                conn.execute(
                    self.db.insert(session_activity).on_conflict_do_nothing(),
                    [{"thread_id": t, "last_ts": time.time()} for t in known],
                )
        removed = 0
        while True:  # in batches: turns in progress share the tables
            with self.db.connect() as conn:
                idle = list(
                    conn.execute(
                        select(session_activity.c.thread_id).where(session_activity.c.last_ts < cutoff_ts).limit(batch)
                    ).scalars()
                )
            if not idle:
                break
            self._delete_checkpoints(idle)
            with self.db.begin() as conn:
                for table in (session_owners, conversation_aliases, session_activity):
                    conn.execute(delete(table).where(table.c.thread_id.in_(idle)))
            removed += len(idle)
        if removed:
            log.info("session store: %d idle session(s) expired", removed)
        return removed

    def prune_checkpoints(self) -> int:
        """Keep only the latest checkpoint of every session (a crash between a turn and its prune, or state
        written before pruning existed, leaves older ones); returns how many went."""
        latest = (
            "SELECT thread_id, checkpoint_ns, MAX(checkpoint_id) FROM checkpoints GROUP BY thread_id, checkpoint_ns"
        )
        with self._serial(), self.checkpoint_db.begin() as conn:
            removed = conn.execute(
                text(f"DELETE FROM checkpoints WHERE (thread_id, checkpoint_ns, checkpoint_id) NOT IN ({latest})")
            ).rowcount
            conn.execute(
                text(
                    f"DELETE FROM {self._writes_table} WHERE (thread_id, checkpoint_ns, checkpoint_id) NOT IN ({latest})"
                )
            )
        return removed

    def reclaim(self, *, vacuum: bool = False) -> None:
        """Hand freed pages back: on SQLite the pages retention freed and the WAL always, the whole file
        rewritten (VACUUM) when asked; on Postgres autovacuum does this, so only an explicit VACUUM of the
        checkpoint tables when asked."""
        if self.db.is_postgres and not vacuum:
            return
        with self._serial(), self.checkpoint_db.connect() as conn:
            conn = conn.execution_options(isolation_level="AUTOCOMMIT")  # VACUUM cannot run in a transaction
            if self.db.is_postgres:
                for table in self._checkpoint_tables:
                    conn.exec_driver_sql(f"VACUUM {table}")
            else:
                reclaim_sqlite(conn.connection.dbapi_connection, vacuum=vacuum)

    def count(self) -> int:
        """Sessions with state."""
        return len(self._checkpoint_threads())

    def ping(self, timeout_s: float = 5.0) -> None:
        """A real, cheap read of every table; raises when the store cannot answer within `timeout_s` (on
        Postgres the database's own connect and pool timeouts bound it)."""
        if not self.db.is_postgres and not self.checkpointer.lock.acquire(timeout=timeout_s):
            raise TimeoutError(f"the session store has been busy for over {timeout_s:g} s")
        try:
            with self.checkpoint_db.connect() as conn:
                for table in ("checkpoints", self._writes_table):
                    conn.execute(text(f"SELECT 1 FROM {table} LIMIT 1")).first()
        finally:
            if not self.db.is_postgres:
                self.checkpointer.lock.release()
        with self.db.connect() as conn:
            for store_table in (session_owners, conversation_aliases, session_activity):
                conn.execute(select(store_table).limit(1)).first()

    def exists(self, thread_id: str) -> bool:
        with self.checkpoint_db.connect() as conn:
            found = conn.execute(text("SELECT 1 FROM checkpoints WHERE thread_id = :t LIMIT 1"), {"t": thread_id})
            return found.first() is not None

    def close(self) -> None:
        self._saver_connection.close()
        if self.checkpoint_db is not self.db:
            self.checkpoint_db.close()
        if self._owns_db:
            self.db.close()


# The per-turn channels of the flat state that sessions were saved with before the turn record (graphs/support.py
# Turn) held them: a checkpoint written then still names them. Historical: never edit to follow the code.
LEGACY_TURN_CHANNELS = frozenset(
    (
        "query search_filters collections response_mode answer_policy directives mode_notice redaction_notice "
        "redacted_kinds injection_suspected injection_signals intent small_talk dialogue_act language translated "
        "keywords is_vague search_query is_follow_up tried_queries query_embedding retrieved_chunks search_count "
        "articles confidence question_type action decision_reasoning decided_by offered_actions action_selection "
        "action_selection_reason integration integration_call answer sources needs_input is_clarifying "
        "fallback_notice answer_path reply_kind status_checked status_ok status_summary incidents ticket_event"
    ).split()
)


def without_legacy_turn_channels(checkpoint: Checkpoint) -> Checkpoint:
    """A checkpoint without the flat state's per-turn channels (values, versions, what each node saw): what a
    session saved before the turn record becomes the first time it is saved again. The graph never reads them."""
    versions = checkpoint.get("channel_versions") or {}
    if not LEGACY_TURN_CHANNELS.intersection(versions) and not LEGACY_TURN_CHANNELS.intersection(
        checkpoint.get("channel_values") or {}
    ):
        return checkpoint
    migrated: Checkpoint = {
        **checkpoint,
        "channel_values": {
            k: v for k, v in (checkpoint.get("channel_values") or {}).items() if k not in LEGACY_TURN_CHANNELS
        },
        "channel_versions": {k: v for k, v in versions.items() if k not in LEGACY_TURN_CHANNELS},
        "versions_seen": {
            node: {k: v for k, v in seen.items() if k not in LEGACY_TURN_CHANNELS}
            for node, seen in (checkpoint.get("versions_seen") or {}).items()
        },
    }
    updated = checkpoint.get("updated_channels")
    if updated is not None:
        migrated["updated_channels"] = [c for c in updated if c not in LEGACY_TURN_CHANNELS]
    return migrated


def _same_or_ambiguous(statement):
    from sqlalchemy import case

    return case(
        (conversation_aliases.c.thread_id == statement.excluded.thread_id, statement.excluded.thread_id),
        else_=AMBIGUOUS,
    )


def _compact_sqlite_saver(conn):
    """LangGraph's SQLite saver, made small: channel versions as small integers, only the session's own
    channels kept, and every value compressed.

    The stock saver versions every channel with a 50-character string (a zero-padded counter and a random
    fraction); a support checkpoint has about seventy channels, so the versions alone were some 4 KB of
    every saved conversation. Integers order the same way. A session saved before keeps string versions
    (every version of a step derives from the highest one, so a checkpoint never mixes the two).

    The turn record (graphs/support.py PER_TURN_CHANNELS: `turn` — the search, the decision, the reply) is
    left out of the saved values: the next message's input replaces it whole before a node reads it, so a
    checkpoint without it continues exactly as one with it, and the reply is kept anyway in `messages`. Its
    version stays, so the graph's bookkeeping is untouched. What is saved is compressed
    (`CompressedSerializer`): a saved conversation shrinks from about 8 KB to under 2 KB.

    A session saved while the state was flat (every per-turn key its own channel) loads as it is: the graph
    reads only the channels it has, so the old per-turn values are never read; the next save drops them and
    their versions (`LEGACY_TURN_CHANNELS`)."""
    from langgraph.checkpoint.sqlite import SqliteSaver

    from graphs.support import PER_TURN_CHANNELS

    class CompactVersionSaver(SqliteSaver):
        def get_next_version(self, current, channel):
            if isinstance(current, str):
                return super().get_next_version(current, channel)
            return (current or 0) + 1

        def put(self, config, checkpoint, metadata, new_versions):
            current = without_legacy_turn_channels(checkpoint)
            values = current.get("channel_values") or {}
            kept = {k: v for k, v in values.items() if k not in PER_TURN_CHANNELS}
            # the run's tracing metadata (trace, session and user ids) would be copied into every checkpoint:
            # only LangGraph's own keys are kept (the trace store links a session to its runs)
            where = {
                k: v for k, v in config["configurable"].items() if k in ("thread_id", "checkpoint_ns", "checkpoint_id")
            }
            config = {"configurable": where}
            metadata = {k: v for k, v in (metadata or {}).items() if k in CHECKPOINT_METADATA}
            return super().put(config, {**current, "channel_values": kept}, metadata, new_versions)

    return CompactVersionSaver(conn, serde=CompressedSerializer())


def _packed_sample(value) -> bytes:
    import ormsgpack

    return ormsgpack.packb(value)


# the preset dictionary of checkpoint compression: the msgpack of what every saved conversation spells out
# (a human and an AI message's envelope, the session keys, the channel names of the versions), so a small
# checkpoint need not spell them out once itself. msgpack's encoding of plain strings, numbers, lists and maps
# is fixed by its specification, and zlib checks the dictionary's checksum when it reads: a stream written with
# another dictionary fails loudly rather than reading wrong. Never edit it: a new one needs a new type suffix.
_CHECKPOINT_ZDICT = _packed_sample(
    [
        "langchain_core.messages.human",
        "HumanMessage",
        {"content": "", "additional_kwargs": {}, "response_metadata": {}, "type": "human", "name": None, "id": ""},
        "model_validate_json",
        "langchain_core.messages.ai",
        "AIMessage",
        {
            "content": "",
            "additional_kwargs": {},
            "response_metadata": {},
            "type": "ai",
            "name": None,
            "id": "",
            "tool_calls": [],
            "invalid_tool_calls": [],
            "usage_metadata": None,
        },
        "model_validate_json",
        {
            "v": 4,
            "ts": "2026-01-01T00:00:00.000000+00:00",
            "id": "",
            "channel_values": {
                "intent": "informative",
                "messages": [],
                "user_os": "windows",
                "active_topic": "",
                "active_article": {
                    "doc_id": "",
                    "title": "",
                    "source": "kb/",
                    "section": "",
                    "question_type": "how-to",
                    "runner_up": None,
                },
                "clarify_streak": 0,
                "turn_count": 1,
                "troubleshooting": {
                    "issue": "",
                    "topic": "",
                    "steps": [{"step": "", "outcome": "pending"}, {"step": "", "outcome": "failed"}],
                    "current": 0,
                    "failed": 0,
                    "asked_outcome": False,
                    "status": "in_progress",
                    "source": {"title": "", "source": "kb/", "chunk_id": ""},
                    "os": "",
                },
                "ticket_offer": None,
                "ticket": None,
            },
            "channel_versions": {
                k: 1
                for k in (
                    "__start__",
                    "query",
                    "search_filters",
                    "collections",
                    "response_mode",
                    "answer_policy",
                    "directives",
                    "mode_notice",
                    "redaction_notice",
                    "redacted_kinds",
                    "injection_suspected",
                    "injection_signals",
                    "small_talk",
                    "dialogue_act",
                    "language",
                    "translated",
                    "keywords",
                    "is_vague",
                    "search_query",
                    "is_follow_up",
                    "tried_queries",
                    "query_embedding",
                    "retrieved_chunks",
                    "search_count",
                    "articles",
                    "confidence",
                    "question_type",
                    "action",
                    "decision_reasoning",
                    "decided_by",
                    "offered_actions",
                    "action_selection",
                    "action_selection_reason",
                    "integration",
                    "integration_call",
                    "answer",
                    "sources",
                    "needs_input",
                    "is_clarifying",
                    "fallback_notice",
                    "answer_path",
                    "reply_kind",
                    "status_checked",
                    "status_ok",
                    "status_summary",
                    "incidents",
                    "ticket_event",
                    "branch:to:redact",
                    "branch:to:classify",
                    "intent",
                    "branch:to:embed_query",
                    "branch:to:retrieve",
                    "branch:to:decide",
                    "branch:to:answer",
                    "branch:to:clarify",
                    "branch:to:converse",
                    "branch:to:troubleshoot",
                    "troubleshooting",
                    "branch:to:respond",
                    "active_article",
                    "messages",
                    "active_topic",
                    "clarify_streak",
                    "turn_count",
                    "user_os",
                    "ticket_offer",
                    "ticket",
                )
            },
            "versions_seen": {
                "__input__": {},
                "__start__": {"__start__": 1},
                "redact": {"branch:to:redact": 1},
                "classify": {"branch:to:classify": 1},
                "embed_query": {"branch:to:embed_query": 1},
                "retrieve": {"branch:to:retrieve": 1},
                "decide": {"branch:to:decide": 1},
                "answer": {"branch:to:answer": 1},
                "respond": {"branch:to:respond": 1},
            },
            "updated_channels": [
                "active_article",
                "active_topic",
                "answer",
                "articles",
                "clarify_streak",
                "messages",
                "query_embedding",
                "retrieved_chunks",
                "turn_count",
            ],
        },
    ]
)
_ZSUFFIX = "+z"  # the type of a value compressed with _CHECKPOINT_ZDICT: the serializer's type and this


class CompressedSerializer(JsonPlusSerializer):
    """LangGraph's serializer with its msgpack compressed (zlib, with a preset dictionary of what every
    checkpoint repeats). The saved type says which: "msgpack+z" is read back through zlib, and anything the
    stock serializer wrote ("msgpack", "null" …) is read as before, so sessions saved earlier continue.
    A subclass, not a wrapper, so LangGraph's msgpack allowlist still applies to what it reads."""

    def dumps_typed(self, obj):
        type_, data = super().dumps_typed(obj)
        if type_ != "msgpack" or len(data) < 64:
            return type_, data
        packer = zlib.compressobj(6, zdict=_CHECKPOINT_ZDICT)
        return type_ + _ZSUFFIX, packer.compress(data) + packer.flush()

    def loads_typed(self, data):
        type_, payload = data
        if type_.endswith(_ZSUFFIX):
            unpacker = zlib.decompressobj(zdict=_CHECKPOINT_ZDICT)
            raw = unpacker.decompress(payload) + unpacker.flush()
            return super().loads_typed((type_[: -len(_ZSUFFIX)], raw))
        return super().loads_typed(data)
