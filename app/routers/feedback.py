"""POST /feedback and GET /feedback/stats: votes on answers, which (when enabled) adjust retrieval."""

from __future__ import annotations

import logging

from fastapi import APIRouter, Depends, HTTPException, Response

from app.deps import current_caller, get_resources, require_admin
from app.feedback_service import FeedbackUnavailable, record_vote
from app.identity import Caller
from app.resources import Resources
from app.schemas import FeedbackRequest, FeedbackResponse

log = logging.getLogger(__name__)
router = APIRouter(tags=["feedback"])


def _store(resources: Resources):
    if resources.feedback is None:
        raise HTTPException(status_code=503, detail="Feedback is not available on this deskmate instance.")
    return resources.feedback


@router.post("/feedback", response_model=FeedbackResponse, status_code=201)
def give_feedback(
    request: FeedbackRequest,
    response: Response,
    caller: Caller = Depends(current_caller),
    resources: Resources = Depends(get_resources),
) -> FeedbackResponse:
    """Vote on an answer: `up` or `down`, optionally with a reason (redacted before it is stored).
    One vote per message: voting again replaces the earlier vote (200 instead of 201)."""
    try:
        result = record_vote(
            resources,
            user_id=caller.user_id,
            message_id=request.message_id,
            session_id=request.session_id,
            rating=request.rating,
            reason=request.reason,
        )
    except FeedbackUnavailable as exc:
        raise HTTPException(status_code=503, detail=str(exc)) from exc
    if result.status == "updated":
        response.status_code = 200
    return FeedbackResponse(
        status=result.status, message_id=result.message_id, rating=result.rating, chunks=result.chunks
    )


@router.get("/feedback/stats", dependencies=[Depends(require_admin)])
def feedback_stats(resources: Resources = Depends(get_resources)) -> dict:
    """Vote totals, the chunks whose scores votes currently raise or lower, and recent reasons."""
    return {"adjustment_enabled": resources.settings.feedback.feedback_adjustment, **_store(resources).stats()}
