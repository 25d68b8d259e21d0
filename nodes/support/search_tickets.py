"""search_tickets: "what's the status of my ticket?" — the caller's tickets, newest first."""

from __future__ import annotations

from typing import TYPE_CHECKING

from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

from core.records import Ticket
from nodes.support.ticket_ops import ANONYMOUS, identity

if TYPE_CHECKING:
    from graphs.support import SupportContext, SupportState

MAX_LISTED = 5


def describe(ticket: Ticket) -> str:
    jira = f", Jira [{ticket['jira_key']}]({ticket['jira_url']})" if ticket.get("jira_key") else ""
    return f"- **{ticket['id']}** — {ticket['summary']} — {ticket['status']} (opened {ticket['created_at'][:10]}{jira})"


def search_tickets(state: SupportState, runtime: Runtime[SupportContext], config: RunnableConfig) -> dict:
    return {"turn": _tickets_reply(runtime.context, config)}


def _tickets_reply(ctx: SupportContext, config: RunnableConfig) -> dict:
    desk = ctx.tickets
    update: dict = {"needs_input": False, "is_clarifying": False, "sources": []}
    if desk is None:
        return update | {"answer": "I can't look up tickets from here; please ask the IT service desk."}
    session_id, user_id = identity(config)
    # without a known caller, only this conversation's tickets are theirs to see
    tickets = desk.list_for(user_id=user_id) if user_id != ANONYMOUS else desk.list_for(session_id=session_id)
    if not tickets:
        return update | {
            "answer": "I couldn't find any tickets for you. If something needs fixing, describe the "
            'problem and I\'ll help, or say "open a ticket".'
        }
    shown = tickets[:MAX_LISTED]
    more = f"\n\n…and {len(tickets) - MAX_LISTED} older ticket(s)." if len(tickets) > MAX_LISTED else ""
    noun = "ticket" if len(tickets) == 1 else "tickets"
    return update | {"answer": f"Your {noun}:\n\n" + "\n".join(describe(t) for t in shown) + more}
