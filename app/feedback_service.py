"""A vote on an answer, from any edge (POST /feedback, a chat platform's Helpful / Not helpful button): checked
against the conversation's owner, its reason redacted, stored, and recorded as a score on the answer's trace."""

from __future__ import annotations

import logging

from app.adapters.feedback import VoteResult
from app.schemas import clean_message
from core.errors import UnknownMessage

log = logging.getLogger(__name__)


class FeedbackUnavailable(RuntimeError):
    """This instance keeps no votes (→ 503)."""


def record_vote(
    resources, *, user_id: str, message_id: str, session_id: str, rating: str, reason: str | None = None
) -> VoteResult:
    """Store one vote (a second vote on the same message replaces the first). UnknownMessage when the message is
    not one of `user_id`'s own answers; FeedbackUnavailable when feedback is off."""
    if resources.chat.owner(session_id) != user_id:  # only on answers given to you
        raise UnknownMessage(
            f"No assistant message '{message_id}' in session '{session_id}'. "
            "Use the message_id and session_id of a /chat response."
        )
    if resources.feedback is None:
        raise FeedbackUnavailable("Feedback is not available on this deskmate instance.")
    cleaned = clean_message(reason or "")
    redacted = resources.redactor_for("ticket").redact(cleaned).text if cleaned else None
    result = resources.feedback.vote(message_id, session_id, rating, redacted)
    log.info("feedback %s on message %s (%d chunks)", result.rating, result.message_id, result.chunks)
    if resources.outcomes is not None:  # the turn's outcome record: Helpful / Not helpful for insights
        resources.outcomes.record_vote(result.message_id, result.rating)
    score = getattr(resources.tracer, "record_feedback", None)  # message id = trace id: a score on the trace
    if score is not None:
        score(result.message_id, result.rating, redacted)
    return result
