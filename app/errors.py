"""Domain exceptions → HTTP answers, in one place. Every error body is {"detail": "<what to do>"}."""

from __future__ import annotations

import logging

from fastapi import FastAPI, Request
from fastapi.exception_handlers import http_exception_handler
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from app.body_limit import TOO_LARGE
from app.chat_service import SessionNotFound
from graphs.errors import DocumentRejected, EmbeddingError, IndexUnavailable, TicketStoreError
from graphs.errors import InvalidFilter, UnknownMessage
from graphs.errors import InvalidDirective

log = logging.getLogger(__name__)

_REJECTION_STATUS = {"unsupported_type": 415, "too_large": 413, "unparseable": 422, "empty": 422, "busy": 503}
# FastAPI answers a body it cannot decode with a bare 400 "There was an error parsing the body"; say why instead
_UNDECODABLE_BODY = {
    UnicodeDecodeError: "The request body is not valid UTF-8. Send JSON encoded as UTF-8 "
                        "(Content-Type: application/json; charset=utf-8).",
    RecursionError: "The request body is nested too deeply to read. Send a flat JSON object.",
}


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

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        detail = _UNDECODABLE_BODY.get(type(exc.__cause__)) if exc.status_code == 400 else None
        if exc.status_code == 413 and exc.detail == TOO_LARGE:  # a body counted past the limit (app.body_limit)
            limit = request.app.state.settings.max_upload_bytes
            return JSONResponse(status_code=413, content={
                "detail": f"The request is larger than the {limit:,}-byte upload limit; split the document or "
                          "compress its images and try again."})
        if detail:
            return JSONResponse(status_code=422, content={"detail": detail})
        return await http_exception_handler(request, exc)

    @app.exception_handler(InvalidFilter)
    async def _invalid_filter(_: Request, exc: InvalidFilter) -> JSONResponse:
        return JSONResponse(status_code=422, content={"detail": str(exc)})

    @app.exception_handler(InvalidDirective)
    async def _invalid_directive(_: Request, exc: InvalidDirective) -> JSONResponse:
        return JSONResponse(status_code=422, content={"detail": str(exc)})

    @app.exception_handler(SessionNotFound)
    async def _not_your_session(_: Request, exc: SessionNotFound) -> JSONResponse:
        return JSONResponse(status_code=404, content={"detail": f"No conversation '{exc}' belongs to you. Leave out "
                                                                "session_id to start a new one."})

    @app.exception_handler(UnknownMessage)
    async def _unknown_message(_: Request, exc: UnknownMessage) -> JSONResponse:
        return JSONResponse(status_code=404, content={"detail": str(exc)})

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

    @app.exception_handler(TicketStoreError)
    async def _ticket_store(_: Request, exc: TicketStoreError) -> JSONResponse:
        log.error("ticket store failed: %s", exc)
        return JSONResponse(status_code=503, content={"detail": "The ticket store cannot be read right now; "
                                                                 "please try again in a minute."})
