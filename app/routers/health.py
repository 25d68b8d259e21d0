"""GET /health (the process is alive) and GET /ready (model loaded, index reachable)."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from graphs.errors import IndexUnavailable

router = APIRouter(tags=["health"])


@router.get("/health")
def health() -> dict:
    return {"status": "ok"}


@router.get("/ready")
def ready(request: Request):
    resources = getattr(request.app.state, "resources", None)
    if resources is None:
        return JSONResponse(status_code=503, content={"status": "starting", "detail": "models are loading"})
    try:
        chunks = resources.index.count()
        documents = len(resources.index.list_documents())
    except IndexUnavailable as exc:
        return JSONResponse(status_code=503, content={"status": "unavailable", "detail": str(exc)})
    return {"status": "ready", "documents": documents, "chunks": chunks,
            "embedding_dimension": resources.embedder.dimension,
            "llm": resources.llm.name if resources.llm else "none",
            "tracing": "langfuse" if resources.tracer.enabled else "off",
            # what the answer policy loaded (names only: never addresses or keys)
            "config": resources.policy.source, "collections": [c.name for c in resources.policy.collections],
            "integrations": [i.name for i in resources.policy.integrations]}
