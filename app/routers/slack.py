"""POST /slack/events: Slack's Events API and interactivity (button presses), handed to the Bolt app."""

from __future__ import annotations

from fastapi import APIRouter, HTTPException, Request, Response
from fastapi.concurrency import run_in_threadpool

router = APIRouter(tags=["chat platforms"])


@router.post("/slack/events", include_in_schema=True, summary="Slack events and button presses")
async def slack_events(request: Request) -> Response:
    """Signed by Slack (forged, unsigned or stale: 401). Acknowledged at once; the answer follows in the thread."""
    slack = getattr(request.app.state, "slack", None)
    if slack is None:
        raise HTTPException(
            status_code=404,
            detail="Slack is not set up on this deskmate: set DESKMATE_SLACK_BOT_TOKEN and DESKMATE_SLACK_SIGNING_SECRET.",
        )
    body = (await request.body()).decode("utf-8", errors="replace")
    status, text, headers = await run_in_threadpool(slack.dispatch, body, dict(request.headers))
    return Response(content=text, status_code=status, headers=headers)
