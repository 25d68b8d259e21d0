"""GET /tickets and GET /tickets/{id}: the tickets deskmate raised, with their Jira status.

There is no authentication yet (a later issue adds it): whose tickets are listed comes from the
`ticket_owner` dependency, which today reads `session_id` / `user_id` from the query and tomorrow
will resolve the authenticated caller instead, without touching the handlers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from fastapi import APIRouter, Depends, HTTPException, Path, Query

from app.adapters.ticket_store import normalise_ticket_id
from app.adapters.tickets import is_anonymous
from app.deps import get_resources
from app.resources import Resources
from app.schemas import TicketList, TicketOut, TicketSummaryOut

router = APIRouter(tags=["tickets"])
_ID_PATTERN = r"^[A-Za-z0-9._:\-]{1,128}$"


@dataclass(frozen=True)
class TicketOwner:
    user_id: str | None
    session_id: str | None


def ticket_owner(
    session_id: str | None = Query(None, pattern=_ID_PATTERN, description="The conversation's id (from /chat)."),
    user_id: str | None = Query(None, pattern=_ID_PATTERN, description="The employee's id."),
) -> TicketOwner:
    """Whose tickets to show. Replace with the authenticated caller once access control exists."""
    if user_id and is_anonymous(user_id):
        user_id = None  # "anonymous" is everyone who is not signed in, not one person
    if not session_id and not user_id:
        raise HTTPException(status_code=422, detail="Say whose tickets to list: add ?session_id=<the id /chat "
                                                    "returned> or ?user_id=<employee id>.")
    return TicketOwner(user_id=user_id or None, session_id=session_id or None)


@router.get("/tickets", response_model=TicketList)
def list_tickets(owner: TicketOwner = Depends(ticket_owner),
                 status: Literal["open", "closed"] | None = Query(None, description="Only open or only closed."),
                 limit: int = Query(50, ge=1, le=200, description="Newest first, at most this many."),
                 resources: Resources = Depends(get_resources)) -> TicketList:
    # a plain `def`: SQLite and the Jira call block, so this runs in the threadpool
    tickets = resources.tickets.list_for(user_id=owner.user_id, session_id=owner.session_id, status=status,
                                         limit=limit)
    return TicketList(tickets=[TicketSummaryOut.model_validate(t) for t in tickets],
                      jira_enabled=resources.tickets.jira_enabled)


@router.get("/tickets/{ticket_id}", response_model=TicketOut)
def get_ticket(ticket_id: str = Path(..., max_length=64, description="A deskmate ticket id, e.g. DM-1A2B3C."),
               resources: Resources = Depends(get_resources)) -> TicketOut:
    normalised = normalise_ticket_id(ticket_id)
    ticket = resources.tickets.get(normalised, refresh=True) if normalised else None
    if ticket is None:
        raise HTTPException(status_code=404, detail=f"No ticket '{ticket_id}'. Ticket ids look like DM-1A2B3C; "
                                                    "GET /tickets?session_id=<your session> lists yours.")
    return TicketOut.model_validate(ticket)
