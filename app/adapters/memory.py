"""Session memory: LangGraph's SQLite checkpointer, keyed by session id, kept small and private."""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from pathlib import Path

from langgraph.checkpoint.sqlite import SqliteSaver

log = logging.getLogger(__name__)


MAX_ALIASES = 50_000
AMBIGUOUS = ""  # a fingerprint two sessions reached: it continues neither


class SessionStore:
    """Owns the SQLite connection and the checkpointer built on it."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._conn = sqlite3.connect(str(path), check_same_thread=False)
        # deleted rows are overwritten, not left readable in free pages
        self._conn.execute("PRAGMA secure_delete = ON")
        self._conn.execute("PRAGMA journal_mode = WAL")
        self._conn.execute("PRAGMA synchronous = NORMAL")
        self.checkpointer = SqliteSaver(self._conn)
        self.checkpointer.setup()
        self._lock = threading.Lock()
        with self.checkpointer.lock:
            self._conn.execute("CREATE TABLE IF NOT EXISTS session_owners (thread_id TEXT PRIMARY KEY, "
                               "user_id TEXT NOT NULL, created_ts REAL NOT NULL)")
            # OpenAI-style clients resend the whole conversation each turn: its fingerprint → the session
            self._conn.execute("CREATE TABLE IF NOT EXISTS conversation_aliases (fingerprint TEXT PRIMARY KEY, "
                               "thread_id TEXT NOT NULL, created_ts REAL NOT NULL)")
            # when each session last had a turn: what idle expiry reads (LangGraph's tables carry no time)
            self._conn.execute("CREATE TABLE IF NOT EXISTS session_activity (thread_id TEXT PRIMARY KEY, "
                               "last_ts REAL NOT NULL)")
            self._conn.execute("CREATE INDEX IF NOT EXISTS session_activity_by_time ON session_activity (last_ts)")
            self._conn.commit()

    def find_alias(self, fingerprint: str) -> str | None:
        """The session a history continues; None when none does, or when two sessions reached the same history."""
        with self.checkpointer.lock:
            row = self._conn.execute("SELECT thread_id FROM conversation_aliases WHERE fingerprint = ?",
                                     (fingerprint,)).fetchone()
        return row[0] if row and row[0] != AMBIGUOUS else None

    def add_alias(self, fingerprint: str, thread_id: str, *, keep: int = MAX_ALIASES) -> None:
        """Remember that a conversation whose history has this fingerprint continues `thread_id`
        (the oldest aliases beyond `keep` are forgotten: such a conversation then starts afresh).

        A history is not a secret: two people who open with the same question get the same offline answer,
        and anyone can type what someone else typed. So a fingerprint two sessions reached continues neither
        (it is marked ambiguous, never re-pointed to the newer one), and only a session's latest history is
        kept (`forget_aliases` after every turn) — replaying someone's first question cannot reach the
        conversation they went on to have."""
        with self.checkpointer.lock:
            row = self._conn.execute("SELECT thread_id FROM conversation_aliases WHERE fingerprint = ?",
                                     (fingerprint,)).fetchone()
            owner = thread_id if row is None or row[0] == thread_id else AMBIGUOUS
            self._conn.execute("INSERT OR REPLACE INTO conversation_aliases (fingerprint, thread_id, created_ts) "
                               "VALUES (?, ?, ?)", (fingerprint, owner, time.time()))
            self._conn.execute("DELETE FROM conversation_aliases WHERE fingerprint IN (SELECT fingerprint FROM "
                               "conversation_aliases ORDER BY created_ts DESC LIMIT -1 OFFSET ?)", (keep,))
            self._conn.commit()

    def forget_aliases(self, thread_id: str) -> None:
        """The session moved on: the histories that led to its earlier states no longer continue it."""
        with self.checkpointer.lock:
            self._conn.execute("DELETE FROM conversation_aliases WHERE thread_id = ?", (thread_id,))
            self._conn.commit()

    def claim(self, thread_id: str, user_id: str) -> bool:
        """Make `user_id` the owner of a new session; True when the session is (now) theirs.

        A session that has checkpoints but no owner row predates sign-in: it belongs to 'anonymous'.
        """
        with self.checkpointer.lock:
            row = self._conn.execute("SELECT user_id FROM session_owners WHERE thread_id = ?", (thread_id,)).fetchone()
            if row is None:
                has_state = self._conn.execute("SELECT 1 FROM checkpoints WHERE thread_id = ? LIMIT 1",
                                               (thread_id,)).fetchone() is not None
                owner = "anonymous" if has_state else user_id
                self._conn.execute("INSERT INTO session_owners (thread_id, user_id, created_ts) VALUES (?, ?, ?)",
                                   (thread_id, owner, time.time()))
                self._conn.commit()
                return owner == user_id
            return row[0] == user_id

    def owner(self, thread_id: str) -> str | None:
        """Who a session belongs to (None: no such session)."""
        with self.checkpointer.lock:
            row = self._conn.execute("SELECT user_id FROM session_owners WHERE thread_id = ?", (thread_id,)).fetchone()
            if row is not None:
                return row[0]
            has_state = self._conn.execute("SELECT 1 FROM checkpoints WHERE thread_id = ? LIMIT 1",
                                           (thread_id,)).fetchone() is not None
            return "anonymous" if has_state else None

    def prune(self, thread_id: str, *, now: float | None = None) -> None:
        """After a turn: keep only the newest checkpoint of a session (its state already holds the bounded
        history) and note the turn's time for idle expiry."""
        with self._lock, self.checkpointer.lock:
            self._conn.execute("INSERT OR REPLACE INTO session_activity (thread_id, last_ts) VALUES (?, ?)",
                               (thread_id, time.time() if now is None else now))
            row = self._conn.execute(
                "SELECT checkpoint_id FROM checkpoints WHERE thread_id = ? ORDER BY checkpoint_id DESC LIMIT 1",
                (thread_id,)).fetchone()
            if row is not None:
                self._conn.execute("DELETE FROM checkpoints WHERE thread_id = ? AND checkpoint_id != ?",
                                   (thread_id, row[0]))
                self._conn.execute("DELETE FROM writes WHERE thread_id = ? AND checkpoint_id != ?", (thread_id, row[0]))
            self._conn.commit()

    # --- retention (app/retention.py runs these; a server-database store implements the same) -----------
    def expire_idle(self, cutoff_ts: float, *, batch: int = 500) -> int:
        """Delete every session whose last turn is older than `cutoff_ts`, with its checkpoints, owner and
        aliases; returns how many went. A session with no recorded turn (from before this table) is given
        the current time, so it expires one idle period from now rather than at once."""
        removed = 0
        with self._lock, self.checkpointer.lock:
            self._conn.execute("INSERT OR IGNORE INTO session_activity (thread_id, last_ts) "
                               "SELECT DISTINCT thread_id, ? FROM checkpoints", (time.time(),))
            self._conn.commit()
            while True:  # in batches: the lock is shared with turns in progress
                idle = [row[0] for row in self._conn.execute(
                    "SELECT thread_id FROM session_activity WHERE last_ts < ? LIMIT ?", (cutoff_ts, batch))]
                if not idle:
                    break
                marks = ",".join("?" * len(idle))
                for table in ("checkpoints", "writes", "session_owners", "conversation_aliases", "session_activity"):
                    self._conn.execute(f"DELETE FROM {table} WHERE thread_id IN ({marks})", idle)
                self._conn.commit()
                removed += len(idle)
        if removed:
            log.info("session store: %d idle session(s) expired", removed)
        return removed

    def prune_checkpoints(self) -> int:
        """Keep only the latest checkpoint of every session (a crash between a turn and its prune, or state
        written before pruning existed, leaves older ones); returns how many went."""
        with self._lock, self.checkpointer.lock:
            latest = "SELECT thread_id, checkpoint_ns, MAX(checkpoint_id) FROM checkpoints GROUP BY thread_id, checkpoint_ns"
            removed = self._conn.execute(
                f"DELETE FROM checkpoints WHERE (thread_id, checkpoint_ns, checkpoint_id) NOT IN ({latest})").rowcount
            self._conn.execute(f"DELETE FROM writes WHERE (thread_id, checkpoint_ns, checkpoint_id) NOT IN ({latest})")
            self._conn.commit()
        return removed

    def reclaim(self, *, vacuum: bool = False) -> None:
        """Hand freed pages back: the WAL truncated always; the whole file rewritten (VACUUM) when asked."""
        with self._lock, self.checkpointer.lock:
            if vacuum:
                self._conn.execute("VACUUM")
            self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def count(self) -> int:
        """Sessions with state."""
        with self.checkpointer.lock:
            return self._conn.execute("SELECT COUNT(DISTINCT thread_id) FROM checkpoints").fetchone()[0]

    def ping(self, timeout_s: float = 5.0) -> None:
        """A real, cheap read of every table; raises when the store cannot answer within `timeout_s`."""
        if not self.checkpointer.lock.acquire(timeout=timeout_s):
            raise TimeoutError(f"the session store has been busy for over {timeout_s:g} s")
        try:
            for table in ("checkpoints", "writes", "session_owners", "conversation_aliases"):
                self._conn.execute(f"SELECT 1 FROM {table} LIMIT 1").fetchone()
        finally:
            self.checkpointer.lock.release()

    def exists(self, thread_id: str) -> bool:
        with self.checkpointer.lock:
            return self._conn.execute("SELECT 1 FROM checkpoints WHERE thread_id = ? LIMIT 1",
                                      (thread_id,)).fetchone() is not None

    def close(self) -> None:
        self._conn.close()
