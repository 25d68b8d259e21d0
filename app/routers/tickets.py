"""GET /tickets and GET /tickets/{id}: the caller's own tickets, with their Jira status.

A signed-in caller (X-Deskmate-User) sees the tickets raised for them; with sign-in off, callers are
anonymous and name the conversation (?session_id=) whose tickets they want — the random session id is
the capability. Admins list everyone's tickets at GET /admin/tickets and may open any ticket here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from fastapi import APIRouter, Depends, HTTPException, Path, Query

from app.adapters.ticket_store import normalise_ticket_id
from app.deps import current_caller, get_resources, reader
from app.identity import Caller
from app.resources import Resources
from app.schemas import TicketList, TicketOut, TicketSummaryOut

router = APIRouter(tags=["tickets"])
_ID_PATTERN = r"^[A-Za-z0-9._:\-]{1,128}$"


@dataclass(frozen=True)
class TicketOwner:
    user_id: str | None
    session_id: str | None


def ticket_owner(
    session_id: str | None = Query(
        None, pattern=_ID_PATTERN, description="The conversation's id (from /chat); needed when sign-in is off."
    ),
    user_id: str | None = Query(
        None, pattern=_ID_PATTERN, description="Deprecated: the signed-in caller is used; any other id is refused."
    ),
    caller: Caller = Depends(current_caller),
) -> TicketOwner:
    """Whose tickets to show: the signed-in caller's (optionally one conversation of theirs), or — sign-in
    off — one anonymous conversation's."""
    if caller.signed_in:
        if user_id and user_id != caller.user_id:
            raise HTTPException(status_code=403, detail="You can list only your own tickets; leave out user_id.")
        return TicketOwner(user_id=caller.user_id, session_id=session_id or None)
    if user_id:
        raise HTTPException(
            status_code=403,
            detail="Sign-in is off, so deskmate cannot tell whose user_id this "
            "is: list a conversation's tickets with ?session_id=<the id "
            "/chat returned> (admins: GET /admin/tickets).",
        )
    if not session_id:
        raise HTTPException(
            status_code=422, detail="Say whose tickets to list: add ?session_id=<the id /chat returned>."
        )
    return TicketOwner(user_id=None, session_id=session_id)


@router.get("/tickets", response_model=TicketList)
def list_tickets(
    owner: TicketOwner = Depends(ticket_owner),
    status: Literal["open", "closed"] | None = Query(None, description="Only open or only closed."),
    limit: int = Query(50, ge=1, le=200, description="Newest first, at most this many."),
    resources: Resources = Depends(get_resources),
) -> TicketList:
    # a plain `def`: SQLite and the Jira call block, so this runs in the threadpool
    tickets = resources.tickets.list_for(user_id=owner.user_id, session_id=owner.session_id, status=status, limit=limit)
    return TicketList(
        tickets=[TicketSummaryOut.model_validate(t) for t in tickets], jira_enabled=resources.tickets.jira_enabled
    )


@router.get("/tickets/{ticket_id}", response_model=TicketOut)
def get_ticket(
    ticket_id: str = Path(..., max_length=64, description="A deskmate ticket id, e.g. DM-1A2B3C."),
    session_id: str | None = Query(
        None, pattern=_ID_PATTERN, description="The conversation the ticket was raised in (needed when sign-in is off)."
    ),
    caller: Caller | None = Depends(reader),
    resources: Resources = Depends(get_resources),
) -> TicketOut:
    normalised = normalise_ticket_id(ticket_id)
    ticket = resources.tickets.get(normalised, refresh=True) if normalised else None
    if ticket is not None and caller is not None:
        mine = ticket["user_id"] == caller.user_id if caller.signed_in else ticket["session_id"] == session_id
        if not mine:
            ticket = None  # someone else's ticket: as if it did not exist
    if ticket is None:
        raise HTTPException(
            status_code=404,
            detail=f"No ticket '{ticket_id}'. Ticket ids look like DM-1A2B3C; "
            "GET /tickets?session_id=<your session> lists yours.",
        )
    return TicketOut.model_validate(ticket)
