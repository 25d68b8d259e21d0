"""One chat turn: run the support graph for a session, with tracing, bounded memory and a session lock."""

from __future__ import annotations

import logging
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Iterator

from app.adapters.memory import SessionStore
from app.adapters.traces import recorder_in
from app.adapters.tracing import run_config
from graphs.context import SupportContext
from graphs.records import OperatingSystem
from graphs.state import SupportOutput, turn_input

log = logging.getLogger(__name__)


class SessionNotFound(LookupError):
    """No conversation with this id belongs to the caller (→ 404)."""


def new_session_id() -> str:
    return uuid.uuid4().hex


@dataclass
class ChatTurn:
    session_id: str
    trace_id: str
    output: SupportOutput
    duration_ms: float = 0.0
    tags: list[str] = field(default_factory=list)
    # per-stage milliseconds of this run: embedding_ms, retrieval_ms, decision_ms, generation_ms, total_ms
    timings: dict[str, float] | None = None


# Nodes whose LLM reply is the answer itself: their tokens are streamed to the user. Other LLM calls
# (the decision's JSON, a ticket draft, troubleshooting steps) are not meant to be read as they arrive.
TOKEN_NODES = frozenset({"answer", "clarify", "use_integration"})
# Nodes that write the reply (`answer`) of a turn; `respond` then adds notices to it.
REPLY_NODES = frozenset({"answer", "clarify", "converse", "troubleshoot", "ticket", "search_tickets", "use_integration",
                         "localize"})  # localize: the reply again, in the language the user wrote in


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") if isinstance(part, dict) else str(part) for part in content or [])


class ChatService:
    def __init__(self, graph, context: SupportContext, sessions: SessionStore, tracer) -> None:
        self._graph = graph
        self._context = context
        self._sessions = sessions
        self._tracer = tracer

    def _session_lock(self, session_id: str):
        # two requests of one session must not interleave their read-modify-write of its state, on this
        # replica or another: a lock in the session store (a Postgres advisory lock in server mode), waited
        # for a bounded time, then SessionBusy (409)
        return self._sessions.turn_lock(session_id)

    def ask(self, message: str, *, session_id: str | None = None, user_os: OperatingSystem | None = None,
            user_id: str | None = None, groups: frozenset[str] = frozenset(),
            search_filters: dict | None = None,
            collections: list[str] | None = None, response_mode: str | None = None,
            directives: dict | None = None) -> ChatTurn:
        """One turn of `session_id` (new when None), which the caller (user_id, groups) must own."""
        session_id = self.open_session(session_id, user_id or "anonymous")  # SessionNotFound: not theirs
        trace_id = uuid.uuid4().hex
        config = run_config(tracer=self._tracer, trace_id=trace_id, run_name="support", session_id=session_id,
                            user_id=user_id, groups=groups, tags=["chat"])
        recorder = recorder_in(config)
        started = time.perf_counter()
        with self._session_lock(session_id):
            # durability="exit": only the finished turn is written, so the raw message (the graph's
            # input, before the redact node) never reaches the checkpoint database
            output = self._graph.invoke(turn_input(message, user_os, search_filters, collections=collections,
                                          response_mode=response_mode, directives=directives), config, context=self._context,
                                        durability="exit")
            self._sessions.prune(session_id)
            self._sessions.forget_aliases(session_id)
        duration = (time.perf_counter() - started) * 1000
        log.info("chat turn session=%s trace=%s action=%s %.0f ms", session_id, trace_id,
                 output.get("action"), duration)
        return ChatTurn(session_id=session_id, trace_id=trace_id, output=output, duration_ms=duration,
                        timings=recorder.timings if recorder else None)

    @property
    def graph(self):
        """The compiled support graph (GET /graphs draws it)."""
        return self._graph

    def stream(self, message: str, *, session_id: str | None = None, user_os: OperatingSystem | None = None,
               user_id: str | None = None, groups: frozenset[str] = frozenset(),
               search_filters: dict | None = None,
               collections: list[str] | None = None, response_mode: str | None = None,
            directives: dict | None = None) -> Iterator[tuple[str, Any]]:
        """One chat turn as events, while the graph runs: ("start", {session_id, trace_id}) at once,
        ("node", {name, duration_ms}) as each node
        finishes, ("token", {text, node}) as the LLM writes the reply, ("sources", [...]) and
        ("content_chunk", {text}) when a node has written the reply, and last ("turn", ChatTurn).

        Closing the generator early (the client left) stops the graph before its next step, releases
        the session and records the run as cancelled; nothing of the unfinished turn is remembered.
        """
        session_id = self.open_session(session_id, user_id or "anonymous")  # SessionNotFound: not theirs
        trace_id = uuid.uuid4().hex
        config = run_config(tracer=self._tracer, trace_id=trace_id, run_name="support", session_id=session_id,
                            user_id=user_id, groups=groups, tags=["chat", "stream"])
        recorder = recorder_in(config)
        started = time.perf_counter()
        output: dict = {}
        output_keys = set(self._graph.output_channels) if isinstance(self._graph.output_channels, list) \
            else {self._graph.output_channels}
        yield "start", {"session_id": session_id, "trace_id": trace_id}
        with self._session_lock(session_id):
            events = self._graph.stream(turn_input(message, user_os, search_filters, collections=collections,
                                          response_mode=response_mode, directives=directives), config, context=self._context,
                                        durability="exit", stream_mode=["updates", "messages", "values"])
            finished = False
            try:
                for mode, payload in events:
                    if mode == "values":  # the whole state; the last one, cut to the output schema, is invoke()'s result
                        output = {k: v for k, v in payload.items() if k in output_keys}
                    elif mode == "messages":
                        chunk, meta = payload
                        node = meta.get("langgraph_node", "")
                        if chunk.type == "AIMessageChunk" and node in TOKEN_NODES and _text(chunk.content):
                            yield "token", {"text": _text(chunk.content), "node": node}
                    else:
                        for node, update in payload.items():
                            yield "node", {"name": node,
                                           "duration_ms": recorder.duration_of(node) if recorder else None}
                            if node in REPLY_NODES and isinstance(update, dict):
                                if update.get("sources"):
                                    yield "sources", update["sources"]
                                if update.get("answer"):
                                    yield "content_chunk", {"text": update["answer"], "node": node}
                finished = True
            finally:
                events.close()
                if not finished:
                    if recorder:
                        recorder.abandon()
                    log.info("chat stream session=%s trace=%s stopped before the end", session_id, trace_id)
            self._sessions.prune(session_id)
            self._sessions.forget_aliases(session_id)
        duration = (time.perf_counter() - started) * 1000
        log.info("chat turn (streamed) session=%s trace=%s action=%s %.0f ms", session_id, trace_id,
                 output.get("action"), duration)
        yield "turn", ChatTurn(session_id=session_id, trace_id=trace_id, output=output, duration_ms=duration,
                               timings=recorder.timings if recorder else None)

    def open_session(self, session_id: str | None, user_id: str) -> str:
        """The session to run a turn in: a new one (owned by `user_id`) when `session_id` is None, else the
        given one if `user_id` owns it (or it is new). SessionNotFound otherwise: another caller's
        conversation is neither continued nor confirmed to exist."""
        session_id = session_id or new_session_id()
        if not self._sessions.claim(session_id, user_id):
            raise SessionNotFound(session_id)
        return session_id

    def owner(self, session_id: str) -> str | None:
        return self._sessions.owner(session_id)

    def session_for(self, fingerprint: str) -> str | None:
        """The session a resent conversation history continues (OpenAI-compatible clients)."""
        return self._sessions.find_alias(fingerprint)

    def remember_history(self, fingerprint: str, session_id: str) -> None:
        self._sessions.add_alias(fingerprint, session_id)

    def history(self, session_id: str) -> list[dict]:
        """The session's remembered (redacted) messages, oldest first."""
        snapshot = self._graph.get_state({"configurable": {"thread_id": session_id}})
        return [{"role": "user" if m.type == "human" else "assistant", "content": str(m.content)}
                for m in snapshot.values.get("messages", [])]
