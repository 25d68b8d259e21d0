"""Domain exceptions → HTTP answers, in one place. Every error body is {"detail": "<what to do>"}."""

from __future__ import annotations

import logging

from fastapi import FastAPI, Request
from fastapi.exception_handlers import http_exception_handler
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException

from app.body_limit import TOO_LARGE
from app.chat_service import SessionNotFound
from app.openai_errors import openai_error_body
from app.storage import DatabaseUnavailable, SessionBusy, TurnsBusy
from core.errors import (
    DocumentRejected,
    EmbeddingError,
    IndexUnavailable,
    InvalidDirective,
    InvalidFilter,
    InvalidRequest,
    TicketStoreError,
    UnknownMessage,
)

log = logging.getLogger(__name__)

_REJECTION_STATUS = {"unsupported_type": 415, "too_large": 413, "unparseable": 422, "empty": 422, "busy": 503}
# FastAPI answers a body it cannot decode with a bare 400 "There was an error parsing the body"; say why instead
_UNDECODABLE_BODY = {
    UnicodeDecodeError: "The request body is not valid UTF-8. Send JSON encoded as UTF-8 "
    "(Content-Type: application/json; charset=utf-8).",
    RecursionError: "The request body is nested too deeply to read. Send a flat JSON object.",
    ValueError: "The request body holds a number too long to read (more than 4,300 digits). Send ordinary numbers.",
}


_LOCATIONS = ("body", "query", "path", "header", "cookie")


def _describe(error: dict) -> str:
    loc = tuple(error.get("loc", ()))
    # the first element says where the field was sent; a field may itself be named `query` (POST /search)
    where = ".".join(str(p) for p in (loc[1:] if loc and loc[0] in _LOCATIONS else loc))
    message = error.get("msg", "invalid value")
    if error.get("type") == "json_invalid":
        return "The request body is not valid JSON."
    if loc == ("body",) and error.get("type") in ("model_attributes_type", "dict_type", "model_type"):
        # form data, plain text, a JSON list: what arrived is not the object the endpoint reads
        return "The request body must be a JSON object sent with Content-Type: application/json."
    if error.get("type") == "missing" and loc == ("body",):
        return "The request body is empty: send a JSON object with Content-Type: application/json."
    if error.get("type") == "missing":
        return f"'{where}' is required."
    return f"'{where}': {message}" if where else message


def error_response(request: Request, status: int, detail: str, headers: dict | None = None) -> JSONResponse:
    """`{"detail": …}`, or OpenAI's `{"error": {…}}` under `/v1/` (what its clients read)."""
    openai = request.url.path.startswith("/v1/")
    content = {"error": openai_error_body(status, detail)} if openai else {"detail": detail}
    return JSONResponse(status_code=status, content=content, headers=headers)


def register_error_handlers(app: FastAPI, *, postgres: bool = True) -> None:
    """Every handler; `postgres=False` (an embedded SQLite database) leaves out psycopg's own outages, which
    cannot happen there, and so its import (a tenth of a second at every start)."""

    @app.exception_handler(RequestValidationError)
    async def _validation(request: Request, exc: RequestValidationError) -> JSONResponse:
        errors = exc.errors()
        detail = " ".join(_describe(e) for e in errors[:5])
        return error_response(request, 422, detail)

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> Response:
        detail = _UNDECODABLE_BODY.get(type(exc.__cause__)) if exc.status_code == 400 else None
        if exc.status_code == 413 and exc.detail == TOO_LARGE:  # a body counted past the limit (app.body_limit)
            limit = request.app.state.settings.ingestion.max_upload_bytes
            # `Connection: close`: the server stops reading the rest of the body instead of draining it
            return error_response(
                request,
                413,
                f"The request is larger than the {limit:,}-byte upload limit; split "
                "the document or compress its images and try again.",
                headers={"Connection": "close"},
            )
        if detail:
            return error_response(request, 422, detail)
        if request.url.path.startswith("/v1/") and isinstance(exc.detail, str):
            return error_response(request, exc.status_code, exc.detail, headers=getattr(exc, "headers", None))
        return await http_exception_handler(request, exc)

    @app.exception_handler(InvalidFilter)
    async def _invalid_filter(request: Request, exc: InvalidFilter) -> JSONResponse:
        return error_response(request, 422, str(exc))

    @app.exception_handler(InvalidRequest)
    async def _invalid_request(request: Request, exc: InvalidRequest) -> JSONResponse:
        return error_response(request, 422, str(exc))

    @app.exception_handler(InvalidDirective)
    async def _invalid_directive(request: Request, exc: InvalidDirective) -> JSONResponse:
        return error_response(request, 422, str(exc))

    @app.exception_handler(SessionNotFound)
    async def _not_your_session(request: Request, exc: SessionNotFound) -> JSONResponse:
        return error_response(
            request, 404, f"No conversation '{exc}' belongs to you. Leave out session_id to start a new one."
        )

    @app.exception_handler(UnknownMessage)
    async def _unknown_message(request: Request, exc: UnknownMessage) -> JSONResponse:
        return error_response(request, 404, str(exc))

    @app.exception_handler(DocumentRejected)
    async def _rejected(request: Request, exc: DocumentRejected) -> JSONResponse:
        return error_response(request, _REJECTION_STATUS.get(exc.kind, 422), exc.reason)

    @app.exception_handler(IndexUnavailable)
    async def _index_down(request: Request, exc: IndexUnavailable) -> JSONResponse:
        log.error("index unavailable: %s", exc)
        return error_response(
            request, 503, "The knowledge base is unreachable right now; please try again in a minute."
        )

    @app.exception_handler(EmbeddingError)
    async def _embedding(request: Request, exc: EmbeddingError) -> JSONResponse:
        log.error("embedding failed: %s", exc)
        return error_response(request, 503, "The language model for search failed; please try again.")

    @app.exception_handler(SessionBusy)
    async def _session_busy(request: Request, exc: SessionBusy) -> JSONResponse:
        return error_response(
            request,
            409,
            "Another message of this conversation is still being answered. Wait "
            "for its reply, then send this one again.",
        )

    @app.exception_handler(TurnsBusy)
    async def _turns_busy(request: Request, exc: TurnsBusy) -> JSONResponse:
        log.warning("every session-lock slot stayed taken past the wait")
        return error_response(
            request,
            503,
            "deskmate is answering as many messages as it can right now; please send yours again in a few seconds.",
            headers={"Retry-After": "5"},
        )

    @app.exception_handler(DatabaseUnavailable)
    async def _database_down(request: Request, exc: Exception) -> JSONResponse:  # and the outages below
        log.error("database unavailable: %s", exc)
        return error_response(
            request, 503, "deskmate's database is unreachable right now; please try again in a minute."
        )

    # The LangGraph Postgres saver talks to psycopg directly (its own pool, not Database.connect): a server
    # restarting under a turn surfaces as psycopg's OperationalError ("server closed the connection"), a server
    # still down as the pool's timeout. Both are the same outage as DatabaseUnavailable, answered the same way.
    if postgres:
        from psycopg import OperationalError as PostgresConnectionError
        from psycopg_pool import PoolTimeout

        for outage in (PostgresConnectionError, PoolTimeout):
            app.add_exception_handler(outage, _database_down)

    @app.exception_handler(TicketStoreError)
    async def _ticket_store(request: Request, exc: TicketStoreError) -> JSONResponse:
        log.error("ticket store failed: %s", exc)
        return error_response(request, 503, "The ticket store cannot be read right now; please try again in a minute.")
