"""The indexing graph: load → parse → chunk → embed → store (unchanged files stop after load; a run asked to
`embed_later` stops after chunk, and its caller embeds many documents at once and stores each)."""

from __future__ import annotations

from typing import Literal

from langgraph.graph import END, START, StateGraph

from graphs.context import IndexingContext
from graphs.state_indexing import IndexingInput, IndexingOutput, IndexingState
from nodes.indexing.steps import chunk, embed, load, parse, store


def route_after_load(state: IndexingState) -> Literal["parse", "__end__"]:
    """Same bytes as the active version: nothing to do."""
    return END if state.get("status") == "unchanged" else "parse"


def route_after_chunk(state: IndexingState) -> Literal["embed", "__end__"]:
    """A batch caller embeds the chunks of many documents in one encoder call."""
    return END if state.get("embed_later") else "embed"


def build_indexing_graph():
    builder = StateGraph(IndexingState, context_schema=IndexingContext,
                         input_schema=IndexingInput, output_schema=IndexingOutput)
    builder.add_node("load", load)
    builder.add_node("parse", parse)
    builder.add_node("chunk", chunk)
    builder.add_node("embed", embed)
    builder.add_node("store", store)
    builder.add_edge(START, "load")
    builder.add_conditional_edges("load", route_after_load)
    builder.add_edge("parse", "chunk")
    builder.add_conditional_edges("chunk", route_after_chunk)
    builder.add_edge("embed", "store")
    builder.add_edge("store", END)
    return builder.compile(name="indexing")
