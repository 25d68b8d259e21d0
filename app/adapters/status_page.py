"""The company status page: an Atlassian Statuspage client (StatusSource) and a cached StatusChecker.

Statuspage's public `GET <page>/api/v2/summary.json` is the standard this speaks. The client times
out fast, reads at most `max_bytes`, retries once only when the connection itself failed, and turns
every failure into StatusUnavailable with a reason a person understands. The checker runs the status
graph at most once per TTL and never raises.
"""

from __future__ import annotations

import json
import logging
import threading
import time
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Callable
from urllib.parse import urlsplit

import httpx

from app.adapters.bounded_http import BodyTooLarge, read_bounded
from app.adapters.tracing import NullTracer, run_config
from app.settings import Settings
from core.errors import StatusUnavailable
from core.ports import StatusChecker, StatusSource
from core.records import StatusReport
from core.status import UNREADABLE, unavailable_report
from graphs.status import StatusContext, build_status_graph

log = logging.getLogger(__name__)

SUMMARY_PATH = "/api/v2/summary.json"
MAX_SUMMARY_BYTES = 2 * 1024 * 1024  # GitHub's page on its worst day in 2026 was 66 KB
FAILURE_TTL_S = 10.0  # a dead page is asked again after this, not on every chat message
NOT_CONFIGURED = "no status page is configured"


def status_urls(url: str) -> tuple[str, str]:
    """(page people open, summary.json address) for a page address or a full `.json` address."""
    url = url.strip()
    parts = urlsplit(url)
    root = f"{parts.scheme}://{parts.netloc}"
    path = parts.path.rstrip("/")
    if "/api/v2" in path:
        page = root + path[: path.index("/api/v2")]
        return page, (url if path.endswith(".json") else page + SUMMARY_PATH)
    if path.endswith(".json"):
        return root, url
    return root + path, root + path + SUMMARY_PATH


class StatuspageSource:
    """StatusSource over HTTP: GET the summary, bounded in time and size."""

    def __init__(
        self,
        url: str,
        *,
        timeout_s: float = 3.0,
        max_bytes: int = MAX_SUMMARY_BYTES,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.page_url, self.summary_url = status_urls(url)
        self._timeout_s = timeout_s
        self._max_bytes = max_bytes
        self._transport = transport

    def fetch_summary(self) -> dict:
        try:
            try:
                body, content_type = self._download()
            except (httpx.ConnectError, httpx.RemoteProtocolError) as exc:
                # the connection itself failed (reset, refused): one retry, never a loop
                log.info("status page connection failed (%s); retrying once", exc)
                body, content_type = self._download()
        except httpx.TimeoutException:
            raise StatusUnavailable(f"the status page did not answer within {self._timeout_s:g} s") from None
        except httpx.TooManyRedirects:
            raise StatusUnavailable("the status page redirected too many times") from None
        except httpx.HTTPError as exc:
            reason = str(exc).strip() or type(exc).__name__
            raise StatusUnavailable(f"the status page could not be reached ({reason[:160]})") from None
        return self._decode(body, content_type)

    def _download(self) -> tuple[bytes, str]:
        deadline = time.monotonic() + self._timeout_s
        with httpx.Client(
            timeout=self._timeout_s,
            follow_redirects=True,
            max_redirects=3,
            transport=self._transport,
            headers={"accept": "application/json", "user-agent": "deskmate-status-check"},
        ) as client:
            with client.stream("GET", self.summary_url) as response:
                if response.status_code != 200:
                    hint = (
                        " — is DESKMATE_STATUS_PAGE_URL the address of a Statuspage page?"
                        if response.status_code == 404
                        else ""
                    )
                    raise StatusUnavailable(f"the status page answered HTTP {response.status_code}{hint}")
                try:
                    body = read_bounded(response, max_bytes=self._max_bytes, deadline=deadline)
                except BodyTooLarge:
                    raise self._too_large() from None
                return body, response.headers.get("content-type", "")

    def _too_large(self) -> StatusUnavailable:
        limit = f"{self._max_bytes / 2**20:g} MB" if self._max_bytes >= 2**20 else f"{self._max_bytes // 1024} KB"
        return StatusUnavailable(f"the status page sent more than {limit}, which is not a Statuspage summary")

    def _decode(self, body: bytes, content_type: str) -> dict:
        try:
            summary = json.loads(body)
        except (ValueError, RecursionError):
            looks_html = "html" in content_type.lower() or body.lstrip()[:1] == b"<"
            what = "an HTML page, not JSON" if looks_html else "something that is not JSON"
            raise StatusUnavailable(f"{UNREADABLE}: {what} came back from {self.summary_url}") from None
        if not isinstance(summary, dict):
            raise StatusUnavailable(f"{UNREADABLE}: it is not a Statuspage summary")
        return summary


@dataclass(frozen=True)
class _Cached:
    report: StatusReport
    expires_at: float


class CachedStatusChecker:
    """StatusChecker: runs the status graph at most once per TTL, one refresh at a time.

    While a refresh runs, other callers get the previous report instead of waiting; only the very
    first callers wait. Failures are kept for a shorter time so the page is retried soon, but not
    on every message.
    """

    def __init__(
        self,
        graph,
        source: StatusSource,
        ttl_s: float,
        clock: Callable[[], float] = time.monotonic,
        *,
        failure_ttl_s: float = FAILURE_TTL_S,
        tracer=None,
    ) -> None:
        self._graph = graph
        self._source = source
        self._ttl_s = ttl_s
        self._failure_ttl_s = min(failure_ttl_s, ttl_s)
        self._clock = clock
        self._tracer = tracer or NullTracer()
        self._lock = threading.Lock()
        self._cached: _Cached | None = None

    def current(self) -> StatusReport:
        cached = self._cached
        if cached and self._clock() < cached.expires_at:
            return cached.report
        if not self._lock.acquire(blocking=cached is None) and cached is not None:
            return cached.report  # someone else is refreshing: a slightly old report beats waiting
        try:
            cached = self._cached
            if cached and self._clock() < cached.expires_at:
                return cached.report  # refreshed while we waited for the lock
            report = self._check()
            ttl = self._ttl_s if report["ok"] else self._failure_ttl_s
            self._cached = _Cached(report, self._clock() + ttl)
            return report
        finally:
            self._lock.release()

    def _check(self) -> StatusReport:
        trace_id = uuid.uuid4().hex
        config = run_config(tracer=self._tracer, trace_id=trace_id, run_name="status", tags=["status"])
        try:
            out = self._graph.invoke(
                {"page_url": self._source.page_url}, config, context=StatusContext(source=self._source)
            )
            return out["report"]
        except Exception as exc:  # the contract is "never raises": a bug here must not break a chat turn
            log.exception("status check failed unexpectedly")
            reason = f"the status check failed unexpectedly ({type(exc).__name__})"
            return unavailable_report(self._source.page_url, reason, _now())


class UnconfiguredStatusChecker:
    """StatusChecker when DESKMATE_STATUS_PAGE_URL is not set."""

    def current(self) -> StatusReport:
        return unavailable_report("", NOT_CONFIGURED, _now())


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def build_status_checker(settings: Settings, tracer=None) -> StatusChecker:
    if not settings.integrations.status_page_url:
        return UnconfiguredStatusChecker()
    source = StatuspageSource(settings.integrations.status_page_url, timeout_s=settings.integrations.status_timeout_s)
    log.info("status page: %s (checked at most every %g s)", source.summary_url, settings.integrations.status_ttl_s)
    return CachedStatusChecker(build_status_graph(), source, settings.integrations.status_ttl_s, tracer=tracer)
