"""GET /admin/insights (JSON) and GET /admin/insights.csv: what deskmate resolved, what it escalated and what
the knowledge base is missing, over a window of days. Admins only, like the other admin pages."""

from __future__ import annotations

from datetime import date

from fastapi import APIRouter, Depends, HTTPException, Query
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import Response

from app.deps import get_resources, require_admin
from app.insights.figures import MAX_WINDOW_DAYS, Window
from app.insights.service import as_csv, insights
from app.resources import Resources

router = APIRouter(tags=["insights"], dependencies=[Depends(require_admin)])
OUTCOMES_WAIT_S = 2.0  # at most this long for the outcome writer to write the turns waiting in its queue


def window_of(
    start: date | None = Query(
        None, alias="from", description="First day (UTC, YYYY-MM-DD); default: 29 days before `to`."
    ),
    end: date | None = Query(None, alias="to", description="Last day, included (UTC, YYYY-MM-DD); default: today."),
    collection: str | None = Query(
        None, max_length=128, description="Only the turns asked of this knowledge collection."
    ),
    resources: Resources = Depends(get_resources),
) -> Window:
    if collection is not None and resources.indexer_for(collection) is None:
        known = ", ".join(resources.indexers) or "kb"
        raise HTTPException(status_code=422, detail=f"Unknown collection {collection!r}. Configured: {known}.")
    try:
        return Window.of(start, end, collection)
    except ValueError as exc:
        raise HTTPException(
            status_code=422, detail=f"{exc}. Give 'from' and 'to' as YYYY-MM-DD, at most {MAX_WINDOW_DAYS} days apart."
        ) from None


async def _figures(resources: Resources, window: Window) -> dict:
    database = resources.database
    if database is None:
        raise HTTPException(status_code=503, detail="Insights need the relational store, which is not open.")
    indexer = resources.indexer_for(window.collection)

    def count() -> dict:
        if resources.outcome_writer is not None:  # the turns answered here so far are counted, not just most
            resources.outcome_writer.flush(OUTCOMES_WAIT_S)
        documents = [dict(d) for d in indexer.index.list_documents()] if indexer is not None else None
        return insights(database, resources.embedder, window, documents)

    # the document list, the SQL and the clustering (embedding unseen questions) run off the event loop
    return await run_in_threadpool(count)


@router.get("/admin/insights")
async def get_insights(window: Window = Depends(window_of), resources: Resources = Depends(get_resources)) -> dict:
    """Volume per day and hour by channel; deflection; tickets by category and priority; knowledge gaps
    clustered by meaning (each with a Markdown draft of the missing article); articles most cited, voted,
    ending in tickets and never cited."""
    return await _figures(resources, window)


@router.get("/admin/insights.csv", response_class=Response)
async def get_insights_csv(window: Window = Depends(window_of), resources: Resources = Depends(get_resources)):
    """The same figures as CSV (figure, key, detail, value), for a spreadsheet."""
    body = as_csv(await _figures(resources, window))
    name = f"deskmate-insights-{window.first}-{window.last}.csv"
    return Response(
        body, media_type="text/csv; charset=utf-8", headers={"Content-Disposition": f'attachment; filename="{name}"'}
    )
