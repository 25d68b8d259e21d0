"""The support conversation graph, readable top to bottom.

    redact → classify ─┬─ (small talk) ─────────────────────────────┐
                       └→ embed_query → retrieve → decide ──────────┤
                              ↑                      │              │
                              └──── search_kb ───────┤              ↓
                                                     ├→ answer  ─→ respond → END
                                                     └→ clarify ─→ respond
"""

from __future__ import annotations

from typing import Literal

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph

from graphs.context import SupportContext
from graphs.state import SupportInput, SupportOutput, SupportState
from nodes.answer import answer
from nodes.clarify import clarify
from nodes.classify import classify
from nodes.decide import decide
from nodes.embed_query import embed_query
from nodes.redact import redact
from nodes.respond import respond
from nodes.retrieve import retrieve


def route_after_classify(state: SupportState) -> Literal["embed_query", "decide"]:
    """Greetings and thanks need no search."""
    return "decide" if state.get("small_talk") else "embed_query"


def route_decision(state: SupportState) -> Literal["answer", "clarify", "embed_query"]:
    """Map the decided action to the node that carries it out."""
    action = state.get("action")
    if action == "answer":
        return "answer"
    if action == "clarify":
        return "clarify"
    if action == "search_kb":
        return "embed_query"
    raise ValueError(f"decide produced an action this graph cannot route: {action!r}")


def build_support_graph(checkpointer: BaseCheckpointSaver | None = None):
    """Compile the support graph; pass a checkpointer to keep sessions between turns."""
    builder = StateGraph(SupportState, context_schema=SupportContext,
                         input_schema=SupportInput, output_schema=SupportOutput)
    builder.add_node("redact", redact)
    builder.add_node("classify", classify)
    builder.add_node("embed_query", embed_query)
    builder.add_node("retrieve", retrieve)
    builder.add_node("decide", decide)
    builder.add_node("answer", answer)
    builder.add_node("clarify", clarify)
    builder.add_node("respond", respond)

    builder.add_edge(START, "redact")
    builder.add_edge("redact", "classify")
    builder.add_conditional_edges("classify", route_after_classify)
    builder.add_edge("embed_query", "retrieve")
    builder.add_edge("retrieve", "decide")
    builder.add_conditional_edges("decide", route_decision)
    builder.add_edge("answer", "respond")
    builder.add_edge("clarify", "respond")
    builder.add_edge("respond", END)
    return builder.compile(checkpointer=checkpointer, name="support")
