"""The status graph, the cached checker (fake clock) and the Statuspage client's URL and error handling."""

from __future__ import annotations

import json
import threading
import time

import httpx
import pytest
from pydantic import ValidationError

from app.adapters.status_page import (
    NOT_CONFIGURED,
    CachedStatusChecker,
    StatuspageSource,
    UnconfiguredStatusChecker,
    build_status_checker,
    status_urls,
)
from app.settings import Settings
from core.errors import StatusUnavailable
from core.ports import StatusChecker, StatusSource
from graphs.status import StatusContext, build_status_graph, route_after_fetch
from tests.conftest import FIXTURES

MAJOR = json.loads((FIXTURES / "statuspage" / "github_summary_20220425T102541_a40b7698.json").read_text())
OPERATIONAL = json.loads((FIXTURES / "statuspage" / "github_summary_20260101T040048_ca482470.json").read_text())


class ScriptedSource:
    """StatusSource double: each fetch takes the next scripted summary (or raises a scripted error)."""

    page_url = "https://status.example.com"

    def __init__(self, *replies, delay_s: float = 0.0) -> None:
        self.replies = list(replies)
        self.calls = 0
        self.delay_s = delay_s
        self.gate: threading.Event | None = None  # when set, a fetch waits until the test opens it

    def fetch_summary(self) -> dict:
        self.calls += 1
        if self.gate is not None:
            self.gate.wait()
        if self.delay_s:
            time.sleep(self.delay_s)
        reply = self.replies.pop(0) if len(self.replies) > 1 else self.replies[0]
        if isinstance(reply, BaseException):
            raise reply
        return reply


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


GRAPH = build_status_graph()


def checker(source, ttl_s=60.0, clock=None, **kwargs) -> CachedStatusChecker:
    return CachedStatusChecker(GRAPH, source, ttl_s, clock=clock or FakeClock(), **kwargs)


# --- the graph ------------------------------------------------------------------------------------
def test_the_graph_fetches_parses_and_summarises_a_page():
    out = GRAPH.invoke({"page_url": "https://status.example.com"}, context=StatusContext(ScriptedSource(MAJOR)))
    assert out["report"]["ok"] and out["report"]["indicator"] == "major"
    assert out["report"]["page_url"] == "https://status.example.com" and out["report"]["checked_at"]
    assert out["summary_text"].startswith("Current status: Partial System Outage\n🔴 GitHub Packages: Major outage")


def test_an_unreachable_page_becomes_a_report_that_says_why():
    source = ScriptedSource(StatusUnavailable("the status page did not answer within 3 s"))
    out = GRAPH.invoke({"page_url": "https://status.example.com"}, context=StatusContext(source))
    assert out["report"]["ok"] is False and out["report"]["indicator"] == "unknown"
    assert out["report"]["error"] == "the status page did not answer within 3 s"
    assert out["summary_text"] == (
        "I couldn't check the status page right now (the status page did not answer within 3 s)."
    )


def test_routing_after_fetch_is_explicit():
    assert route_after_fetch({"page_url": "", "summary": {}}) == "parse"
    assert route_after_fetch({"page_url": "", "summary": None}) == "parse"  # parse calls null unreadable
    assert route_after_fetch({"page_url": "", "fetch_error": "down"}) == "unavailable"
    with pytest.raises(ValueError):
        route_after_fetch({"page_url": ""})


# --- the cache ------------------------------------------------------------------------------------
def test_the_page_is_fetched_once_per_ttl():
    clock, source = FakeClock(), ScriptedSource(OPERATIONAL, MAJOR)
    status = checker(source, ttl_s=60, clock=clock)
    assert isinstance(status, StatusChecker) and isinstance(source, StatusSource)
    assert status.current()["indicator"] == "none"
    clock.now += 59
    assert status.current()["indicator"] == "none" and source.calls == 1
    clock.now += 2
    assert status.current()["indicator"] == "major" and source.calls == 2


def test_a_failure_is_cached_briefly_so_a_dead_page_is_not_hammered():
    clock = FakeClock()
    source = ScriptedSource(StatusUnavailable("the status page answered HTTP 503"), OPERATIONAL)
    status = checker(source, ttl_s=60, clock=clock, failure_ttl_s=10)
    assert status.current()["error"] == "the status page answered HTTP 503"
    clock.now += 9
    assert status.current()["ok"] is False and source.calls == 1
    clock.now += 2
    assert status.current()["ok"] is True and source.calls == 2
    clock.now += 30
    assert status.current()["ok"] is True and source.calls == 2  # success keeps the full TTL


def test_a_short_ttl_also_shortens_the_failure_cache():
    clock, source = FakeClock(), ScriptedSource(StatusUnavailable("down"))
    status = checker(source, ttl_s=2, clock=clock, failure_ttl_s=10)
    status.current()
    clock.now += 2.5
    status.current()
    assert source.calls == 2


def test_concurrent_callers_share_one_refresh_and_later_ones_get_the_previous_report():
    clock, source = FakeClock(), ScriptedSource(OPERATIONAL, MAJOR, delay_s=1.0)
    status = checker(source, ttl_s=60, clock=clock)
    first = [None] * 4
    threads = [threading.Thread(target=lambda n=n: first.__setitem__(n, status.current())) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert source.calls == 1 and {r["indicator"] for r in first} == {"none"}

    clock.now += 61  # expired: one caller refreshes, the others answer at once with the old report
    source.gate = threading.Event()  # the refresh is held until this test lets it finish
    refresher = threading.Thread(target=status.current)
    refresher.start()
    while source.calls < 2:  # the refresher is inside the fetch, holding the refresh
        time.sleep(0.01)
    answer: list[dict] = []
    later = threading.Thread(target=lambda: answer.append(status.current()))
    later.start()
    later.join(60)  # a caller waiting for the held refresh would never answer
    assert [a["indicator"] for a in answer] == ["none"]  # the old report, while the refresh is still held
    source.gate.set()
    refresher.join()
    assert status.current()["indicator"] == "major" and source.calls == 2


def test_an_unexpected_error_inside_the_graph_still_returns_a_report():
    status = checker(ScriptedSource(RuntimeError("bug")))
    report = status.current()
    assert report["ok"] is False and report["indicator"] == "unknown"
    assert report["error"] == "the status check failed unexpectedly (RuntimeError)"


def test_without_a_url_the_checker_says_none_is_configured(make_settings):
    status = build_status_checker(make_settings())
    assert isinstance(status, UnconfiguredStatusChecker)
    report = status.current()
    assert report["ok"] is False and report["error"] == NOT_CONFIGURED and report["indicator"] == "unknown"


def test_a_configured_url_builds_a_cached_checker(make_settings):
    status = build_status_checker(make_settings(status_page_url="https://status.example.com/", status_ttl_s=5))
    assert isinstance(status, CachedStatusChecker)


# --- settings -------------------------------------------------------------------------------------
def test_status_settings_have_safe_defaults_and_refuse_a_non_http_url():
    settings = Settings(_env_file=None)
    assert (
        settings.integrations.status_page_url is None
        and settings.integrations.status_ttl_s == 60
        and settings.integrations.status_timeout_s == 3
    )
    assert Settings(_env_file=None, status_page_url="  ").integrations.status_page_url is None
    with pytest.raises(ValidationError, match="DESKMATE_STATUS_PAGE_URL must start with https://"):
        Settings(_env_file=None, status_page_url="status.example.com")


# --- the Statuspage client ------------------------------------------------------------------------
@pytest.mark.parametrize(
    "configured, page, summary",
    [
        ("https://status.example.com", "https://status.example.com", "https://status.example.com/api/v2/summary.json"),
        ("https://status.example.com/", "https://status.example.com", "https://status.example.com/api/v2/summary.json"),
        (
            "https://www.githubstatus.com/api/v2/summary.json",
            "https://www.githubstatus.com",
            "https://www.githubstatus.com/api/v2/summary.json",
        ),
        (
            "https://example.com/status/api/v2/",
            "https://example.com/status",
            "https://example.com/status/api/v2/summary.json",
        ),
        (
            "http://127.0.0.1:8080/pages/acme",
            "http://127.0.0.1:8080/pages/acme",
            "http://127.0.0.1:8080/pages/acme/api/v2/summary.json",
        ),
        (
            "https://cdn.example.com/acme-summary.json",
            "https://cdn.example.com",
            "https://cdn.example.com/acme-summary.json",
        ),
    ],
)
def test_a_page_address_or_a_json_address_is_accepted(configured, page, summary):
    assert status_urls(configured) == (page, summary)


def source_replying(handler, **kwargs) -> StatuspageSource:
    return StatuspageSource("https://status.example.com", transport=httpx.MockTransport(handler), **kwargs)


def test_the_client_gets_the_summary_json():
    seen = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json=MAJOR)

    assert source_replying(handler).fetch_summary() == MAJOR
    assert str(seen[0].url) == "https://status.example.com/api/v2/summary.json"
    assert seen[0].headers["accept"] == "application/json"


@pytest.mark.parametrize(
    "response, reason",
    [
        (httpx.Response(500, text="oops"), "the status page answered HTTP 500"),
        (httpx.Response(404, text="no"), "answered HTTP 404 — is DESKMATE_STATUS_PAGE_URL the address of a Statuspage"),
        (
            httpx.Response(200, text="<!doctype html><html>Status</html>", headers={"content-type": "text/html"}),
            "the status page returned something unreadable: an HTML page, not JSON",
        ),
        (httpx.Response(200, text='{"status": '), "returned something unreadable: something that is not JSON"),
        (httpx.Response(200, json=[1, 2]), "returned something unreadable: it is not a Statuspage summary"),
        (httpx.Response(200, content=b"[" * 100_000 + b"]" * 100_000), "returned something unreadable"),  # too deep
        (httpx.Response(200, content=b" " * (2 * 1024 * 1024 + 1)), "sent more than 2 MB"),
    ],
)
def test_a_bad_answer_becomes_status_unavailable_with_a_readable_reason(response, reason):
    with pytest.raises(StatusUnavailable) as caught:
        source_replying(lambda request: response).fetch_summary()
    assert reason in caught.value.reason


def test_a_failed_connection_is_retried_once_and_then_reported():
    calls = []

    def refuse(request):
        calls.append(request)
        raise httpx.ConnectError("[Errno 111] Connection refused", request=request)

    with pytest.raises(StatusUnavailable, match=r"could not be reached \(\[Errno 111\] Connection refused\)"):
        source_replying(refuse).fetch_summary()
    assert len(calls) == 2

    replies = [httpx.ConnectError("reset"), httpx.Response(200, json=OPERATIONAL)]

    def flaky(request):
        reply = replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        return reply

    assert source_replying(flaky).fetch_summary() == OPERATIONAL


def test_a_timeout_is_not_retried():
    calls = []

    def slow(request):
        calls.append(request)
        raise httpx.ReadTimeout("timed out", request=request)

    with pytest.raises(StatusUnavailable, match=r"did not answer within 1\.5 s"):
        source_replying(slow, timeout_s=1.5).fetch_summary()
    assert len(calls) == 1


def test_a_page_dripping_its_body_slowly_still_times_out_on_time():
    sent = [0]

    def drip():
        for _ in range(400):  # 60 s of body
            time.sleep(0.15)  # each chunk beats the read timeout; the whole body does not
            sent[0] += 1
            yield b" "

    with pytest.raises(StatusUnavailable, match=r"did not answer within 0\.5 s"):
        source_replying(lambda request: httpx.Response(200, content=drip()), timeout_s=0.5).fetch_summary()
    assert sent[0] < 400  # stopped at the deadline, not after reading the whole body
