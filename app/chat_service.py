"""One chat turn, for every edge alike: a plain request in (`TurnRequest`), the support graph run for its
session with tracing, bounded memory and a session lock, and a plain result out (`ChatTurn`) that the web and
REST endpoint, SSE streaming, the OpenAI-compatible API and the CLI render — and any new front-end (Slack,
Teams) the same way.

What a request means is settled here, not at the edge: the message is cleaned and checked, the system message's
directives are read (persona, response mode, confidence, filters), the collections are checked against the
answer policy, the session is opened for the caller, and after the turn the cited chunks are recorded for
feedback. An edge turns its protocol into a `TurnRequest`, calls `ask` or `start` + `stream`, and renders the
`ChatTurn` (its `envelope()` is the `ChatResponse` every HTTP edge returns)."""

from __future__ import annotations

import logging
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Generator

from sqlalchemy.exc import SQLAlchemyError

from app.adapters.feedback import cited_chunks
from app.adapters.memory import SessionStore
from app.adapters.traces import recorder_in
from app.adapters.tracing import run_config
from app.insights.outcomes import checked_channel, outcome_row
from app.insights.writer import OutcomeWriter
from app.schemas import (
    ChatResponse,
    StageTimingsOut,
    TicketOfferOut,
    TroubleshootingOut,
    clean_message,
    validated_filters,
)
from app.storage.database import DatabaseUnavailable
from core.errors import InvalidRequest
from core.records import OperatingSystem
from graphs.support import SupportContext, SupportInput, TurnResult, turn_input, turn_result
from nodes.support.actions import ACTIONS
from nodes.support.directives import directives_to_filters, parse_directives
from nodes.support.retrieval import feedback_key

log = logging.getLogger(__name__)

DEFAULT_MAX_MESSAGE_CHARS = 4000


class SessionNotFound(LookupError):
    """No conversation with this id belongs to the caller (→ 404)."""


class InvalidMessage(InvalidRequest):
    """The message is empty or too long (→ 422; the OpenAI-compatible API words it as its 400)."""

    def __init__(self, detail: str, *, length: int, limit: int) -> None:
        super().__init__(detail)
        self.length, self.limit = length, limit


def new_session_id() -> str:
    return uuid.uuid4().hex


@dataclass(frozen=True)
class TurnRequest:
    """One user message as an edge hands it over: what was typed, which conversation, who asks, and how the
    caller wants it answered. Plain values only; the service checks every one of them."""

    message: str
    session_id: str | None = None  # None: a new conversation
    user_id: str | None = None  # the verified caller (None: anonymous)
    groups: frozenset[str] = frozenset()  # the caller's groups: which restricted documents they may read
    user_os: OperatingSystem | None = None
    filters: dict | None = None  # a document-context filter (core/filters.py); None: the directives' or none
    system: str | None = None  # a system message: persona and directives (nodes/support/directives.py)
    collections: list[str] | None = None  # knowledge collections to answer from; None: every one configured
    response_mode: str | None = None  # RAG_ONLY … LLM_PRIORITY; None: the directives' or the configured one
    debug: bool = False  # the envelope carries the response rule chosen and its profile
    channel: str = "api"  # where the message came from: web, api, cli (slack, teams): what insights count by


@dataclass(frozen=True)
class Steering:
    """How a turn should be answered, from the request and its system message (directives)."""

    response_mode: str | None = None
    filters: dict | None = None
    directives: dict | None = None
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class PreparedTurn:
    """A request the service accepted: its message checked, its directives read, its session opened."""

    request: TurnRequest
    message: str
    session_id: str
    steering: Steering
    collections: list[str] | None
    new_session: bool = False  # the session was drawn for this turn (the request named none)


@dataclass
class ChatTurn:
    """A finished turn: the turn record and the session after it (`output`, flat), and how the run went."""

    session_id: str
    trace_id: str
    output: TurnResult
    duration_ms: float = 0.0
    tags: list[str] = field(default_factory=list)
    # per-stage milliseconds of this run: embedding_ms, retrieval_ms, decision_ms, generation_ms, total_ms
    timings: dict[str, float] | None = None
    warnings: tuple[str, ...] = ()  # system-message directives that were ignored, and why
    debug: bool = False

    def envelope(self) -> ChatResponse:
        """The turn as the API's response (POST /chat, the SSE `message_complete`, the OpenAI `deskmate` field)."""
        return envelope(self)


# The chat envelope's fields that are not the turn record's or the session's: what the service adds.
ENVELOPE_ONLY_FIELDS = frozenset({"session_id", "trace_id", "message_id", "timings", "directive_warnings"})


def envelope(turn: ChatTurn) -> ChatResponse:
    """The graph's output as the API's response. Every ChatResponse field named like a turn or session key is
    that key's value (tests/unit/test_turn_record.py ties them); the rest the service adds."""
    out = turn.output
    shared = {name: out[name] for name in ChatResponse.model_fields if name in out}  # type: ignore[literal-required]
    flow, offer = out.get("troubleshooting"), out.get("ticket_offer")
    return ChatResponse.model_validate(
        shared
        | {
            "session_id": turn.session_id,
            "trace_id": turn.trace_id,
            "message_id": turn.trace_id,
            "troubleshooting": TroubleshootingOut.of(flow) if flow else None,
            "ticket_offer": TicketOfferOut.of(offer) if offer else None,
            "timings": StageTimingsOut(**turn.timings) if turn.timings else None,
            "answer_policy": out.get("answer_policy") if turn.debug else None,
            "directive_warnings": list(turn.warnings),
        }
    )


# Nodes whose LLM reply is the answer itself: their tokens are streamed to the user. Other LLM calls
# (the decision's JSON, a ticket draft, troubleshooting steps) are not meant to be read as they arrive.
TOKEN_NODES = frozenset(row.node for row in ACTIONS if row.streams)
# Nodes that write the reply (`answer`) of a turn; `respond` then adds notices to it. localize: the reply again,
# in the language the user wrote in.
REPLY_NODES = frozenset(row.node for row in ACTIONS if row.writes_reply) | {"localize"}


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") if isinstance(part, dict) else str(part) for part in content or [])


def steering_of(system: str | None, response_mode: str | None, filters: dict | None) -> Steering:
    """System-message directives (InvalidDirective → 422 for a bad RESPONSE_MODE; bad optional ones → warnings);
    the request's own response_mode and filters win over the directives'."""
    if not system or not system.strip():
        return Steering(response_mode=response_mode, filters=filters)
    parsed = parse_directives(system)
    given = parsed.directives.given
    mode = response_mode or (parsed.directives.response_mode.value if "response_mode" in given else None)
    from_directives = directives_to_filters(parsed.directives)
    if filters is None and from_directives:
        filters = validated_filters(from_directives)
    directives: dict[str, Any] = {"persona": parsed.persona}
    if "min_confidence" in given:
        directives["min_confidence"] = parsed.directives.min_confidence
    if "fallback_strategy" in given:
        directives["fallback_strategy"] = parsed.directives.fallback_strategy
    return Steering(response_mode=mode, filters=filters, directives=directives, warnings=tuple(parsed.warnings))


class ChatService:
    def __init__(
        self,
        graph,
        context: SupportContext,
        sessions: SessionStore,
        tracer,
        *,
        feedback=None,
        outcomes: OutcomeWriter | None = None,
        max_message_chars: int = DEFAULT_MAX_MESSAGE_CHARS,
    ) -> None:
        self._graph = graph
        self._context = context
        self._sessions = sessions
        self._tracer = tracer
        self._feedback = feedback  # FeedbackStore: which chunks each answer cited (None: feedback is off)
        self._outcomes = outcomes  # writes every turn's outcome record, for insights (None: not kept)
        self.max_message_chars = max_message_chars

    def _session_lock(self, session_id: str):
        # two requests of one session must not interleave their read-modify-write of its state, on this
        # replica or another: a lock in the session store (a Postgres advisory lock in server mode), waited
        # for a bounded time, then SessionBusy (409)
        return self._sessions.turn_lock(session_id)

    # --- what a request means -------------------------------------------------------------------------
    def checked_message(self, text: str) -> str:
        """The message, cleaned; InvalidMessage (→ 422) when it is empty or too long."""
        message = clean_message(text)
        if not message:
            raise InvalidMessage(
                "'message' is empty; type a question or describe the problem.", length=0, limit=self.max_message_chars
            )
        if len(message) > self.max_message_chars:
            raise InvalidMessage(
                f"'message' is {len(message):,} characters long; the limit is {self.max_message_chars:,}. Shorten "
                "it (the error message or log lines that matter are enough).",
                length=len(message),
                limit=self.max_message_chars,
            )
        return message

    def checked_collections(self, collections: list[str] | None) -> list[str] | None:
        """The request's collections, each one the answer policy knows (InvalidRequest → 422 otherwise)."""
        if not collections:
            return None
        policy = self._context.policy
        known = [c.name for c in policy.collections] if policy else ["kb"]
        unknown = [name for name in collections if name not in known]
        if unknown:
            raise InvalidRequest(f"Unknown collection(s): {', '.join(unknown)}. Configured: {', '.join(known)}.")
        return list(dict.fromkeys(collections))

    def start(self, request: TurnRequest) -> PreparedTurn:
        """Check a request and open its session, before anything is answered (an edge that streams calls this
        first, so a bad request is refused before the first byte): InvalidMessage or InvalidRequest (→ 422),
        InvalidDirective (→ 422), SessionNotFound (→ 404)."""
        message = self.checked_message(request.message)
        try:
            checked_channel(request.channel)
        except ValueError as exc:
            raise InvalidRequest(f"'channel' {exc}.") from None
        steering = steering_of(request.system, request.response_mode, request.filters)
        collections = self.checked_collections(request.collections)
        session_id = self.open_session(request.session_id, request.user_id or "anonymous")
        return PreparedTurn(request, message, session_id, steering, collections, new_session=not request.session_id)

    def _graph_input(self, turn: PreparedTurn) -> SupportInput:
        steering = turn.steering
        return turn_input(
            turn.message,
            turn.request.user_os,
            steering.filters,
            collections=turn.collections,
            response_mode=steering.response_mode,
            directives=steering.directives,
        )

    def _run_config(self, turn: PreparedTurn, trace_id: str, tags: list[str]) -> dict:
        return run_config(
            tracer=self._tracer,
            trace_id=trace_id,
            run_name="support",
            session_id=turn.session_id,
            user_id=turn.request.user_id,
            groups=turn.request.groups,
            tags=tags,
        )

    # --- running it -----------------------------------------------------------------------------------
    def ask(self, request: TurnRequest | str, **fields) -> ChatTurn:
        """One turn: `ask(TurnRequest(...))`, or `ask("message", session_id=…, user_id=…)` for short."""
        request = request if isinstance(request, TurnRequest) else TurnRequest(request, **fields)
        return self.run(self.start(request))

    def run(self, turn: PreparedTurn) -> ChatTurn:
        """Answer a prepared turn (SessionBusy → 409 when another turn of the session holds it too long)."""
        trace_id = uuid.uuid4().hex
        config = self._run_config(turn, trace_id, ["chat"])
        recorder = recorder_in(config)
        started = time.perf_counter()
        with self._session_lock(turn.session_id):
            # durability="exit": only the finished turn is written, so the raw message (the graph's
            # input, before the redact node) never reaches the checkpoint database
            output = self._graph.invoke(self._graph_input(turn), config, context=self._context, durability="exit")
            # prune, forget the aliases of earlier states (a new session has neither)
            self._sessions.after_turn(turn.session_id, new=turn.new_session)
        duration = (time.perf_counter() - started) * 1000
        result = turn_result(output)
        log.info(
            "chat turn session=%s trace=%s action=%s %.0f ms", turn.session_id, trace_id, result.get("action"), duration
        )
        finished = self._finished(turn, trace_id, result, duration, recorder)
        self.remember_answer(finished)
        self.remember_outcome(turn, finished)
        return finished

    def stream(self, turn: PreparedTurn) -> Generator[tuple[str, Any], None, None]:
        """One prepared turn as events, while the graph runs: ("start", {session_id, trace_id}) at once,
        ("node", {name, duration_ms}) as each node finishes, ("token", {text, node}) as the LLM writes the
        reply, ("sources", [...]) and ("content_chunk", {text}) when a node has written the reply, and last
        ("turn", ChatTurn).

        Closing the generator early (the client left) stops the graph before its next step, releases
        the session and records the run as cancelled; nothing of the unfinished turn is remembered.
        """
        trace_id = uuid.uuid4().hex
        config = self._run_config(turn, trace_id, ["chat", "stream"])
        recorder = recorder_in(config)
        started = time.perf_counter()
        output: dict = {}
        output_keys = (
            set(self._graph.output_channels)
            if isinstance(self._graph.output_channels, list)
            else {self._graph.output_channels}
        )
        yield "start", {"session_id": turn.session_id, "trace_id": trace_id}
        with self._session_lock(turn.session_id):
            events = self._graph.stream(
                self._graph_input(turn),
                config,
                context=self._context,
                durability="exit",
                stream_mode=["updates", "messages", "values"],
            )
            finished = False
            try:
                for mode, payload in events:
                    if mode == "values":  # the whole state; the last one, cut to the output schema, is the result
                        output = {k: v for k, v in payload.items() if k in output_keys}
                    elif mode == "messages":
                        chunk, meta = payload
                        node = meta.get("langgraph_node", "")
                        if chunk.type == "AIMessageChunk" and node in TOKEN_NODES and _text(chunk.content):
                            yield "token", {"text": _text(chunk.content), "node": node}
                    else:
                        for node, update in payload.items():
                            yield (
                                "node",
                                {"name": node, "duration_ms": recorder.duration_of(node) if recorder else None},
                            )
                            written = (update or {}).get("turn") if isinstance(update, dict) else None
                            if node in REPLY_NODES and isinstance(written, dict):
                                if written.get("sources"):
                                    yield "sources", written["sources"]
                                if written.get("answer"):
                                    yield "content_chunk", {"text": written["answer"], "node": node}
                finished = True
            finally:
                events.close()
                if not finished:
                    if recorder:
                        recorder.abandon()
                    log.info("chat stream session=%s trace=%s stopped before the end", turn.session_id, trace_id)
            # prune, forget the aliases of earlier states (a new session has neither)
            self._sessions.after_turn(turn.session_id, new=turn.new_session)
        duration = (time.perf_counter() - started) * 1000
        result = turn_result(output)
        log.info(
            "chat turn (streamed) session=%s trace=%s action=%s %.0f ms",
            turn.session_id,
            trace_id,
            result.get("action"),
            duration,
        )
        done = self._finished(turn, trace_id, result, duration, recorder)
        self.remember_answer(done)
        self.remember_outcome(turn, done)
        yield "turn", done

    @staticmethod
    def _finished(turn: PreparedTurn, trace_id: str, result: TurnResult, duration: float, recorder) -> ChatTurn:
        return ChatTurn(
            session_id=turn.session_id,
            trace_id=trace_id,
            output=result,
            duration_ms=duration,
            timings=recorder.timings if recorder else None,
            warnings=turn.steering.warnings,
            debug=turn.request.debug,
        )

    def remember_answer(self, turn: ChatTurn) -> None:
        """Record which chunks this assistant message cited, so a vote on it (POST /feedback) can credit them.
        A failure is logged and never fails the chat."""
        if self._feedback is None:
            return
        out = turn.output
        try:
            question = out.get("search_query") or out.get("query") or ""  # redacted; follow-ups come enriched
            self._feedback.record_answer(
                turn.trace_id,
                turn.session_id,
                question,
                cited_chunks(out.get("sources", []), out.get("retrieved_chunks", []), feedback_key),
            )
        except (SQLAlchemyError, DatabaseUnavailable) as exc:  # what the feedback store raises, on either engine
            log.warning("could not record answer %s for feedback: %s", turn.trace_id, exc)

    def remember_outcome(self, prepared: PreparedTurn, turn: ChatTurn) -> None:
        """Hand the turn's outcome record (app/insights/outcomes.py) to the writer, which stores it beside the
        turn's trace after the reply; never waits for the database, never fails the chat."""
        if self._outcomes is None:
            return
        self._outcomes.submit(
            outcome_row(
                turn.output,
                trace_id=turn.trace_id,
                session_id=turn.session_id,
                user_id=prepared.request.user_id,
                channel=prepared.request.channel,
                latency_ms=turn.duration_ms,
                ts=time.time(),
            )
        )

    # --- sessions -------------------------------------------------------------------------------------
    @property
    def graph(self):
        """The compiled support graph (GET /graphs draws it)."""
        return self._graph

    def open_session(self, session_id: str | None, user_id: str) -> str:
        """The session to run a turn in: a new one (owned by `user_id`) when `session_id` is None, else the
        given one if `user_id` owns it (or it is new). SessionNotFound otherwise: another caller's
        conversation is neither continued nor confirmed to exist."""
        minted = not session_id
        session_id = session_id or new_session_id()
        if not self._sessions.claim(session_id, user_id, minted=minted):
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
        return [
            {"role": "user" if m.type == "human" else "assistant", "content": str(m.content)}
            for m in snapshot.values.get("messages", [])
        ]
