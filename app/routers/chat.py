"""POST /chat: one turn of a conversation."""

from __future__ import annotations

from dataclasses import dataclass

from fastapi import APIRouter, Depends, HTTPException, Path

from app.deps import current_caller, get_resources, reader
from app.identity import Caller
from app.routers.feedback import remember_answer
from app.resources import Resources
from nodes.directives import directives_to_filters, parse_directives
from app.schemas import validated_filters
from app.schemas import (ChatRequest, ChatResponse, IncidentOut, SourceOut, StageTimingsOut, TicketOfferOut,
                         TicketRefOut, TroubleshootingOut, clean_message)

router = APIRouter(tags=["chat"])


@router.post("/chat", response_model=ChatResponse)
def chat(request: ChatRequest, caller: Caller = Depends(current_caller),
         resources: Resources = Depends(get_resources)) -> ChatResponse:
    # a plain `def`: the graph embeds on the CPU, so it runs in the threadpool, not on the event loop
    message = clean_message(request.message)
    if not message:
        raise HTTPException(status_code=422, detail="'message' is empty; type a question or describe the problem.")
    limit = resources.settings.max_message_chars
    if len(message) > limit:
        raise HTTPException(status_code=422, detail=f"'message' is {len(message):,} characters long; the limit "
                                                    f"is {limit:,}. Shorten it (the error message or log lines that matter are enough).")
    steering = steering_of(request.system, request.response_mode, request.filters)
    turn = resources.chat.ask(message, session_id=request.session_id, user_os=request.user_os,
                              user_id=caller.user_id, groups=caller.groups, search_filters=steering.filters,
                              collections=checked_collections(request, resources),
                              response_mode=steering.response_mode, directives=steering.directives)
    remember_answer(resources, turn)  # for POST /feedback: which chunks this message cited
    return envelope(turn, debug=request.debug, warnings=steering.warnings)


@dataclass(frozen=True)
class Steering:
    """How a turn should be answered, from the request and its system message (directives)."""

    response_mode: str | None = None
    filters: dict | None = None
    directives: dict | None = None
    warnings: tuple[str, ...] = ()


def steering_of(system: str | None, response_mode: str | None, filters: dict | None) -> Steering:
    """System-message directives (InvalidDirective → 422 for a bad RESPONSE_MODE; bad optional ones → warnings);
    the request's own response_mode and filters win over the directives'."""
    if not system or not system.strip():
        return Steering(response_mode=response_mode, filters=filters)
    parsed = parse_directives(system)
    given = parsed.directives.given
    mode = response_mode or (parsed.directives.response_mode.value if "response_mode" in given else None)
    from_directives = directives_to_filters(parsed.directives)
    if filters is None and from_directives:
        filters = validated_filters(from_directives)
    directives = {"persona": parsed.persona}
    if "min_confidence" in given:
        directives["min_confidence"] = parsed.directives.min_confidence
    if "fallback_strategy" in given:
        directives["fallback_strategy"] = parsed.directives.fallback_strategy
    return Steering(response_mode=mode, filters=filters, directives=directives, warnings=tuple(parsed.warnings))


def checked_collections(request: ChatRequest, resources: Resources) -> list[str] | None:
    """The request's collections, each one the policy knows (422 otherwise)."""
    if not request.collections:
        return None
    known = [c.name for c in resources.policy.collections] if resources.policy else ["kb"]
    unknown = [name for name in request.collections if name not in known]
    if unknown:
        raise HTTPException(status_code=422, detail=f"Unknown collection(s): {', '.join(unknown)}. "
                                                    f"Configured: {', '.join(known)}.")
    return list(dict.fromkeys(request.collections))


@router.get("/sessions/{session_id}")
def get_session(session_id: str = Path(..., pattern=r"^[A-Za-z0-9._:\-]{1,128}$", description="From /chat."),
                caller: Caller | None = Depends(reader), resources: Resources = Depends(get_resources)) -> dict:
    """A conversation's remembered messages (redacted), oldest first — yours only (admins: any)."""
    owner = resources.chat.owner(session_id)
    if owner is not None and caller is not None and owner != caller.user_id:
        owner = None  # someone else's conversation: as if it did not exist
    if owner is None:
        raise HTTPException(status_code=404, detail=f"No conversation '{session_id}' belongs to you. POST /chat "
                                                    "without a session_id starts one.")
    return {"session_id": session_id, "messages": resources.chat.history(session_id)}


def envelope(turn, *, debug: bool = False, warnings: tuple[str, ...] = ()) -> ChatResponse:
    """The graph's output as the API's response: what the UI needs to render this turn."""
    out = turn.output
    flow = out.get("troubleshooting")
    offer = out.get("ticket_offer")
    return ChatResponse(
        answer=out.get("answer", ""),
        session_id=turn.session_id,
        action=out.get("action", "answer"),
        needs_input=bool(out.get("needs_input")),
        is_clarifying=bool(out.get("is_clarifying")),
        sources=[SourceOut(**s) for s in out.get("sources", [])],
        redaction_notice=out.get("redaction_notice"),
        fallback_notice=out.get("fallback_notice"),
        answer_path=out.get("answer_path") or None,
        integration=out.get("integration") or None,
        confidence=out.get("confidence"),
        question_type=out.get("question_type") or None,
        user_os=out.get("user_os"),
        troubleshooting=TroubleshootingOut(
            issue=flow["issue"], step=min(flow["current"] + 1, len(flow["steps"])), total=len(flow["steps"]),
            status=flow["status"], steps=flow["steps"]) if flow else None,
        ticket=TicketRefOut(**out["ticket"]) if out.get("ticket") else None,
        ticket_event=out.get("ticket_event", ""),
        ticket_offer=TicketOfferOut(summary=offer["summary"], priority=offer["priority"],
                                    description=offer["description"], steps_tried=len(offer["steps_tried"]))
        if offer else None,
        incidents=[IncidentOut(**{k: i[k] for k in IncidentOut.model_fields}) for i in out.get("incidents", [])],
        trace_id=turn.trace_id,
        message_id=turn.trace_id,
        timings=StageTimingsOut(**turn.timings) if getattr(turn, "timings", None) else None,
        answer_policy=out.get("answer_policy") if debug else None,
        mode_notice=out.get("mode_notice"),
        directive_warnings=list(warnings),
    )


def checked_message(request: ChatRequest, resources: Resources) -> str:
    """The request's message, cleaned; 422 when it is empty or too long (POST /chat/stream uses it)."""
    message = clean_message(request.message)
    if not message:
        raise HTTPException(status_code=422, detail="'message' is empty; type a question or describe the problem.")
    limit = resources.settings.max_message_chars
    if len(message) > limit:
        raise HTTPException(status_code=422, detail=f"'message' is {len(message):,} characters long; the limit "
                                                    f"is {limit:,}. Shorten it (the error message or log lines that matter are enough).")
    return message
