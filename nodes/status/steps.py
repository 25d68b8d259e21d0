"""Status-page steps: fetch → parse → summarise (an unreachable page: fetch → unavailable → summarise)."""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from langgraph.runtime import Runtime

from core.errors import StatusUnavailable
from core.status import format_status, parse_summary, unavailable_report

if TYPE_CHECKING:
    from graphs.status import StatusContext, StatusState

log = logging.getLogger(__name__)


def fetch(state: StatusState, runtime: Runtime[StatusContext]) -> dict:
    """Fetch the raw summary; an unreachable page becomes `fetch_error`, never an exception."""
    checked_at = datetime.now(UTC).isoformat(timespec="seconds")
    try:
        summary = runtime.context.source.fetch_summary()
    except StatusUnavailable as exc:
        log.warning("status page %s unavailable: %s", state["page_url"], exc.reason)
        return {"checked_at": checked_at, "fetch_error": exc.reason}
    return {"checked_at": checked_at, "summary": summary}


def parse(state: StatusState) -> dict:
    return {"report": parse_summary(state["summary"], page_url=state["page_url"], checked_at=state["checked_at"])}


def unavailable(state: StatusState) -> dict:
    return {"report": unavailable_report(state["page_url"], state["fetch_error"], state.get("checked_at", ""))}


def summarise(state: StatusState) -> dict:
    return {"summary_text": format_status(state["report"])}
