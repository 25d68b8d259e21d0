"""POST /chat: one turn of a conversation."""

from __future__ import annotations

from fastapi import APIRouter, Depends, HTTPException

from app.deps import get_resources
from app.resources import Resources
from app.schemas import ChatRequest, ChatResponse, SourceOut, clean_message

router = APIRouter(tags=["chat"])


@router.post("/chat", response_model=ChatResponse)
def chat(request: ChatRequest, resources: Resources = Depends(get_resources)) -> ChatResponse:
    # a plain `def`: the graph embeds on the CPU, so it runs in the threadpool, not on the event loop
    message = clean_message(request.message)
    if not message:
        raise HTTPException(status_code=422, detail="'message' is empty; type a question or describe the problem.")
    limit = resources.settings.max_message_chars
    if len(message) > limit:
        raise HTTPException(status_code=422, detail=f"'message' is {len(message):,} characters long; the limit "
                                                    f"is {limit:,}. Shorten it or attach a document instead.")
    turn = resources.chat.ask(message, session_id=request.session_id, user_os=request.user_os)
    out = turn.output
    return ChatResponse(
        answer=out.get("answer", ""),
        session_id=turn.session_id,
        action=out.get("action", "answer"),
        needs_input=bool(out.get("needs_input")),
        is_clarifying=bool(out.get("is_clarifying")),
        sources=[SourceOut(**s) for s in out.get("sources", [])],
        redaction_notice=out.get("redaction_notice"),
        fallback_notice=out.get("fallback_notice"),
        user_os=out.get("user_os"),
        trace_id=turn.trace_id,
    )
