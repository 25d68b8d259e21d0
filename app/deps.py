"""FastAPI dependencies: the resources built by the lifespan."""

from __future__ import annotations

from fastapi import HTTPException, Request

from app.resources import Resources


def get_resources(request: Request) -> Resources:
    resources = getattr(request.app.state, "resources", None)
    if resources is None:
        raise HTTPException(status_code=503, detail="deskmate is still starting up; try again in a few seconds.")
    return resources
