"""Session memory: LangGraph's SQLite checkpointer, keyed by session id, kept small and private."""

from __future__ import annotations

import logging
import sqlite3
import threading
from pathlib import Path

from langgraph.checkpoint.sqlite import SqliteSaver

log = logging.getLogger(__name__)


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

    def prune(self, thread_id: str) -> None:
        """Keep only the newest checkpoint of a session: its state already holds the bounded history."""
        with self._lock, self.checkpointer.lock:
            row = self._conn.execute(
                "SELECT checkpoint_id FROM checkpoints WHERE thread_id = ? ORDER BY checkpoint_id DESC LIMIT 1",
                (thread_id,)).fetchone()
            if row is None:
                return
            self._conn.execute("DELETE FROM checkpoints WHERE thread_id = ? AND checkpoint_id != ?", (thread_id, row[0]))
            self._conn.execute("DELETE FROM writes WHERE thread_id = ? AND checkpoint_id != ?", (thread_id, row[0]))
            self._conn.commit()

    def exists(self, thread_id: str) -> bool:
        with self.checkpointer.lock:
            return self._conn.execute("SELECT 1 FROM checkpoints WHERE thread_id = ? LIMIT 1",
                                      (thread_id,)).fetchone() is not None

    def close(self) -> None:
        self._conn.close()
