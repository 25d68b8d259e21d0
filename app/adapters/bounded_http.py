"""Reading an HTTP response body within limits, for adapters that fetch from servers they do not control
(the status page, configured integrations)."""

from __future__ import annotations

import time

import httpx


class BodyTooLarge(Exception):
    """The response declared or sent more than the allowed bytes."""


def read_bounded(response: httpx.Response, *, max_bytes: int, deadline: float) -> bytes:
    """The body of a streamed response: BodyTooLarge past `max_bytes` (by its declared length, or as read),
    httpx.ReadTimeout past `deadline` (a time.monotonic() value) — a server dripping bytes slowly would
    otherwise dodge the per-read timeout."""
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > max_bytes:
        raise BodyTooLarge
    body = bytearray()
    for chunk in response.iter_bytes():
        body += chunk
        if len(body) > max_bytes:
            raise BodyTooLarge
        if time.monotonic() > deadline:
            raise httpx.ReadTimeout("body too slow")
    return bytes(body)
