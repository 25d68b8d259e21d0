"""POST /api/messages: the Bot Framework's activities from Microsoft Teams, handed to the Teams channel."""

from __future__ import annotations

from fastapi import APIRouter, HTTPException, Request, Response
from fastapi.concurrency import run_in_threadpool

router = APIRouter(tags=["chat platforms"])


@router.post("/api/messages", include_in_schema=True, summary="Microsoft Teams activities")
async def teams_messages(request: Request) -> Response:
    """Signed by the Bot Framework (forged, expired or for another bot: 401). Acknowledged at once; the answer
    follows in the conversation through the Bot Connector."""
    teams = getattr(request.app.state, "teams", None)
    if teams is None:
        raise HTTPException(
            status_code=404,
            detail="Teams is not set up on this deskmate: set DESKMATE_TEAMS_APP_ID and DESKMATE_TEAMS_APP_PASSWORD.",
        )
    body = await request.body()
    status = await run_in_threadpool(teams.receive, body, request.headers.get("Authorization"))
    return Response(status_code=status)
