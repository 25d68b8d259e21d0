"""A request-body limit that answers like every other error: `{"detail": …}` (OpenAI's shape under `/v1/`), 413.

Two checks: a declared `Content-Length` over the limit is refused before a byte is read (so the multipart
parser never spools a huge upload to disk), and a body without one (chunked) is counted as it arrives and
stopped at the limit — the count raises Starlette's 413 `HTTPException`, which FastAPI passes through body
parsing untouched and `app.errors` words. (FastAPI's own `max_body_size` sits outside every handler and
replaces any response to an over-long declared body with a plain-text "Content Too Large".)
"""

from __future__ import annotations

from starlette.exceptions import HTTPException
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

TOO_LARGE = "Content Too Large"


class BodyLimitMiddleware:
    def __init__(self, app: ASGIApp, *, max_bytes: int, limit_for_people: int) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.limit_for_people = limit_for_people  # the upload limit a person set; max_bytes adds multipart framing

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or ()).get(b"content-length", b"")
        if declared.isdigit() and int(declared) > self.max_bytes:
            from app.openai_errors import openai_error_body

            detail = f"The request is {int(declared):,} bytes; uploads are limited to {self.limit_for_people:,} bytes."
            # the same shape as every other error: OpenAI's under /v1/, where its clients read `error.message`
            content = (
                {"error": openai_error_body(413, detail)}
                if scope.get("path", "").startswith("/v1/")
                else {"detail": detail}
            )
            await JSONResponse(status_code=413, content=content, headers={"Connection": "close"})(scope, receive, send)
            return
        received = 0

        async def counted() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_bytes:
                    raise HTTPException(status_code=413, detail=TOO_LARGE)
            return message

        await self.app(scope, counted, send)
