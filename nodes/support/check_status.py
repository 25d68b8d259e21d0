"""check_status: look at the company status page (cached) and keep the incidents that concern this message.

Runs at most once per turn; the decision agent then sees the incidents and decides how to answer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from langgraph.runtime import Runtime

from core.lexicon import asks_status
from core.status import format_status, relevant_incidents

if TYPE_CHECKING:
    from graphs.support import SupportContext, SupportState

NOT_CONFIGURED = "There's no status page configured for me to check, so I can't tell whether there is an outage."


def check_status(state: SupportState, runtime: Runtime[SupportContext]) -> dict:
    checker = runtime.context.status
    if checker is None:
        return {
            "turn": {
                "status_checked": True,
                "status_ok": False,
                "incidents": [],
                "status_summary": NOT_CONFIGURED if asks_status(state["turn"]["query"]) else "",
            }
        }
    report = checker.current()
    query = state["turn"]["query"]
    incidents = relevant_incidents(report, query, state["turn"].get("keywords", [])) if report["ok"] else []
    return {
        "turn": {
            "status_checked": True,
            "status_ok": report["ok"],
            "incidents": incidents,
            "status_summary": format_status(report, incidents if not asks_status(query) else None),
        }
    }
