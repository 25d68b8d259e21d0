"""converse: the replies that need no search — greetings, closings, what deskmate is and can do, off-topic
messages, and the notice for a message no LLM could translate.

A closing (thanks, goodbye, "it works now") also ends what is open: a step-by-step flow in progress is
closed (resolved, or left on goodbye), a pending ticket offer is withdrawn, and "it works now" closes this
session's open ticket.
"""

from __future__ import annotations

from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

from graphs.context import SupportContext
from graphs.state import SupportState
from nodes.language import language_notice
from nodes.replies import (ANYTHING_ELSE, BOT_DISCLOSURE, CAPABILITIES, CAPABILITIES_ASK, CAPABILITIES_INTRO,
                           CLOSED_FLOW, CLOSED_OFFER, CLOSED_TICKET, CLOSING_REPLIES, OUT_OF_SCOPE,
                           REACH_A_PERSON_CONTACT, REACH_A_PERSON_DESK, REACH_A_PERSON_TICKET, RESUME_HINT,
                           SMALL_TALK_REPLIES)
from nodes.ticket_ops import close_session_ticket


def reach_a_person(ctx: SupportContext) -> str:
    """How a person is reached here: the configured contact, a ticket, or the service desk."""
    if ctx.handoff_contact:
        return REACH_A_PERSON_CONTACT.format(contact=ctx.handoff_contact.strip().rstrip("."))
    return REACH_A_PERSON_TICKET if ctx.tickets is not None else REACH_A_PERSON_DESK


def capabilities(ctx: SupportContext) -> str:
    """What this deployment can do, as a short list (the status page and tickets only when configured)."""
    offered = ["answer", "troubleshoot"] + (["status"] if ctx.status is not None else []) + \
        (["tickets"] if ctx.tickets is not None else []) + (["person"] if ctx.handoff_contact or ctx.tickets else [])
    lines = "\n".join(f"- {CAPABILITIES[name]}" for name in offered)
    return f"{CAPABILITIES_INTRO}\n\n{lines}\n\n{CAPABILITIES_ASK}"


def closing(state: SupportState, ctx: SupportContext, config: RunnableConfig) -> dict:
    """Thanks, goodbye or "it works now": end what is open and say so in a sentence or two."""
    act = state["dialogue_act"]
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
    """The fixed reply for a dialogue act that needs no closing."""
    act = state.get("dialogue_act", "")
    if state.get("language") and not state.get("translated"):
        return language_notice(state["language"])
    if act == "bot_challenge":
        return f"{BOT_DISCLOSURE} {reach_a_person(ctx)}"
    if act == "capabilities":
        return capabilities(ctx)
    if act == "out_of_scope":
        return OUT_OF_SCOPE
    if act == "greeting":
        return SMALL_TALK_REPLIES["greeting"]
    raise ValueError(f"converse has no reply for the dialogue act {act!r}")


def converse(state: SupportState, runtime: Runtime[SupportContext], config: RunnableConfig) -> dict:
    ctx = runtime.context
    update: dict = {"needs_input": False, "is_clarifying": False, "sources": []}
    if state.get("dialogue_act") in CLOSING_REPLIES and not (state.get("language") and not state.get("translated")):
        return update | closing(state, ctx, config)
    text = reply_text(state, ctx)
    flow = state.get("troubleshooting")
    if flow and flow["status"] == "paused":  # decide paused it for this aside
        text += "\n\n" + RESUME_HINT.format(issue=flow["issue"])
    return update | {"answer": text}
