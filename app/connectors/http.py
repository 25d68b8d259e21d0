"""HTTP for connectors: bounded retries on 429/503 with Retry-After, clear errors, no credentials in messages."""

from __future__ import annotations

import logging
import time
from email.utils import parsedate_to_datetime
from typing import Callable
from urllib.parse import urlsplit

import httpx

from app.adapters.bounded_http import BodyTooLarge, read_bounded
from app.connectors.base import ConnectorAuthError, ConnectorError, ResponseTooLarge

log = logging.getLogger(__name__)

MAX_ATTEMPTS = 5
MAX_RETRY_WAIT_S = 60.0
MAX_RESPONSE_BYTES = 50 * 1024 * 1024


def retry_after_seconds(value: str | None, default: float) -> float:
    """Retry-After as seconds (delta-seconds or an HTTP date), capped."""
    if not value:
        return default
    try:
        return min(max(float(value), 0.0), MAX_RETRY_WAIT_S)
    except ValueError:
        pass
    try:
        return min(max(parsedate_to_datetime(value).timestamp() - time.time(), 0.0), MAX_RETRY_WAIT_S)
    except (TypeError, ValueError):
        return default


class SourceHttp:
    """One source's HTTP client: base URL, auth, timeouts and back-off in one place."""

    def __init__(
        self,
        base_url: str,
        *,
        auth: httpx.Auth | tuple[str, str] | None = None,
        headers: dict | None = None,
        timeout_s: float = 20.0,
        source_label: str = "the source",
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.label = source_label
        self._sleep = sleep
        self._client = httpx.Client(
            base_url=self.base_url, auth=auth, headers=headers or {}, timeout=timeout_s, follow_redirects=False
        )
        self._body_deadline_s = max(timeout_s * 6, 60.0)  # a whole body, however slowly it drips
        self.requests = 0
        self.throttled = 0

    def get(
        self,
        path_or_url: str,
        *,
        params: dict | None = None,
        headers: dict | None = None,
        accept_statuses: tuple[int, ...] = (),
        max_bytes: int = MAX_RESPONSE_BYTES,
    ) -> httpx.Response:
        """GET with back-off: 429 and 503 wait for Retry-After (bounded attempts); 401/403 raise ConnectorAuthError.
        The body is streamed and the download stops at `max_bytes` (ResponseTooLarge): a huge page never sits in
        memory whole."""
        target = urlsplit(path_or_url)
        if target.netloc and target.netloc != urlsplit(self.base_url).netloc:
            # paging links come from the source: credentials never follow one to another host
            raise ConnectorError(f"{self.label} pointed to another host ({target.netloc}); not followed.")
        for attempt in range(1, MAX_ATTEMPTS + 1):
            self.requests += 1
            try:
                response = self._bounded_get(path_or_url, params, headers, max_bytes)
            except httpx.HTTPError as exc:
                if attempt == MAX_ATTEMPTS:
                    raise ConnectorError(f"{self.label} could not be reached ({type(exc).__name__}).") from exc
                self._sleep(min(2**attempt, MAX_RETRY_WAIT_S))
                continue
            if response.status_code in (429, 503) and attempt < MAX_ATTEMPTS:
                self.throttled += 1
                wait = retry_after_seconds(response.headers.get("retry-after"), float(2**attempt))
                log.info("%s throttled (%d); retrying in %.1f s", self.label, response.status_code, wait)
                self._sleep(wait)
                continue
            if response.status_code in (401, 403) and response.status_code not in accept_statuses:
                raise ConnectorAuthError(
                    f"{self.label} refused the credentials (HTTP {response.status_code}); "
                    "check the environment variables this source names.",
                    status=response.status_code,
                )
            if response.status_code >= 400 and response.status_code not in accept_statuses:
                raise ConnectorError(
                    f"{self.label} answered HTTP {response.status_code} for {response.request.url.path}.",
                    status=response.status_code,
                )
            return response
        raise ConnectorError(
            f"{self.label} kept answering 'too many requests' after {MAX_ATTEMPTS} attempts; "
            "the next sync will try again.",
            status=429,
        )

    def _bounded_get(
        self, path_or_url: str, params: dict | None, headers: dict | None, max_bytes: int
    ) -> httpx.Response:
        """One GET, its body read as it arrives and never past `max_bytes`; the response returned holds the body."""
        request = self._client.build_request("GET", path_or_url, params=params, headers=headers)
        response = self._client.send(request, stream=True)
        try:
            body = read_bounded(response, max_bytes=max_bytes, deadline=time.monotonic() + self._body_deadline_s)
        except BodyTooLarge:
            limit = f"{max_bytes / 2**20:g} MB" if max_bytes >= 2**20 else f"{max_bytes:,} bytes"
            raise ResponseTooLarge(
                f"{self.label} sent more than {limit} for {request.url.path[:200]}; the download was stopped there "
                "and it was skipped.",
                status=response.status_code,
            ) from None
        finally:
            response.close()
        kept = {k: v for k, v in response.headers.items() if k.lower() not in ("content-encoding", "content-length")}
        return httpx.Response(response.status_code, headers=kept, content=body, request=request)

    def json(self, path_or_url: str, *, params: dict | None = None) -> dict:
        response = self.get(path_or_url, params=params)
        try:
            body = response.json()
        except ValueError as exc:
            raise ConnectorError(f"{self.label} did not answer JSON for {response.request.url.path}.") from exc
        if not isinstance(body, dict):
            raise ConnectorError(f"{self.label} answered an unexpected JSON shape for {response.request.url.path}.")
        return body

    def close(self) -> None:
        self._client.close()
