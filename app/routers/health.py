"""GET /health (the process is alive) and GET /ready (every store answers a real query; disk and sizes)."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from app.readiness import PROBE_TEXT, names_model_state, probe_stores, store_sizes

router = APIRouter(tags=["health"])


@router.get("/health")
def health() -> dict:
    return {"status": "ok"}


def _probe_vector(request: Request, resources) -> list[float]:
    """The embedding /ready queries the vector index with, computed once per process."""
    vector = getattr(request.app.state, "probe_vector", None)
    if vector is None:
        vector = request.app.state.probe_vector = list(resources.embedder.embed_query(PROBE_TEXT))
    return vector


@router.get("/ready")
def ready(request: Request):
    """200 "ready" or "degraded" (serving reads; writes refused, with the reason); 503 when a store fails."""
    resources = getattr(request.app.state, "resources", None)
    if resources is None:
        return JSONResponse(status_code=503, content={"status": "starting", "detail": "models are loading"})
    try:
        vector = _probe_vector(request, resources)
    except Exception as exc:  # the embedding model itself is broken: nothing can be searched
        return JSONResponse(
            status_code=503,
            content={"status": "unavailable", "detail": f"the embedding model did not answer a query: {exc}"},
        )
    stores = probe_stores(resources, vector)
    failing = [name for name, probe in stores.items() if not probe["ok"]]
    disk = resources.disk.state() if resources.disk is not None else None
    report = {
        "stores": stores,
        "sizes": store_sizes(resources.settings),
        # the names model loads after the start: until it is loaded, a text that needs names removed waits for it
        "redaction": {"names_model": names_model_state(resources.redactors)},
    }
    if disk is not None:
        report["disk"] = {"free_bytes": disk.free_bytes, "min_free_bytes": disk.floor_bytes, "ok": disk.ok}
    if failing:
        errors = "; ".join(f"{name}: {stores[name]['error']}" for name in failing)
        return JSONResponse(
            status_code=503,
            content={"status": "unavailable", **report, "detail": f"these stores did not answer a query: {errors}"},
        )
    if disk is not None and not disk.ok:
        report |= {"status": "degraded", "detail": f"writes are refused (507): {disk.reason}"}
    else:
        report["status"] = "ready"
    return {
        **report,
        "documents": len(resources.index.list_documents()),
        "chunks": resources.index.count(),
        "embedding_dimension": resources.embedder.dimension,
        "llm": resources.llm.name if resources.llm else "none",
        "tracing": "langfuse" if resources.tracer.enabled else "off",
        # what the answer policy loaded (names only: never addresses or keys)
        "config": resources.policy.source,
        "collections": [c.name for c in resources.policy.collections],
        "integrations": [i.name for i in resources.policy.integrations],
    }
