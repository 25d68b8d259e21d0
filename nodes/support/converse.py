"""converse: the replies that need no search — greetings, closings, what deskmate is and can do, off-topic
messages, and the notice for a message no LLM could translate.

A closing (thanks, goodbye, "it works now") also ends what is open: a step-by-step flow in progress is
closed (resolved, or left on goodbye), a pending ticket offer is withdrawn, and "it works now" closes this
session's open ticket.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

from nodes.support.dialogue_acts import act_spec
from nodes.support.language import language_notice
from nodes.support.replies import (
    ANYTHING_ELSE,
    CLOSED_FLOW,
    CLOSED_OFFER,
    CLOSED_TICKET,
    CLOSING_REPLIES,
    RESUME_HINT,
)
from nodes.support.ticket_ops import close_session_ticket
from nodes.support.updates import split_update

if TYPE_CHECKING:
    from graphs.support import SupportContext, SupportState


def closing(state: SupportState, ctx: SupportContext, config: RunnableConfig) -> dict:
    """Thanks, goodbye or "it works now": end what is open and say so in a sentence or two."""
    act = state["turn"]["dialogue_act"]
    update: dict = {}
    said = [CLOSING_REPLIES[act]]
    flow = state.get("troubleshooting")
    if flow and flow["status"] == "in_progress":
        update["troubleshooting"] = {**flow, "status": "exited" if act == "farewell" else "resolved"}
        said.append(CLOSED_FLOW[act])
    if state.get("ticket_offer"):
        update.update(ticket_offer=None, ticket_event="declined")
        said.append(CLOSED_OFFER)
    if act == "resolved":
        closed = close_session_ticket(state, ctx, config, reason="Reported in chat.")
        if closed:
            update.update(closed)
            said.append(CLOSED_TICKET.format(id=closed["ticket"]["id"]))
    if act != "farewell":
        said.append(ANYTHING_ELSE)
    return update | {"answer": " ".join(said)}


def reply_text(state: SupportState, ctx: SupportContext) -> str:
    """The fixed reply for a dialogue act that needs no closing: its registry row's reply
    (nodes/support/dialogue_acts.py), or the notice for a message no LLM translated."""
    act = state["turn"].get("dialogue_act", "")
    if state["turn"].get("language") and not state["turn"].get("translated"):
        return language_notice(state["turn"]["language"])
    spec = act_spec(act)
    if spec is None or spec.reply is None:
        raise ValueError(f"converse has no reply for the dialogue act {act!r}")
    return spec.reply(state, ctx)


def converse(state: SupportState, runtime: Runtime[SupportContext], config: RunnableConfig) -> dict:
    ctx = runtime.context
    update: dict = {"needs_input": False, "is_clarifying": False, "sources": []}
    spec = act_spec(state["turn"].get("dialogue_act", ""))
    if spec is not None and spec.closes and not (state["turn"].get("language") and not state["turn"].get("translated")):
        return split_update(update | closing(state, ctx, config), SESSION_KEYS)
    text = reply_text(state, ctx)
    flow = state.get("troubleshooting")
    if flow and flow["status"] == "paused":  # decide paused it for this aside
        text += "\n\n" + RESUME_HINT.format(issue=flow["issue"])
    return {"turn": update | {"answer": text}}


SESSION_KEYS = ("troubleshooting", "ticket_offer", "ticket")  # what a closing ends of the session
