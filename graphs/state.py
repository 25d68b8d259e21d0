"""Typed state of the support conversation graph.

Two lifetimes live here: per-turn keys (reset by `turn_input` at the start of every user
message) and session keys (`messages`, `active_topic`, `user_os`, counters) that the SQLite
checkpointer carries from turn to turn. Every list names its reducer.
"""

from __future__ import annotations

from typing import Annotated, Literal, TypedDict

from langchain_core.messages import AnyMessage
from langgraph.graph.message import add_messages

from graphs.records import (ArticleRef, OperatingSystem, RetrievedChunk, Source, StatusIncident, TicketDraft,
                            TroubleshootingStep)

Intent = Literal["informative", "troubleshooting"]
SmallTalk = Literal["", "greeting", "thanks", "farewell", "resolved"]
# what a message does (nodes/dialogue_acts.py); "" for a question or a problem, which the knowledge base decides
DialogueAct = Literal["", "greeting", "thanks", "farewell", "resolved", "handoff", "ticket_status", "service_request",
                      "bot_challenge", "capabilities", "out_of_scope"]
Action = Literal[
    "answer", "clarify", "search_kb",
    # a reply that needs no search: greetings, closings, what deskmate is and can do, off-topic, language notice
    "converse",
    # the agentic branches (troubleshooting, status, tickets) plug in here
    "troubleshoot", "check_status", "create_ticket", "search_tickets",
    # a configured read-only lookup in another system (`integration` names it)
    "use_integration",
]


ReplyKind = Literal["", "resolved", "failed", "exit", "affirm", "deny", "resume", "done"]
TicketEvent = Literal["", "offered", "edited", "declined", "created", "existing", "closed"]


class Troubleshooting(TypedDict):
    """An interactive troubleshooting workflow; lives in the session until resolved, exited or escalated."""

    issue: str
    topic: str
    steps: list[TroubleshootingStep]
    current: int  # index of the step the user is on
    failed: int
    asked_outcome: bool  # the outcome of the current step was already asked for once
    status: Literal["in_progress", "paused", "resolved", "exited", "escalated"]
    source: dict  # {title, source, chunk_id} the steps came from
    os: str


class TicketRef(TypedDict):
    id: str
    url: str | None
    status: str
    jira_key: str | None


def replace(_old: list, new: list) -> list:
    """Reducer for per-turn lists: the newest value wins."""
    return new


class SupportInput(TypedDict, total=False):
    """What one invocation receives: the message, the caller's OS, and a reset of every per-turn key."""

    # --- input ---
    query: str  # raw user text; the redact node overwrites it before anything else reads it
    user_os: OperatingSystem | None  # stated once, remembered for the session
    search_filters: dict | None  # document-context filter of this turn (graphs/filters.py), validated by the API
    collections: list[str] | None  # knowledge collections the caller selected (None: all configured)
    response_mode: str | None  # RAG_ONLY … LLM_PRIORITY for this turn (None: the configured default)
    answer_policy: dict | None  # the response rule the answer step chose and the profile it matched (trace, debug)
    directives: dict | None  # from a system message: min_confidence, fallback_strategy, persona (nodes/directives.py)
    mode_notice: str | None  # what the response mode tells the user (general knowledge used, documents refused …)
    # --- redact ---
    redaction_notice: str | None
    redacted_kinds: Annotated[list[str], replace]
    injection_suspected: bool  # the message tries to override the assistant's instructions (flag, not refusal)
    injection_signals: Annotated[list[str], replace]  # which patterns matched, e.g. "override:ignore-instructions"
    # --- classify ---
    intent: Intent
    small_talk: SmallTalk  # the pleasantries among the dialogue acts (kept for the answer node and the trace)
    dialogue_act: DialogueAct
    language: str  # ISO 639-1 code of a message clearly not in English; "" otherwise (nodes/language.py)
    translated: bool  # an LLM put the message into English for this turn; the reply is put back into `language`
    keywords: Annotated[list[str], replace]
    is_vague: bool
    # --- embed_query ---
    search_query: str
    is_follow_up: bool
    tried_queries: Annotated[list[str], replace]
    query_embedding: Annotated[list[float], replace]
    # --- retrieve ---
    retrieved_chunks: Annotated[list[RetrievedChunk], replace]
    search_count: int
    articles: Annotated[list[ArticleRef], replace]  # the documents found, best first (at most 3)
    confidence: float | None  # how likely the best article answers the message (None: nothing searched)
    question_type: str  # fix | how-to | why | where | what-is (nodes/compose.py)
    # --- decide ---
    action: Action
    decision_reasoning: str
    decided_by: Literal["policy", "llm"]
    # the actions the decision LLM was offered (nodes/actions.py; empty: no catalogue, every action) and how
    # they were chosen: embedding search, or a fallback (context filter, all) whose reason is kept beside it
    offered_actions: Annotated[list[str], replace]
    action_selection: Literal["", "embedding", "context_filter", "all"]
    action_selection_reason: str
    integration: str  # the configured integration decide chose (action use_integration); "" otherwise
    integration_call: dict | None  # what calling it did: name, ok, status, elapsed_ms, reason
    # --- answer / clarify ---
    answer: str
    sources: Annotated[list[Source], replace]
    needs_input: bool
    is_clarifying: bool
    fallback_notice: str | None
    answer_path: str  # "fact" when the fact path (nodes/fact.py) answered; "" otherwise
    # --- agentic branches, per turn ---
    reply_kind: ReplyKind
    status_checked: bool
    status_ok: bool
    status_summary: str  # the status page, formatted for the user ("" when not checked)
    incidents: Annotated[list[StatusIncident], replace]  # incidents relevant to this message
    ticket_event: TicketEvent


class SupportState(SupportInput, total=False):
    """Per-turn keys plus the session memory the checkpointer carries between turns."""

    messages: Annotated[list[AnyMessage], add_messages]
    active_topic: str | None
    active_article: dict | None  # {doc_id, title, source, section} last answered from: follow-ups stay in it
    clarify_streak: int
    turn_count: int
    troubleshooting: Troubleshooting | None
    ticket_offer: TicketDraft | None  # drafted, shown, waiting for the user's yes / edit / no
    ticket: TicketRef | None  # the ticket raised in this session


class SupportOutput(TypedDict, total=False):
    """What the API and CLI read back after a turn."""

    query: str
    search_query: str  # the wording last searched (follow-ups enriched with their topic); feedback keys on it
    answer: str
    action: Action
    needs_input: bool
    is_clarifying: bool
    sources: list[Source]
    redaction_notice: str | None
    redacted_kinds: list[str]
    injection_suspected: bool
    injection_signals: list[str]
    fallback_notice: str | None
    answer_path: str  # "fact": a short extractive span answered a fact question (nodes/fact.py)
    decision_reasoning: str
    decided_by: str
    offered_actions: list[str]
    action_selection: str
    action_selection_reason: str
    integration: str
    integration_call: dict | None
    user_os: OperatingSystem | None
    intent: Intent
    dialogue_act: DialogueAct
    language: str
    translated: bool
    search_count: int
    retrieved_chunks: list[RetrievedChunk]
    articles: list[ArticleRef]
    confidence: float | None
    question_type: str
    turn_count: int
    troubleshooting: Troubleshooting | None
    ticket_offer: TicketDraft | None
    ticket: TicketRef | None
    ticket_event: TicketEvent
    incidents: list[StatusIncident]
    status_checked: bool
    status_ok: bool
    answer_policy: dict | None
    mode_notice: str | None


def turn_input(query: str, user_os: OperatingSystem | None = None, search_filters: dict | None = None, *,
               collections: list[str] | None = None, response_mode: str | None = None,
               directives: dict | None = None) -> dict:
    """The graph input for one user message: the message plus a reset of every per-turn key.

    Session keys are left out so the checkpointer's values carry over; `user_os` is only
    overwritten when the caller states it.
    """
    update: dict = {
        "query": query,
        "search_filters": search_filters or None,
        "collections": collections or None,
        "response_mode": response_mode or None,
        "answer_policy": None,
        "directives": directives or None,
        "mode_notice": None,
        "redaction_notice": None,
        "redacted_kinds": [],
        "injection_suspected": False,
        "injection_signals": [],
        "small_talk": "",
        "dialogue_act": "",
        "language": "",
        "translated": False,
        "keywords": [],
        "is_vague": False,
        "search_query": "",
        "is_follow_up": False,
        "tried_queries": [],
        "query_embedding": [],
        "retrieved_chunks": [],
        "search_count": 0,
        "articles": [],
        "confidence": None,
        "question_type": "",
        "action": "answer",
        "decision_reasoning": "",
        "decided_by": "policy",
        "offered_actions": [],
        "action_selection": "",
        "action_selection_reason": "",
        "integration": "",
        "integration_call": None,
        "answer": "",
        "sources": [],
        "needs_input": False,
        "is_clarifying": False,
        "fallback_notice": None,
        "answer_path": "",
        "reply_kind": "",
        "status_checked": False,
        "status_ok": True,
        "status_summary": "",
        "incidents": [],
        "ticket_event": "",
    }
    if user_os:
        update["user_os"] = user_os
    return update


# the keys every turn's input resets before any node reads them: a saved session need not keep their values
# (the SQLite session store leaves them out of its checkpoints; app/adapters/memory.py)
TURN_KEYS = frozenset(turn_input(""))
