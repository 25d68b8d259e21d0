"""The status graph: fetch → parse → summarise (an unreachable page goes fetch → unavailable → summarise).

It never raises on a bad page: every failure ends as a report with ok=False and a reason.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, TypedDict

from langgraph.graph import END, START, StateGraph

from core.ports import StatusSource
from core.records import StatusReport
from nodes.status.steps import fetch, parse, summarise, unavailable


# --- state and context: one check of the company status page per run --------------------------------
@dataclass(frozen=True)
class StatusContext:
    """The port the status graph reads from; built by the app, passed as `context=` to every run."""

    source: StatusSource


class StatusInput(TypedDict):
    page_url: str  # the page people can open; carried into the report even when the fetch fails


class StatusState(StatusInput, total=False):
    # --- fetch ---
    checked_at: str  # ISO time of the fetch (UTC)
    summary: Any  # the decoded summary.json, unvalidated until `parse`
    fetch_error: str  # why the page could not be fetched, in words a person understands
    # --- parse (or unavailable) ---
    report: StatusReport
    # --- summarise ---
    summary_text: str


class StatusOutput(TypedDict, total=False):
    report: StatusReport
    summary_text: str


# --- the graph -------------------------------------------------------------------------------------
def route_after_fetch(state: StatusState) -> Literal["parse", "unavailable"]:
    """A fetched summary is parsed; a fetch error is reported as such."""
    if "fetch_error" in state:
        return "unavailable"
    if "summary" in state:
        return "parse"
    raise ValueError("fetch produced neither a summary nor an error")


def build_status_graph():
    builder = StateGraph(
        StatusState, context_schema=StatusContext, input_schema=StatusInput, output_schema=StatusOutput
    )
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
