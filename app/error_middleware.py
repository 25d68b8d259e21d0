"""Every request gets an id, and an exception no handler answered still answers in the API's one error shape.

Starlette's last-resort handler answers a plain-text "Internal Server Error" and lets the server log the
trace a second time. This middleware sits inside it: it catches what escaped every handler, logs the stack
once (through the redacting log records of app.logging_setup), and answers `{"detail": …, "request_id": …}`
— OpenAI's `{"error": {…}}` under `/v1/` — with the id also in the `X-Request-ID` header of every response,
so an operator can find the log line a user quotes. A full disk met inside a store (SQLite's "database or
disk is full", ENOSPC) is 507 with what to do, not 500.
"""

from __future__ import annotations

import errno
import logging
import re
import uuid

from starlette.datastructures import MutableHeaders
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.storage.database import is_database_outage

log = logging.getLogger(__name__)

REQUEST_ID_HEADER = "X-Request-ID"
_ACCEPTED_ID = re.compile(r"[A-Za-z0-9._:-]{8,64}")  # a proxy's id is kept when it is plain; anything else is replaced
_DISK_FULL_ERRNOS = {errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)}
_DISK_FULL_WORDS = ("disk is full", "no space left on device", "disk full", "quota exceeded")


def request_id_of(scope: Scope) -> str | None:
    """The id this middleware gave the request (None outside it)."""
    return (scope.get("state") or {}).get("request_id")


def is_disk_full(exc: BaseException) -> bool:
    """True when `exc`, or an exception it was raised from, says the disk (or quota) ran out."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, OSError) and current.errno in _DISK_FULL_ERRNOS:
            return True
        if any(word in str(current).lower() for word in _DISK_FULL_WORDS):
            return True
        current = current.__cause__ or current.__context__
    return False


def _incoming_id(scope: Scope) -> str | None:
    for name, value in scope.get("headers") or ():
        if name == b"x-request-id":
            text = value.decode("latin-1")
            return text if _ACCEPTED_ID.fullmatch(text) else None
    return None


def error_body(path: str, status: int, detail: str, request_id: str) -> dict:
    """`{"detail", "request_id"}`, or OpenAI's error object under /v1/ (its clients read `error.message`)."""
    if path.startswith("/v1/"):
        from app.openai_errors import openai_error_body

        return {"error": openai_error_body(status, detail)}
    return {"detail": detail, "request_id": request_id}


class UnexpectedErrorMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request_id = _incoming_id(scope) or uuid.uuid4().hex
        scope.setdefault("state", {})["request_id"] = request_id
        started = False

        async def send_with_id(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                MutableHeaders(scope=message)[REQUEST_ID_HEADER] = request_id
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        except Exception as exc:  # noqa: BLE001 — the last resort: every handler has had its chance
            path = scope.get("path", "")
            if is_disk_full(exc):
                log.warning(
                    "request %s %s: the disk is full (%s); request id %s",
                    scope.get("method"),
                    path,
                    type(exc).__name__,
                    request_id,
                )
                status = 507
                detail = (
                    "The server's disk is full, so this change could not be saved. Reads keep working; "
                    "an operator must free space on the data directory's disk (see /ready). "
                    f"Request id {request_id}."
                )
            elif is_database_outage(exc):
                # a database outage no handler saw as one (a restart under a pooled connection): the same 503
                log.error("request %s %s: the database is unreachable (%s)", scope.get("method"), path, exc)
                status = 503
                detail = "deskmate's database is unreachable right now; please try again in a minute."
            else:
                # the one place the stack is logged; record text passes the log redactor
                log.error(
                    "request %s %s failed: %s; request id %s",
                    scope.get("method"),
                    path,
                    type(exc).__name__,
                    request_id,
                    exc_info=exc,
                )
                status = 500
                detail = (
                    f"Something went wrong on the server ({type(exc).__name__}). Try again; if it keeps "
                    f"happening, give the operator request id {request_id}."
                )
            if started:
                return  # the reply is under way (a stream): the client sees it end early; the log has why
            response = JSONResponse(
                status_code=status,
                content=error_body(path, status, detail, request_id),
                headers={REQUEST_ID_HEADER: request_id},
            )
            await response(scope, receive, send)
