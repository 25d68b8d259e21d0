"""Domain exceptions → HTTP answers, in one place. Every error body is {"detail": "<what to do>"}."""

from __future__ import annotations

import logging

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

from graphs.errors import DocumentRejected, EmbeddingError, IndexUnavailable

log = logging.getLogger(__name__)

_REJECTION_STATUS = {"unsupported_type": 415, "too_large": 413, "unparseable": 422, "empty": 422}


def _describe(error: dict) -> str:
    where = ".".join(str(p) for p in error.get("loc", ()) if p not in ("body", "query", "path"))
    message = error.get("msg", "invalid value")
    if error.get("type") == "json_invalid":
        return "The request body is not valid JSON."
    if error.get("type") == "missing":
        return f"'{where}' is required."
    return f"'{where}': {message}" if where else message


def register_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(RequestValidationError)
    async def _validation(_: Request, exc: RequestValidationError) -> JSONResponse:
        errors = exc.errors()
        detail = " ".join(_describe(e) for e in errors[:5])
        return JSONResponse(status_code=422, content={"detail": detail})

    @app.exception_handler(DocumentRejected)
    async def _rejected(_: Request, exc: DocumentRejected) -> JSONResponse:
        return JSONResponse(status_code=_REJECTION_STATUS.get(exc.kind, 422), content={"detail": exc.reason})

    @app.exception_handler(IndexUnavailable)
    async def _index_down(_: Request, exc: IndexUnavailable) -> JSONResponse:
        log.error("index unavailable: %s", exc)
        return JSONResponse(status_code=503, content={"detail": "The knowledge base is unreachable right now; "
                                                                 "please try again in a minute."})

    @app.exception_handler(EmbeddingError)
    async def _embedding(_: Request, exc: EmbeddingError) -> JSONResponse:
        log.error("embedding failed: %s", exc)
        return JSONResponse(status_code=503, content={"detail": "The language model for search failed; "
                                                                 "please try again."})
