"""GET /traces and GET /traces/{trace_id}: the local trace store.

Admins read every run; a signed-in caller reads only their own runs (the trace_id each /chat answer
returns); an anonymous caller who is not an admin reads none.
"""

from __future__ import annotations

from datetime import UTC, datetime

from fastapi import APIRouter, Depends, HTTPException, Path, Query, Request

from app.adapters.traces import TraceStore
from app.deps import current_caller, get_resources, is_admin, require_admin
from app.identity import USER_HEADER
from app.resources import Resources
from app.routers.graphs import graph_shapes
from app.ui.diagram import highlighted_mermaid, node_timings, svg_diagram

router = APIRouter(tags=["traces"])
FLUSH_WAIT_S = 1.0  # a run that just finished may still be on its way to SQLite
PENDING_RUN_WAIT_S = 30.0  # longest wait for a run asked for by id while the writer still has runs queued


def _store(resources: Resources) -> TraceStore:
    if resources.traces is None:
        raise HTTPException(
            status_code=404, detail="Local traces are switched off on this deskmate (DESKMATE_LOCAL_TRACES=false)."
        )
    return resources.traces


def trace_reader(request: Request) -> str | None:
    """Whose runs this request may read: None for an admin (everyone's), else the signed-in caller's id."""
    if is_admin(request):
        return None
    if request.app.state.settings.security.user_token_secret is None:
        require_admin(request)  # sign-in is off: traces are for admins only; raises with the reason
    if request.headers.get("authorization") and not request.headers.get(USER_HEADER):
        require_admin(request)  # an admin key that is wrong: say so, not "sign in first"
    return current_caller(request).user_id


def _epoch(moment: datetime | None) -> float | None:
    if moment is None:
        return None
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp()


@router.get("/traces")
def list_traces(
    session_id: str | None = Query(None, max_length=128, description="Only this conversation's runs."),
    action: str | None = Query(
        None,
        max_length=40,
        description="Only runs that ended in this action (answer, clarify, troubleshoot, create_ticket …).",
    ),
    graph: str | None = Query(None, max_length=40, description="support, indexing or status."),
    since: datetime | None = Query(
        None, description="Runs that started at or after this time (ISO 8601; UTC when no offset is given)."
    ),
    until: datetime | None = Query(None, description="Runs that started before this time."),
    limit: int = Query(50, ge=1, le=500),
    reader: str | None = Depends(trace_reader),
    resources: Resources = Depends(get_resources),
) -> dict:
    """Recent runs, newest first: path, action, status, duration, the redacted message and any vote."""
    store = _store(resources)
    store.flush(FLUSH_WAIT_S)
    runs = store.list(
        session_id=session_id,
        action=action,
        graph=graph,
        since=_epoch(since),
        until=_epoch(until),
        user_id=reader,
        limit=limit,
    )
    return {
        "traces": runs,
        "retention_days": resources.settings.retention.trace_retention_days,
        "dropped": store.dropped,
    }


@router.get("/traces/{trace_id}")
def get_trace(
    trace_id: str = Path(..., pattern=r"^[0-9a-f]{32}$", description="The run's trace_id (as /chat returns it)."),
    reader: str | None = Depends(trace_reader),
    resources: Resources = Depends(get_resources),
) -> dict:
    """One run: every node with start, end and duration, input keys and redacted output, the decisions and
    their reasoning, retrieval candidates with scores, LLM calls with tokens, errors, fallbacks, the
    user's vote, and the graph drawn with this run's path highlighted (SVG and Mermaid)."""
    store = _store(resources)
    store.flush(FLUSH_WAIT_S)
    record = store.get(trace_id)
    if record is None and not store.flush(0):
        # runs are still queued: just after a start the writer waits for the names model that redacts them
        store.flush(PENDING_RUN_WAIT_S)
        record = store.get(trace_id)
    if record is not None and reader is not None and record.get("user_id") != reader:
        record = None  # someone else's run: as if it did not exist
    if record is None:
        raise HTTPException(
            status_code=404,
            detail=f"No trace {trace_id}: it never existed, or it is older than "
            f"the retention ({resources.settings.retention.trace_retention_days:g} "
            "days).",
        )
    shape = graph_shapes(resources).get(record["graph"])
    if shape is not None:
        timings = node_timings(record["nodes"])
        record["diagram"] = {
            "svg": svg_diagram(shape, record["path"], timings),
            "mermaid": highlighted_mermaid(shape, record["path"], timings),
        }
    return record
