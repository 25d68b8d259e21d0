"""A vendor's public help site crawled through the real app: robots.txt, same site, depth cap, 304 revalidation."""

from __future__ import annotations

import pytest

from tests.e2e.test_confluence_source import _counting, _sync
from tests.e2e.website_server import FakeWebsite, help_page

pytestmark = pytest.mark.slow

MFA = (
    "<p>If you lost the phone with your authenticator app, you can reset Quillpad multi-factor sign-in.</p>"
    "<h2>Reset Quillpad MFA</h2><ol><li>Open quillpad.example/account and choose Security.</li>"
    "<li>Select Reset authenticator and confirm with your recovery code.</li></ol>"
)
SYNC = (
    "<p>Quillpad notes sync every five minutes over HTTPS port 443.</p><h2>Force a sync</h2>"
    "<ol><li>Open Quillpad settings.</li><li>Choose Sync now.</li></ol>"
)


@pytest.fixture
def sites():
    with FakeWebsite(robots="User-agent: *\nDisallow: /private/\n") as site, FakeWebsite() as elsewhere:
        elsewhere.pages["/phish"] = help_page("Other site", "<p>Not this site.</p>")
        site.pages["/help/"] = help_page(
            "Quillpad help centre",
            "<p>Guides for Quillpad, the team notes app.</p>",
            ["/help/mfa", "/help/sync", "/old-sync", "/private/admin", f"{elsewhere.url}/phish", "/help/level1"],
        )
        site.pages["/help/mfa"] = help_page("Reset Quillpad MFA", MFA, ["/help/"])
        site.pages["/help/sync"] = help_page("Quillpad sync", SYNC, ["/help/"])
        site.redirects["/old-sync"] = "/help/sync"
        site.pages["/private/admin"] = help_page("Admin console", "<p>Internal admin console password tips.</p>")
        site.pages["/help/level1"] = help_page(
            "Level one", "<p>Quillpad keyboard shortcuts overview.</p>", ["/help/level2"]
        )
        site.pages["/help/level2"] = help_page(
            "Level two", "<p>Quillpad export to Markdown files.</p>", ["/help/level3"]
        )
        site.pages["/help/level3"] = help_page("Level three", "<p>Quillpad beyond the depth cap.</p>")
        yield site, elsewhere


def test_a_help_site_is_crawled_within_its_rules_answered_with_page_links_and_revalidated(serve, sites):
    site, elsewhere = sites
    with serve(kb_dir=None) as client:
        calls = _counting(client)
        created = client.post(
            "/sources",
            json={
                "type": "website",
                "name": "Quillpad help",
                "base_url": site.url,
                "scope": {"start_urls": [f"{site.url}/help/"], "max_depth": 2},
            },
        )
        assert created.status_code == 201, created.text
        source = created.json()

        first = _sync(client, source["id"])
        assert first["status"] == "ok", first
        sources = {d["source"] for d in client.get("/documents").json()["documents"]}
        assert sources == {
            f"{site.url}/help/",
            f"{site.url}/help/mfa",
            f"{site.url}/help/sync",
            f"{site.url}/help/level1",
            f"{site.url}/help/level2",
        }
        assert site.statuses("/private/admin") == []  # robots.txt
        assert elsewhere.requests == []  # same site only
        assert site.statuses("/help/level3") == []  # depth cap

        reply = client.post("/chat", json={"message": "How do I reset Quillpad MFA after losing my phone?"}).json()
        assert reply["sources"][0]["source"] == f"{site.url}/help/mfa", reply
        assert "Select Reset authenticator" in reply["answer"]
        assert "Cookie settings" not in reply["answer"]  # main content only

        calls.clear()
        again = _sync(client, source["id"])
        assert again["last_counts"]["unchanged"] == 5 and sum(calls) == 0, again
        assert site.statuses("/help/mfa")[-1] == 304  # revalidated, not downloaded

        site.pages["/help/sync"] = help_page(
            "Quillpad sync", SYNC.replace("every five minutes", "every minute"), ["/help/"]
        )
        del site.pages["/help/level2"]
        third = _sync(client, source["id"])
        counts = third["last_counts"]
        assert (counts["updated"], counts["deleted"], counts["unchanged"]) == (1, 1, 3), counts
        reply = client.post("/chat", json={"message": "How often do Quillpad notes sync?"}).json()
        assert "every minute" in reply["answer"], reply


def test_a_start_url_on_another_site_is_refused(serve, sites):
    site, elsewhere = sites
    with serve(kb_dir=None) as client:
        response = client.post(
            "/sources",
            json={"type": "website", "base_url": site.url, "scope": {"start_urls": [f"{elsewhere.url}/phish"]}},
        )
    assert response.status_code == 422 and "own site only" in response.json()["detail"]


def test_a_huge_page_is_cut_off_at_the_cap_and_skipped_while_the_rest_of_the_site_syncs(serve, sites):
    site, _ = sites
    site.huge["/help/huge"] = 300 * 1024 * 1024
    site.pages["/help/"] = site.pages["/help/"].replace(
        '<a href="/help/mfa">', '<a href="/help/huge">x</a> <a href="/help/mfa">'
    )
    with serve(kb_dir=None) as client:
        created = client.post(
            "/sources",
            json={
                "type": "website",
                "base_url": site.url,
                "scope": {"start_urls": [f"{site.url}/help/"], "max_depth": 1},
            },
        )
        assert created.status_code == 201, created.text
        synced = _sync(client, created.json()["id"])
        sources = {d["source"] for d in client.get("/documents").json()["documents"]}
        assert f"{site.url}/help/mfa" in sources and f"{site.url}/help/sync" in sources  # the sync went on
        assert f"{site.url}/help/huge" not in sources
        assert "/help/huge" in synced["last_error"] and "the download was stopped" in synced["last_error"]
        assert site.sent["/help/huge"] < 50 * 1024 * 1024  # stopped near the 5 MB cap, never read whole
