"""Errors as OpenAI's clients read them (`error.message`): used by every edge that can answer `/v1/`."""

from __future__ import annotations


def openai_error_body(
    status: int, message: str, kind: str | None = None, code: str | None = None, param: str | None = None
) -> dict:
    """An error as OpenAI's clients read it (`error.message`): the object under "error" in a reply, or the
    `data: {"error": …}` of a stream."""
    return {
        "message": message,
        "type": kind or ("invalid_request_error" if status < 500 else "server_error"),
        "param": param,
        "code": code or str(status),
    }
