"""Configured integrations (DESKMATE_CONFIG `integrations:`): read-only HTTP lookups the decision agent
may choose, like a REST tool.

One GET per call, bounded in time and size, no redirects (a redirect could carry the credentials
headers elsewhere), `${user}` and `${query}` URL-encoded into the path or query string. Every failure
becomes IntegrationUnavailable with a reason that names the integration, never its address or headers.
"""

from __future__ import annotations

import json
import logging
import time
from urllib.parse import quote

import httpx

from app.adapters.bounded_http import BodyTooLarge, read_bounded
from core.errors import IntegrationUnavailable
from core.policy_config import IntegrationSpec
from core.ports import IntegrationResult

log = logging.getLogger(__name__)
MAX_QUERY_CHARS = 500  # of the (redacted) message put into a ${query} URL


class HttpIntegration:
    """An IntegrationSpec made callable over HTTP."""

    def __init__(self, spec: IntegrationSpec, *, transport: httpx.BaseTransport | None = None) -> None:
        self.spec = spec
        self.name = spec.name
        self.description = spec.description
        self.needs_user = spec.needs_user
        self._transport = transport

    def url_for(self, *, user: str, query: str) -> str:
        return self.spec.url.replace("${user}", quote(user, safe="")).replace(
            "${query}", quote(query[:MAX_QUERY_CHARS], safe="")
        )

    def fetch(self, *, user: str, query: str) -> IntegrationResult:
        started = time.monotonic()
        try:
            status, body, content_type = self._download(self.url_for(user=user, query=query))
        except httpx.TimeoutException:
            raise IntegrationUnavailable(f"{self.name} did not answer within {self.spec.timeout_s:g} s") from None
        except httpx.HTTPError as exc:
            reason = (
                type(exc).__name__ if isinstance(exc, httpx.ConnectError) else (str(exc).strip() or type(exc).__name__)
            )
            raise IntegrationUnavailable(f"{self.name} could not be reached ({reason[:120]})") from None
        elapsed = round((time.monotonic() - started) * 1000, 1)
        if status == 404:
            return IntegrationResult(None, status, elapsed)  # nothing on record: an answer, not a failure
        if not 200 <= status < 300:
            raise IntegrationUnavailable(f"{self.name} answered HTTP {status}")
        return IntegrationResult(self._decode(body, content_type), status, elapsed)

    def _download(self, url: str) -> tuple[int, bytes, str]:
        deadline = time.monotonic() + self.spec.timeout_s
        headers = {"accept": "application/json, text/plain", "user-agent": "deskmate-integration"}
        headers.update(dict(self.spec.headers))
        with httpx.Client(
            timeout=self.spec.timeout_s, follow_redirects=False, transport=self._transport, headers=headers
        ) as client:
            with client.stream("GET", url) as response:
                if 300 <= response.status_code < 400:
                    raise IntegrationUnavailable(
                        f"{self.name} answered with a redirect, which deskmate does not "
                        "follow (check its url in the configuration)"
                    )
                try:
                    body = read_bounded(response, max_bytes=self.spec.max_bytes, deadline=deadline)
                except BodyTooLarge:
                    raise self._too_large() from None
                return response.status_code, body, response.headers.get("content-type", "")

    def _too_large(self) -> IntegrationUnavailable:
        return IntegrationUnavailable(f"{self.name} sent more than {self.spec.max_bytes // 1024} KB (its max_bytes)")

    def _decode(self, body: bytes, content_type: str) -> object:
        text = body.decode("utf-8", errors="replace")
        if "json" in content_type.lower() or text.lstrip()[:1] in ("{", "["):
            try:
                return json.loads(text)
            except (ValueError, RecursionError):
                raise IntegrationUnavailable(f"{self.name} sent something that is not valid JSON") from None
        if "html" in content_type.lower() or text.lstrip()[:1] == "<":
            raise IntegrationUnavailable(f"{self.name} sent an HTML page, not data (check its url)")
        return text.strip()
