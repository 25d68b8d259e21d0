"""The support conversation graph, readable top to bottom.

    redact → classify ─┬─ (not English) → translate ─(translated)→ classify
                       │                          └─(offline)─────────────────────┐
                       ├─ (a dialogue act, or a reply to deskmate's own question) ─┤
                       └→ embed_query → retrieve ──────────────────────────→ decide ┤
                              ↑                          check_status ⇄ decide      │
                              └──────── search_kb ─────────────────────────────────┤
              answer | clarify | converse | search_tickets | use_integration ─→ (localize) → respond → END
                                  troubleshoot ─(escalate)→ ticket ─→ (localize) → respond

`localize` puts the reply back into the user's language when `translate` put the message into English.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any, Literal, Mapping, TypedDict

from langchain_core.messages import AnyMessage
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.types import Overwrite

from core.policy_config import AnswerPolicy
from core.ports import (
    ChatModel,
    Embedder,
    FeedbackSource,
    Integration,
    LanguageDetector,
    LexicalIndex,
    Redactor,
    Reranker,
    StatusChecker,
    TicketDesk,
    VectorIndex,
)
from core.records import (
    ArticleRef,
    OperatingSystem,
    RetrievedChunk,
    Source,
    StatusIncident,
    TicketDraft,
    TicketRef,
    Troubleshooting,
)
from nodes.support.actions import action_row, registered_actions
from nodes.support.classify import classify
from nodes.support.decide import decide
from nodes.support.dialogue_acts import act_spec
from nodes.support.redact import redact
from nodes.support.respond import respond
from nodes.support.retrieval import TITLE_MATCH_WEIGHT
from nodes.support.retrieve import retrieve
from nodes.support.translate import localize, translate

if TYPE_CHECKING:
    from nodes.support.calibration import CollectionCalibrator
    from nodes.support.catalogue import ActionCatalogue
    from nodes.support.confidence import ConfidenceModel


# ================================================================================================
# State: one record of what this message did (`turn`, replaced whole at the start of every message) and
# the session (`messages`, the active topic and article, the walkthrough, the ticket, the OS, counters) that
# the checkpointer carries from message to message.
# ================================================================================================
# The names the type checker knows. The registries are the truth (nodes/support/dialogue_acts.py ACTS,
# nodes/support/actions.py ACTIONS); tests/unit/test_registries.py fails when these Literals and they differ.
# "" is a question or a problem, which the knowledge base decides
DialogueAct = Literal[
    "",
    "bot_challenge",
    "handoff",
    "ticket_status",
    "out_of_scope",
    "service_request",
    "capabilities",
    "resolved",
    "farewell",
    "thanks",
    "greeting",
]
Action = Literal[
    "answer",
    "clarify",
    "search_kb",
    "troubleshoot",
    "check_status",
    "create_ticket",
    "search_tickets",
    "converse",
    "use_integration",
]
Intent = Literal["informative", "troubleshooting"]
SmallTalk = Literal["", "greeting", "thanks", "farewell", "resolved"]
ReplyKind = Literal["", "resolved", "failed", "exit", "affirm", "deny", "resume", "done"]
TicketEvent = Literal["", "offered", "edited", "declined", "created", "existing", "closed"]


class Turn(TypedDict):
    """What one user message did, from its redacted text to its reply. A node returns the keys it owns as
    `{"turn": {...}}`; the reducer merges them in. Every key has its fresh value in TURN_DEFAULTS below."""

    # --- the request (the service fills these from what the caller sent) ---
    query: str  # raw user text; the redact node overwrites it before anything else reads it
    search_filters: dict | None  # document-context filter of this turn (core/filters.py), validated by the service
    collections: list[str] | None  # knowledge collections the caller selected (None: all configured)
    response_mode: str | None  # RAG_ONLY … LLM_PRIORITY for this turn (None: the configured default)
    # from a system message: min_confidence, fallback_strategy, persona (nodes/support/directives.py)
    directives: dict | None
    # --- redact ---
    redaction_notice: str | None
    redacted_kinds: list[str]
    injection_suspected: bool  # the message tries to override the assistant's instructions (flag, not refusal)
    injection_signals: list[str]  # which patterns matched, e.g. "override:ignore-instructions"
    # --- classify ---
    intent: Intent
    small_talk: SmallTalk  # the pleasantries among the dialogue acts (kept for the answer node and the trace)
    dialogue_act: DialogueAct
    language: str  # ISO 639-1 code of a message clearly not in English; "" otherwise (nodes/support/language.py)
    translated: bool  # an LLM put the message into English for this turn; the reply is put back into `language`
    keywords: list[str]
    is_vague: bool
    reply_kind: ReplyKind  # "yes", "still broken" …: read as a reply to deskmate's own question by decide
    # --- embed_query ---
    search_query: str  # the wording last searched (follow-ups enriched with their topic); feedback keys on it
    is_follow_up: bool
    tried_queries: list[str]
    query_embedding: list[float]
    # --- retrieve ---
    retrieved_chunks: list[RetrievedChunk]
    search_count: int
    articles: list[ArticleRef]  # the documents found, best first (at most 3)
    confidence: float | None  # how likely the best article answers the message (None: nothing searched)
    question_type: str  # fix | how-to | why | where | what-is (nodes/support/compose.py)
    # --- decide ---
    action: Action
    decision_reasoning: str
    decided_by: Literal["policy", "llm"]
    # the actions the decision LLM was offered (nodes/support/actions.py; empty: no catalogue, every action) and how
    # they were chosen: embedding search, or a fallback (context filter, all) whose reason is kept beside it
    offered_actions: list[str]
    action_selection: Literal["", "embedding", "context_filter", "all"]
    action_selection_reason: str
    integration: str  # the configured integration decide chose (action use_integration); "" otherwise
    integration_call: dict | None  # what calling it did: name, ok, status, elapsed_ms, reason
    # --- the reply (answer, clarify, converse, troubleshoot, ticket …; respond adds the notices) ---
    answer: str
    sources: list[Source]
    needs_input: bool
    is_clarifying: bool
    fallback_notice: str | None
    answer_path: str  # "fact" when the fact path (nodes/support/fact.py) answered; "" otherwise
    answer_policy: dict | None  # the response rule the answer step chose and the profile it matched (trace, debug)
    mode_notice: str | None  # what the response mode tells the user (general knowledge used, documents refused …)
    # --- the agentic branches ---
    status_checked: bool
    status_ok: bool
    status_summary: str  # the status page, formatted for the user ("" when not checked)
    incidents: list[StatusIncident]  # incidents relevant to this message
    ticket_event: TicketEvent


# A fresh turn: every key of Turn, as it is before any node has run (a test fails when the two disagree).
TURN_DEFAULTS: Turn = {
    "query": "",
    "search_filters": None,
    "collections": None,
    "response_mode": None,
    "directives": None,
    "redaction_notice": None,
    "redacted_kinds": [],
    "injection_suspected": False,
    "injection_signals": [],
    "intent": "informative",
    "small_talk": "",
    "dialogue_act": "",
    "language": "",
    "translated": False,
    "keywords": [],
    "is_vague": False,
    "reply_kind": "",
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
    "answer_policy": None,
    "mode_notice": None,
    "status_checked": False,
    "status_ok": True,
    "status_summary": "",
    "incidents": [],
    "ticket_event": "",
}


def merge_turn(current: Turn, update: Turn) -> Turn:
    """The `turn` channel's reducer: a node's keys replace the same keys of this turn's record. A new message
    does not merge — its input is `Overwrite(fresh_turn(...))`, which replaces the record whole."""
    return {**current, **update}


class Session(TypedDict, total=False):
    """What the checkpointer carries from message to message (besides `messages`)."""

    user_os: OperatingSystem | None  # stated once, remembered for the session
    active_topic: str | None
    active_article: dict | None  # {doc_id, title, source, section} last answered from: follow-ups stay in it
    clarify_streak: int
    turn_count: int
    troubleshooting: Troubleshooting | None
    ticket_offer: TicketDraft | None  # drafted, shown, waiting for the user's yes / edit / no
    ticket: TicketRef | None  # the ticket raised in this session


class SupportInput(TypedDict, total=False):
    """What one invocation receives: a fresh turn record (wrapped in Overwrite) and the caller's OS."""

    turn: Annotated[Turn, merge_turn]
    user_os: OperatingSystem | None


class SupportOutput(Session, total=False):
    """What a run returns: this message's turn record and the session as it stands after it."""

    turn: Annotated[Turn, merge_turn]


class SupportState(SupportOutput, total=False):
    """The turn record, the session, and the bounded message history."""

    messages: Annotated[list[AnyMessage], add_messages]


class TurnResult(Turn, Session, total=False):
    """A finished turn as the service and its edges read it: the turn record's keys and the session's, flat."""


SESSION_KEYS = frozenset(Session.__annotations__)
# the channels every message's input replaces before a node reads them: a saved session need not keep their
# values (the SQLite session store leaves them out of its checkpoints; app/adapters/memory.py)
PER_TURN_CHANNELS = frozenset({"turn"})


def fresh_turn(
    query: str,
    search_filters: dict | None = None,
    *,
    collections: list[str] | None = None,
    response_mode: str | None = None,
    directives: dict | None = None,
) -> Turn:
    """The turn record of a new message, before any node has run."""
    return {
        **TURN_DEFAULTS,
        "query": query,
        "search_filters": search_filters or None,
        "collections": collections or None,
        "response_mode": response_mode or None,
        "directives": directives or None,
    }


def turn_input(
    query: str,
    user_os: OperatingSystem | None = None,
    search_filters: dict | None = None,
    *,
    collections: list[str] | None = None,
    response_mode: str | None = None,
    directives: dict | None = None,
) -> SupportInput:
    """The graph input for one user message: a fresh turn record that replaces the last one whole.

    The session is left out so the checkpointer's values carry over; `user_os` is only overwritten when the
    caller states it."""
    turn = fresh_turn(
        query, search_filters, collections=collections, response_mode=response_mode, directives=directives
    )
    update: SupportInput = {"turn": Overwrite(turn)}  # type: ignore[typeddict-item]  # Overwrite: not a merge
    if user_os:
        update["user_os"] = user_os
    return update


def turn_result(output: Mapping[str, Any]) -> TurnResult:
    """A run's output (or a node's update) read flat: its session keys, then the turn record's."""
    flat: dict = {k: v for k, v in output.items() if k != "turn"}
    flat.update(output.get("turn") or {})
    return flat  # type: ignore[return-value]


def flat_values(values: Any) -> Any:
    """What a run's callbacks see (its input, its output, a node's update), read flat as traces have always shown
    it: the turn record's keys beside the session's, a new message's record unwrapped from its Overwrite.
    Anything that is not a support state is returned as it is."""
    if not isinstance(values, dict) or "turn" not in values:
        return values
    turn = values["turn"]
    if isinstance(turn, Overwrite):
        turn = turn.value
    return turn_result({**values, "turn": turn}) if isinstance(turn, dict) else values


# ================================================================================================
# Context: the ports a node may use and the knobs that bound its work, built once by the app (or a
# test) and passed as `context=` to every run; never read from the environment by a node.
# ================================================================================================
@dataclass(frozen=True)
class RetrievalConfig:
    """Knobs of the retrieval pipeline (nodes/support/retrieval.py). Every stage can be switched off, which is
    how bench/retrieval.py measures what each one buys. Defaults were tuned on tv-dev only."""

    lexical: bool = True  # BM25 beside the dense index (needs SupportContext.lexical)
    fusion: Literal["weighted", "rrf"] = "weighted"  # how the two rankings are merged
    dense_weight: float = 0.3  # score = w·cosine + (1 − w)·BM25 share; also the confidence under rrf
    rrf_k: int = 60  # reciprocal-rank constant (fusion="rrf")
    aggregate_sections: bool = True  # rank sections by their best chunk; cap chunks per section
    max_chunks_per_section: int = 2
    section_bonus: float = 0.0  # + bonus × the section's second-best chunk score (0: max only)
    neighbour_radius: int = 1  # chunks either side of a confident top hit added for context (0: off)
    neighbour_decay: float = 0.9  # a neighbour's score = top score × decay
    rerank_top_n: int = 30  # candidates a configured cross-encoder rescores
    feedback: bool = True  # apply learned per-chunk multipliers (needs SupportContext.feedback)
    secondary_boost: float = 0.1  # filters: score × (1 + boost × share of secondary fields matched)
    title_match_weight: float = TITLE_MATCH_WEIGHT  # score × (1 + w × share of the article's title asked); 0: off


@dataclass(frozen=True)
class SupportContext:
    embedder: Embedder
    index: VectorIndex
    redactor: Redactor
    llm: ChatModel | None = None
    status: StatusChecker | None = None  # None: no status page configured
    tickets: TicketDesk | None = None  # None: tickets cannot be created (offered as contact info instead)
    lexical: LexicalIndex | None = None  # None: dense retrieval only
    reranker: Reranker | None = None  # None (default): no cross-encoder
    feedback: FeedbackSource | None = None  # None: votes do not adjust retrieval
    retrieval: RetrievalConfig = field(default_factory=RetrievalConfig)
    top_k: int = 5
    candidate_k: int = 20
    min_score: float = 0.40
    max_searches: int = 3
    history_turns: int = 10
    llm_max_tokens: int = 1024
    # the answer policy: response rules, knowledge collections, named LLMs; None: built-in defaults
    policy: AnswerPolicy | None = None
    main_collection: str = "kb"  # the policy's collection that `index` holds (retrieved by the graph itself)
    collections: Mapping[str, Any] = field(default_factory=dict)  # other collections: name → hybrid index
    llms: Mapping[str, ChatModel | None] = field(default_factory=dict)  # "name" / "name:model" → model
    max_turns: int = 20  # past this, a still-unresolved conversation is offered a ticket
    max_failed_steps: int = 3  # troubleshooting escalates after this many failed steps
    fact_path: bool = False  # fact questions get a short extractive span (nodes/support/fact.py) when confident
    fact_min_confidence: float = 0.6  # below this the answer node falls through to its normal path
    # the actions offered to the decision LLM per message (nodes/support/actions.py); None: all of them, no selection
    actions: ActionCatalogue | None = None
    # configured read-only lookups (DESKMATE_CONFIG `integrations:`), by name; each is also in `actions`
    integrations: Mapping[str, Integration] = field(default_factory=dict)
    # without an LLM, a message goes to an integration when its closest example is at least this similar
    # (cosine) and closer than every built-in action's examples
    integration_min_score: float = 0.6
    # which language a message is in; None: every message is read as English (nodes/support/language.py)
    language: LanguageDetector | None = None
    # how a person at the service desk is reached ("call +1 555 0100 or open https://…"), told to users who ask
    # for one; "": a ticket carrying the conversation is the way to a person
    handoff_contact: str = ""
    # the calibrated answer confidence (nodes/support/confidence.py); None: the best chunk's score stands in for it
    # and `min_score` is the answer threshold (how deskmate answered before the model existed)
    confidence_model: ConfidenceModel | None = None
    answer_threshold: float | None = None  # None: the model's own threshold, chosen on development data
    # moves the model's threshold by where this collection's own unanswered probes score (None: the model's as is)
    calibrator: CollectionCalibrator | None = None

    def confidence_threshold(self) -> float:
        """The confidence at or above which deskmate answers from the knowledge base."""
        if self.answer_threshold is not None:
            return self.answer_threshold
        if self.confidence_model is None:
            return self.min_score
        if self.calibrator is not None:
            return self.calibrator.threshold(self, self.confidence_model.threshold)
        return self.confidence_model.threshold


# ================================================================================================
# The graph. The action nodes and decide's edges come from the registry (nodes/support/actions.py): one row
# per action names its node, its function and where that node goes next.
# ================================================================================================
def awaits_reply(state: SupportState) -> bool:
    """deskmate asked something last turn: a ticket offer, or a troubleshooting step."""
    flow: Mapping[str, Any] = state.get("troubleshooting") or {}
    return bool(state.get("ticket_offer")) or flow.get("status") in ("in_progress", "paused", "completed")


def route_after_classify(state: SupportState) -> Literal["translate", "embed_query", "decide"]:
    """A message in another language goes to translation first (once a turn); a dialogue act ("a person,
    please", "thanks", "are you a bot?") and replies like "yes" or "still broken" to deskmate's own question
    need no search — except an act the knowledge base is asked about first (it may only sound off-topic)."""
    turn = state["turn"]
    if turn.get("language") and not turn.get("translated"):
        return "translate"
    act = act_spec(turn.get("dialogue_act", ""))
    if act is not None and (act.searched_first or act.procedure_beside) and not awaits_reply(state):
        # it only sounds off-topic until the knowledge base was asked ("weather app", "my TV"), or the knowledge
        # base's procedure for it goes first ("I need Acrobat installed": how software is requested here)
        return "embed_query"
    if act is not None or (turn.get("reply_kind") and awaits_reply(state)):
        return "decide"
    return "embed_query"


def route_after_translate(state: SupportState) -> Literal["classify", "decide"]:
    """Translated: read the English message like any other. Not translated (no LLM, or it failed): decide
    answers with the notice in the user's language."""
    return "classify" if state["turn"].get("translated") else "decide"


def route_decision(state: SupportState) -> str:
    """Map the decided action to the node that carries it out (its registry row's node)."""
    action = state["turn"].get("action")
    row = action_row(action or "")
    if row is None:
        raise ValueError(f"decide produced an action this graph cannot route: {action!r}")
    return row.node


def route_reply(state: SupportState) -> Literal["localize", "respond"]:
    """A reply to a translated message goes back into the user's language before it is sent."""
    return "localize" if state["turn"].get("translated") else "respond"


def route_after_troubleshoot(state: SupportState) -> Literal["ticket", "localize", "respond"]:
    """Too many failed steps: hand over to the ticket offer."""
    flow: Mapping[str, Any] = state.get("troubleshooting") or {}
    return "ticket" if flow.get("status") == "escalated" else route_reply(state)


def build_support_graph(checkpointer: BaseCheckpointSaver | None = None):
    """Compile the support graph; pass a checkpointer to keep sessions between turns."""
    builder = StateGraph(
        SupportState, context_schema=SupportContext, input_schema=SupportInput, output_schema=SupportOutput
    )
    actions = registered_actions()
    searching = [row for row in actions if row.then == "retrieve"]  # search_kb: another wording, embedded
    gathering = [row for row in actions if row.then == "decide"]  # check_status: the status page, for decide
    walking = [row for row in actions if row.then == "walkthrough"]  # troubleshoot: a step, or the escalation
    replying = [row for row in actions if row.then in ("reply", "walkthrough")]  # every node that writes a reply

    builder.add_node("redact", redact)
    builder.add_node("classify", classify)
    builder.add_node("translate", translate)
    for row in searching:
        builder.add_node(row.node, row.step)
    builder.add_node("retrieve", retrieve)  # type: ignore[arg-type]  # langgraph types no (state, runtime, config) node; it calls one
    builder.add_node("decide", decide)  # type: ignore[arg-type]  # the same: a (state, runtime, config) node
    for row in gathering + replying:
        builder.add_node(row.node, row.step)
    builder.add_node("localize", localize)
    builder.add_node("respond", respond)

    builder.add_edge(START, "redact")
    builder.add_edge("redact", "classify")
    builder.add_conditional_edges("classify", route_after_classify)
    builder.add_conditional_edges("translate", route_after_translate)  # bounded: classify translates at most once
    for row in searching:  # bounded: decide searches again only while ctx.max_searches allows
        builder.add_edge(row.node, "retrieve")
    builder.add_edge("retrieve", "decide")
    builder.add_conditional_edges("decide", route_decision, [row.node for row in actions])
    for row in gathering:  # bounded: decide never asks for a second status check in a turn
        builder.add_edge(row.node, "decide")
    for row in walking:
        builder.add_conditional_edges(row.node, route_after_troubleshoot)
    for row in replying:
        if row.then == "reply":
            builder.add_conditional_edges(row.node, route_reply)
    builder.add_edge("localize", "respond")
    builder.add_edge("respond", END)
    return builder.compile(checkpointer=checkpointer, name="support")
