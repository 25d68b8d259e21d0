"""One chat turn: run the support graph for a session, with tracing, bounded memory and a session lock."""

from __future__ import annotations

import logging
import threading
import time
import uuid
import weakref
from dataclasses import dataclass, field

from app.adapters.memory import SessionStore
from app.adapters.tracing import run_config
from graphs.context import SupportContext
from graphs.records import OperatingSystem
from graphs.state import SupportOutput, turn_input

log = logging.getLogger(__name__)


def new_session_id() -> str:
    return uuid.uuid4().hex


@dataclass
class ChatTurn:
    session_id: str
    trace_id: str
    output: SupportOutput
    duration_ms: float = 0.0
    tags: list[str] = field(default_factory=list)


class ChatService:
    def __init__(self, graph, context: SupportContext, sessions: SessionStore, tracer) -> None:
        self._graph = graph
        self._context = context
        self._sessions = sessions
        self._tracer = tracer
        self._locks: weakref.WeakValueDictionary[str, threading.Lock] = weakref.WeakValueDictionary()
        self._locks_guard = threading.Lock()

    def _session_lock(self, session_id: str) -> threading.Lock:
        # two requests of one session must not interleave their read-modify-write of its state
        with self._locks_guard:
            lock = self._locks.get(session_id)
            if lock is None:
                lock = threading.Lock()
                self._locks[session_id] = lock
            return lock

    def ask(self, message: str, *, session_id: str | None = None, user_os: OperatingSystem | None = None,
            user_id: str | None = None) -> ChatTurn:
        session_id = session_id or new_session_id()
        trace_id = uuid.uuid4().hex
        config = run_config(tracer=self._tracer, trace_id=trace_id, run_name="support", session_id=session_id,
                            user_id=user_id, tags=["chat"])
        started = time.perf_counter()
        lock = self._session_lock(session_id)
        with lock:
            # durability="exit": only the finished turn is written, so the raw message (the graph's
            # input, before the redact node) never reaches the checkpoint database
            output = self._graph.invoke(turn_input(message, user_os), config, context=self._context,
                                        durability="exit")
            self._sessions.prune(session_id)
        duration = (time.perf_counter() - started) * 1000
        log.info("chat turn session=%s trace=%s action=%s %.0f ms", session_id, trace_id,
                 output.get("action"), duration)
        return ChatTurn(session_id=session_id, trace_id=trace_id, output=output, duration_ms=duration)

    def history(self, session_id: str) -> list[dict]:
        """The session's remembered (redacted) messages, oldest first."""
        snapshot = self._graph.get_state({"configurable": {"thread_id": session_id}})
        return [{"role": "user" if m.type == "human" else "assistant", "content": str(m.content)}
                for m in snapshot.values.get("messages", [])]
