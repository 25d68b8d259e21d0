"""POST/GET /search: what retrieval returns for a query — for admins checking documents and filters.

The query is redacted first, as the redact node does for a chat turn; the reply echoes the redacted text.

Admins search every document, restricted ones included (each hit says its audience)."""

from __future__ import annotations

import json

from fastapi import APIRouter, Depends, HTTPException, Query

from app.deps import get_resources, require_admin
from app.resources import Resources
from app.schemas import SearchRequest, SearchResponse
from app.search_service import run_search

router = APIRouter(tags=["search"], dependencies=[Depends(require_admin)])


@router.post("/search", response_model=SearchResponse)
def search(request: SearchRequest, resources: Resources = Depends(get_resources)) -> SearchResponse:
    """Search the knowledge base exactly as a chat turn does, and see every score."""
    return run_search(resources, request)


@router.get("/search", response_model=SearchResponse)
def search_get(
    q: str = Query(..., min_length=1, max_length=4000, description="What to search for."),
    filters: str | None = Query(None, description='JSON object, e.g. {"context_type":["how-to"]}'),
    top_k: int = Query(10, ge=1, le=50),
    user_os: str | None = Query(None),
    resources: Resources = Depends(get_resources),
) -> SearchResponse:
    """The same as POST /search, for a browser or curl: `filters` is a JSON object in the query string."""
    try:
        parsed = json.loads(filters) if filters else None
    except json.JSONDecodeError:
        raise HTTPException(
            status_code=422, detail='\'filters\' must be a JSON object, e.g. {"context_type": ["how-to"]}.'
        ) from None
    try:
        request = SearchRequest(query=q, filters=parsed, top_k=top_k, user_os=user_os)
    except ValueError as exc:  # pydantic's ValidationError: unknown filter field, bad OS …
        errors: list[dict] = getattr(exc, "errors", lambda: [])()
        detail = " ".join(str(e.get("msg", "")).removeprefix("Value error, ") for e in errors) or str(exc)
        raise HTTPException(status_code=422, detail=detail) from None
    return run_search(resources, request)
