"""The status graph: fetch → parse → summarise (an unreachable page goes fetch → unavailable → summarise).

It never raises on a bad page: every failure ends as a report with ok=False and a reason.
"""

from __future__ import annotations

from typing import Literal

from langgraph.graph import END, START, StateGraph

from graphs.state_status import StatusContext, StatusInput, StatusOutput, StatusState
from nodes.status import fetch, parse, summarise, unavailable


def route_after_fetch(state: StatusState) -> Literal["parse", "unavailable"]:
    """A fetched summary is parsed; a fetch error is reported as such."""
    if "fetch_error" in state:
        return "unavailable"
    if "summary" in state:
        return "parse"
    raise ValueError("fetch produced neither a summary nor an error")


def build_status_graph():
    builder = StateGraph(StatusState, context_schema=StatusContext,
                         input_schema=StatusInput, output_schema=StatusOutput)
    builder.add_node("fetch", fetch)
    builder.add_node("parse", parse)
    builder.add_node("unavailable", unavailable)
    builder.add_node("summarise", summarise)
    builder.add_edge(START, "fetch")
    builder.add_conditional_edges("fetch", route_after_fetch)
    builder.add_edge("parse", "summarise")
    builder.add_edge("unavailable", "summarise")
    builder.add_edge("summarise", END)
    return builder.compile(name="status")
