"""GET /status through the real app against a Statuspage-speaking server on 127.0.0.1.

The server replays real githubstatus.com captures (tests/fixtures/statuspage), then misbehaves:
too slow, HTML instead of JSON, HTTP 500, not there at all.
"""

from __future__ import annotations

import pytest

from tests.conftest import FIXTURES
from tests.e2e.servers import StatusPageServer, free_port

pytestmark = pytest.mark.slow
CAPTURES = FIXTURES / "statuspage"
MAJOR_OUTAGE = (CAPTURES / "github_summary_20220425T102541_a40b7698.json").read_bytes()
ALL_OPERATIONAL = (CAPTURES / "github_summary_20260101T040048_ca482470.json").read_bytes()


def test_status_reports_a_major_outage_and_reuses_it_within_the_ttl(serve):
    with StatusPageServer(MAJOR_OUTAGE) as page:
        with serve(status_page_url=page.url + "/", kb_dir="") as client:
            first = client.get("/status")
            page.serve(ALL_OPERATIONAL)  # the page recovers, but the TTL (60 s) has not passed
            second = client.get("/status").json()
    assert first.status_code == 200
    report = first.json()
    assert report["ok"] is True and report["error"] is None
    assert report["indicator"] == "major" and report["description"] == "Partial System Outage"
    assert report["page_url"] == page.url
    assert sorted((c["name"], c["status"]) for c in report["components"] if c["status"] != "operational") == [
        ("GitHub Packages", "major_outage"),
        ("GitHub Pages", "partial_outage"),
    ]
    [incident] = report["incidents"]
    assert (incident["name"], incident["status"], incident["impact"]) == (
        "Incident with GitHub Packages and GitHub Pages",
        "investigating",
        "major",
    )
    assert incident["components"] == ["GitHub Packages"] and incident["latest_update"]
    assert second == report
    assert [r["path"] for r in page.requests] == ["/api/v2/summary.json"]  # one fetch for two calls
    assert page.requests[0]["headers"]["accept"] == "application/json"


def test_a_page_slower_than_the_timeout_is_reported_unchecked_without_waiting_for_it(serve):
    with StatusPageServer(MAJOR_OUTAGE, delay_s=120) as page:
        with serve(status_page_url=page.url, status_timeout_s=0.5, kb_dir="") as client:
            report = client.get("/status").json()
            unanswered_when_reported = page.answered == 0  # the page was still holding its reply
            page.released.set()
    assert report["ok"] is False and report["indicator"] == "unknown"
    assert report["error"] == "the status page did not answer within 0.5 s"
    assert unanswered_when_reported
    assert len(page.requests) == 1  # a timeout is not retried


@pytest.mark.parametrize(
    "reply, reason",
    [
        (
            dict(body=b"<!DOCTYPE html><html><body>Our status</body></html>", content_type="text/html; charset=utf-8"),
            "the status page returned something unreadable: an HTML page, not JSON",
        ),
        (dict(body=b'{"error": "internal"}', status=500), "the status page answered HTTP 500"),
        (
            dict(body=b'{"page": {"name": "Acme"}, "components": []}'),
            "the status page returned something unreadable: it has no overall status",
        ),
    ],
    ids=["html", "http-500", "wrong-json"],
)
def test_a_page_that_answers_garbage_is_reported_with_a_readable_reason(serve, reply, reason):
    with StatusPageServer(**reply) as page:
        # the full .json address works as well as the page address
        with serve(status_page_url=f"{page.url}/api/v2/summary.json", kb_dir="") as client:
            response = client.get("/status")
            again = client.get("/status").json()
    assert response.status_code == 200
    report = response.json()
    assert report["ok"] is False and report["indicator"] == "unknown" and report["error"].startswith(reason)
    assert report["components"] == [] and report["incidents"] == [] and report["page_url"] == page.url
    assert again == report and len(page.requests) == 1  # the failure is cached too, briefly


def test_a_page_nobody_answers_at_is_reported_unreachable(serve):
    with serve(status_page_url=f"http://127.0.0.1:{free_port()}", kb_dir="") as client:
        report = client.get("/status").json()
    assert report["ok"] is False and report["error"].startswith("the status page could not be reached")


def test_without_a_configured_page_status_says_so(serve):
    with serve(kb_dir="") as client:
        response = client.get("/status")
    assert response.status_code == 200
    assert response.json()["ok"] is False and response.json()["error"] == "no status page is configured"
