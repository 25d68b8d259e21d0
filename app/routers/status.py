"""GET /status: the company status page as deskmate last read it (cached for DESKMATE_STATUS_TTL_S)."""

from __future__ import annotations

from fastapi import APIRouter, Depends

from app.deps import get_resources
from app.resources import Resources
from app.schemas import StatusReportOut

router = APIRouter(tags=["status"])


@router.get(
    "/status",
    response_model=StatusReportOut,
    summary="The parsed company status page",
    description="Indicator, every component's state, open incidents and maintenance. Always 200: when "
    "the page could not be checked, `ok` is false and `error` says why.",
)
def status(resources: Resources = Depends(get_resources)) -> StatusReportOut:
    # a plain `def`: FastAPI runs it in a worker thread, so a slow status page never blocks the event loop
    return StatusReportOut.model_validate(resources.status.current())
