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

from typing import Literal

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph

from graphs.context import SupportContext
from graphs.state import SupportInput, SupportOutput, SupportState
from nodes.answer import answer
from nodes.check_status import check_status
from nodes.clarify import clarify
from nodes.classify import classify
from nodes.converse import converse
from nodes.decide import decide
from nodes.embed_query import embed_query
from nodes.integration import use_integration
from nodes.redact import redact
from nodes.respond import respond
from nodes.retrieve import retrieve
from nodes.search_tickets import search_tickets
from nodes.ticket import ticket
from nodes.translate import localize, translate
from nodes.troubleshoot import troubleshoot

ACTION_NODES = {
    "answer": "answer",
    "clarify": "clarify",
    "converse": "converse",
    "search_kb": "embed_query",
    "troubleshoot": "troubleshoot",
    "check_status": "check_status",
    "create_ticket": "ticket",
    "search_tickets": "search_tickets",
    "use_integration": "use_integration",
}


def awaits_reply(state: SupportState) -> bool:
    """deskmate asked something last turn: a ticket offer, or a troubleshooting step."""
    flow = state.get("troubleshooting") or {}
    return bool(state.get("ticket_offer")) or flow.get("status") in ("in_progress", "paused")


def route_after_classify(state: SupportState) -> Literal["translate", "embed_query", "decide"]:
    """A message in another language goes to translation first (once a turn); a dialogue act ("a person,
    please", "thanks", "are you a bot?") and replies like "yes" or "still broken" to deskmate's own question
    need no search."""
    if state.get("language") and not state.get("translated"):
        return "translate"
    if state.get("dialogue_act") == "out_of_scope" and not awaits_reply(state):
        return "embed_query"  # it only sounds off-topic until the knowledge base was asked ("weather app", "my TV")
    if state.get("dialogue_act") or (state.get("reply_kind") and awaits_reply(state)):
        return "decide"
    return "embed_query"


def route_after_translate(state: SupportState) -> Literal["classify", "decide"]:
    """Translated: read the English message like any other. Not translated (no LLM, or it failed): decide
    answers with the notice in the user's language."""
    return "classify" if state.get("translated") else "decide"


def route_decision(state: SupportState) -> Literal["answer", "clarify", "converse", "embed_query", "troubleshoot",
                                                    "check_status", "ticket", "search_tickets", "use_integration"]:
    """Map the decided action to the node that carries it out."""
    action = state.get("action")
    if action not in ACTION_NODES:
        raise ValueError(f"decide produced an action this graph cannot route: {action!r}")
    return ACTION_NODES[action]


def route_reply(state: SupportState) -> Literal["localize", "respond"]:
    """A reply to a translated message goes back into the user's language before it is sent."""
    return "localize" if state.get("translated") else "respond"


def route_after_troubleshoot(state: SupportState) -> Literal["ticket", "localize", "respond"]:
    """Too many failed steps: hand over to the ticket offer."""
    flow = state.get("troubleshooting") or {}
    return "ticket" if flow.get("status") == "escalated" else route_reply(state)


def build_support_graph(checkpointer: BaseCheckpointSaver | None = None):
    """Compile the support graph; pass a checkpointer to keep sessions between turns."""
    builder = StateGraph(SupportState, context_schema=SupportContext,
                         input_schema=SupportInput, output_schema=SupportOutput)
    builder.add_node("redact", redact)
    builder.add_node("classify", classify)
    builder.add_node("translate", translate)
    builder.add_node("embed_query", embed_query)
    builder.add_node("retrieve", retrieve)
    builder.add_node("decide", decide)
    builder.add_node("check_status", check_status)
    builder.add_node("answer", answer)
    builder.add_node("clarify", clarify)
    builder.add_node("converse", converse)
    builder.add_node("troubleshoot", troubleshoot)
    builder.add_node("ticket", ticket)
    builder.add_node("search_tickets", search_tickets)
    builder.add_node("use_integration", use_integration)
    builder.add_node("localize", localize)
    builder.add_node("respond", respond)

    builder.add_edge(START, "redact")
    builder.add_edge("redact", "classify")
    builder.add_conditional_edges("classify", route_after_classify)
    builder.add_conditional_edges("translate", route_after_translate)  # bounded: classify translates at most once
    builder.add_edge("embed_query", "retrieve")
    builder.add_edge("retrieve", "decide")
    builder.add_conditional_edges("decide", route_decision)
    builder.add_edge("check_status", "decide")  # bounded: decide never asks for a second check in a turn
    builder.add_conditional_edges("troubleshoot", route_after_troubleshoot)
    for replying in ("answer", "clarify", "converse", "ticket", "search_tickets", "use_integration"):
        builder.add_conditional_edges(replying, route_reply)
    builder.add_edge("localize", "respond")
    builder.add_edge("respond", END)
    return builder.compile(checkpointer=checkpointer, name="support")
