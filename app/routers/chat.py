"""POST /chat: one turn of a conversation; GET /sessions/{id}: what a conversation remembers."""

from __future__ import annotations

from fastapi import APIRouter, Depends, HTTPException, Path

from app.chat_service import TurnRequest
from app.deps import current_caller, get_resources, reader
from app.identity import Caller
from app.resources import Resources
from app.schemas import ChatRequest, ChatResponse

router = APIRouter(tags=["chat"])


def turn_request(request: ChatRequest, caller: Caller) -> TurnRequest:
    """The body of POST /chat (and /chat/stream) as the chat service's request."""
    return TurnRequest(
        message=request.message,
        session_id=request.session_id,
        user_id=caller.user_id,
        groups=caller.groups,
        user_os=request.user_os,
        filters=request.filters,
        system=request.system,
        collections=request.collections,
        response_mode=request.response_mode,
        debug=request.debug,
        channel=request.channel,
    )


@router.post("/chat", response_model=ChatResponse)
def chat(
    request: ChatRequest, caller: Caller = Depends(current_caller), resources: Resources = Depends(get_resources)
) -> ChatResponse:
    # a plain `def`: the graph embeds on the CPU, so it runs in the threadpool, not on the event loop
    return resources.chat.ask(turn_request(request, caller)).envelope()


@router.get("/sessions/{session_id}")
def get_session(
    session_id: str = Path(..., pattern=r"^[A-Za-z0-9._:\-]{1,128}$", description="From /chat."),
    caller: Caller | None = Depends(reader),
    resources: Resources = Depends(get_resources),
) -> dict:
    """A conversation's remembered messages (redacted), oldest first — yours only (admins: any)."""
    owner = resources.chat.owner(session_id)
    if owner is not None and caller is not None and owner != caller.user_id:
        owner = None  # someone else's conversation: as if it did not exist
    if owner is None:
        raise HTTPException(
            status_code=404,
            detail=f"No conversation '{session_id}' belongs to you. POST /chat without a session_id starts one.",
        )
    return {"session_id": session_id, "messages": resources.chat.history(session_id)}
