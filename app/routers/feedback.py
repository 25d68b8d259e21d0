"""POST /feedback and GET /feedback/stats: votes on answers, which (when enabled) adjust retrieval."""

from __future__ import annotations

import logging
import sqlite3

from fastapi import APIRouter, Depends, HTTPException, Response

from app.adapters.feedback import cited_chunks
from app.deps import current_caller, get_resources, require_admin
from app.identity import Caller
from app.resources import Resources
from app.schemas import FeedbackRequest, FeedbackResponse, clean_message
from graphs.errors import UnknownMessage
from nodes.retrieval import feedback_key

log = logging.getLogger(__name__)
router = APIRouter(tags=["feedback"])


def remember_answer(resources: Resources, turn) -> None:
    """Record which chunks this assistant message cited, so a vote on it can credit them. Every chat
    path calls this after a turn; a failure is logged and never fails the chat."""
    if resources.feedback is None:
        return
    out = turn.output
    try:
        question = out.get("search_query") or out.get("query") or ""  # redacted; follow-ups come enriched
        resources.feedback.record_answer(turn.trace_id, turn.session_id, question, cited_chunks(
            out.get("sources", []), out.get("retrieved_chunks", []), feedback_key))
    except sqlite3.Error as exc:
        log.warning("could not record answer %s for feedback: %s", turn.trace_id, exc)


def _store(resources: Resources):
    if resources.feedback is None:
        raise HTTPException(status_code=503, detail="Feedback is not available on this deskmate instance.")
    return resources.feedback


@router.post("/feedback", response_model=FeedbackResponse, status_code=201)
def give_feedback(request: FeedbackRequest, response: Response, caller: Caller = Depends(current_caller),
                  resources: Resources = Depends(get_resources)) -> FeedbackResponse:
    """Vote on an answer: `up` or `down`, optionally with a reason (redacted before it is stored).
    One vote per message: voting again replaces the earlier vote (200 instead of 201)."""
    if resources.chat.owner(request.session_id) != caller.user_id:  # only on answers given to you
        raise UnknownMessage(f"No assistant message '{request.message_id}' in session '{request.session_id}'. "
                             "Use the message_id and session_id of a /chat response.")
    reason = clean_message(request.reason or "")
    reason = resources.redactor_for("ticket").redact(reason).text if reason else None
    result = _store(resources).vote(request.message_id, request.session_id, request.rating, reason)
    if result.status == "updated":
        response.status_code = 200
    log.info("feedback %s on message %s (%d chunks)", result.rating, result.message_id, result.chunks)
    record_vote = getattr(resources.tracer, "record_feedback", None)  # message id = trace id: a score on the trace
    if record_vote is not None:
        record_vote(result.message_id, result.rating, reason)
    return FeedbackResponse(status=result.status, message_id=result.message_id, rating=result.rating,
                            chunks=result.chunks)


@router.get("/feedback/stats", dependencies=[Depends(require_admin)])
def feedback_stats(resources: Resources = Depends(get_resources)) -> dict:
    """Vote totals, the chunks whose scores votes currently raise or lower, and recent reasons."""
    return {"adjustment_enabled": resources.settings.feedback_adjustment, **_store(resources).stats()}
