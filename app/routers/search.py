"""POST/GET /search: what retrieval returns for a query — for admins checking documents and filters.

The query is redacted first, as the redact node does for a chat turn; the reply echoes the redacted text.

Admins search every document, restricted ones included (each hit says its audience)."""

from __future__ import annotations

import json
import time

from fastapi import APIRouter, Depends, HTTPException, Query

from app.deps import get_resources, require_admin
from app.resources import Resources
from app.schemas import SearchHit, SearchRequest, SearchResponse, clean_message
from graphs.filters import parse_filter
from nodes.retrieval import search_chunks

router = APIRouter(tags=["search"], dependencies=[Depends(require_admin)])


def run_search(resources: Resources, request: SearchRequest) -> SearchResponse:
    query = clean_message(request.query)
    if not query:
        raise HTTPException(status_code=422, detail="'query' is empty; type what to search for.")
    # searched and echoed as a chat turn would see it: a password typed here never comes back in the reply
    query = resources.redactor.redact(query).text
    context = resources.retrieval_context
    started = time.perf_counter()
    hits = search_chunks(context, query, resources.embedder.embed_query(query), k=request.top_k, groups=None,
                         search_filter=parse_filter(request.filters), user_os=request.user_os)
    took = (time.perf_counter() - started) * 1000
    return SearchResponse(query=query, filters=request.filters, took_ms=round(took, 1), results=[
        SearchHit(rank=n, confident=hit["score"] >= context.min_score,
                  **{k: hit.get(k) for k in SearchHit.model_fields if k not in ("rank", "confident")})
        for n, hit in enumerate(hits, start=1)])


@router.post("/search", response_model=SearchResponse)
def search(request: SearchRequest, resources: Resources = Depends(get_resources)) -> SearchResponse:
    """Search the knowledge base exactly as a chat turn does, and see every score."""
    return run_search(resources, request)


@router.get("/search", response_model=SearchResponse)
def search_get(q: str = Query(..., min_length=1, max_length=4000, description="What to search for."),
               filters: str | None = Query(None, description='JSON object, e.g. {"context_type":["how-to"]}'),
               top_k: int = Query(10, ge=1, le=50), user_os: str | None = Query(None),
               resources: Resources = Depends(get_resources)) -> SearchResponse:
    """The same as POST /search, for a browser or curl: `filters` is a JSON object in the query string."""
    try:
        parsed = json.loads(filters) if filters else None
    except json.JSONDecodeError:
        raise HTTPException(status_code=422, detail="'filters' must be a JSON object, "
                                                    'e.g. {"context_type": ["how-to"]}.') from None
    try:
        request = SearchRequest(query=q, filters=parsed, top_k=top_k, user_os=user_os)
    except ValueError as exc:  # pydantic's ValidationError: unknown filter field, bad OS …
        errors = getattr(exc, "errors", lambda: [])()
        detail = " ".join(str(e.get("msg", "")).removeprefix("Value error, ") for e in errors) or str(exc)
        raise HTTPException(status_code=422, detail=detail) from None
    return run_search(resources, request)
