"""A Confluence space synced through the real app against a Confluence-speaking server on 127.0.0.1.

Real parse sandbox, real MiniLM, real Chroma and SQLite. The embedder is only wrapped to count what is embedded.
"""

from __future__ import annotations

import logging
import time

import pytest

from app.identity import USER_HEADER, make_user_token
from tests.e2e.confluence_server import FakeConfluence
from tests.jobs import wait_for_job

pytestmark = pytest.mark.slow

EMAIL, TOKEN = "it-bot@example.com", "ATATT3x" + "FfGF0k2vQh7Lw9Zr4Tp8Ns1Xc6Bm3Jd5"
USER_SECRET = "usr-" + "Vb8Nq3Lx6Tz1Rk9Wm4Pc7Hs2Jd5Gf0Ya"

PRINTER = """<p>Use this when the Halden printer on floor 3 shows error E-51.</p>
<h2>Clear the jam</h2>
<ol><li><p>Open the rear door of the Halden printer.</p></li><li><p>Pull the green lever and remove the paper.</p></li>
<li><p>Close the door and press Resume.</p></li></ol>
<ac:structured-macro ac:name="warning" ac:schema-version="1"><ac:rich-text-body><p>The fuser behind the lever is hot.</p>
</ac:rich-text-body></ac:structured-macro>
<ac:structured-macro ac:name="toc"/>"""
WIFI = """<p>The guest Wi-Fi network is called Fjord-Guest.</p><h2>Get a guest code</h2>
<ol><li>Ask reception for a Fjord-Guest voucher.</li><li>Join Fjord-Guest and type the voucher code.</li></ol>
<ac:structured-macro ac:name="code"><ac:parameter ac:name="language">bash</ac:parameter>
<ac:plain-text-body><![CDATA[nmcli dev wifi connect Fjord-Guest]]></ac:plain-text-body></ac:structured-macro>"""
PAYROLL = """<p>The payroll export runs from the Ledgerline console.</p><h2>Export the monthly payroll</h2>
<ol><li>Sign in to Ledgerline with your finance smart card.</li><li>Choose Exports, then Monthly payroll file.</li></ol>"""
LAPTOP = """<p>Laptops are refreshed every four years.</p><h2>Ask for a new laptop</h2>
<ol><li>Open the Hardware refresh form.</li><li>Pick the Tundra 14 model.</li></ol>"""
BADGE = """<p>Lost badges are replaced at the security desk in Building Orm.</p>"""


def _space(server: FakeConfluence) -> None:
    server.add_page("101", "Halden printer error E-51", PRINTER)
    server.add_page("102", "Guest Wi-Fi Fjord-Guest", WIFI)
    server.add_page("103", "Ledgerline payroll export", PAYROLL, groups=["Finance-Team"])
    server.add_page("104", "Laptop refresh", LAPTOP)
    server.add_page("105", "Lost badge", BADGE)


@pytest.fixture
def confluence(monkeypatch):
    monkeypatch.setenv("TEST_CONFLUENCE_USER", EMAIL)
    monkeypatch.setenv("TEST_CONFLUENCE_TOKEN", TOKEN)
    with FakeConfluence(email=EMAIL, token=TOKEN) as server:
        _space(server)
        yield server


def _counting(client) -> list[int]:
    """Wrap the app's embedder: each call's number of texts embedded for indexing is recorded."""
    embedder = client.app.state.resources.embedder
    calls: list[int] = []
    original = embedder.embed_documents

    def embed_documents(texts):
        calls.append(len(texts))
        return original(texts)

    embedder.embed_documents = embed_documents
    return calls


def _create(client, base_url: str, **extra) -> dict:
    body = {
        "type": "confluence",
        "name": "IT space",
        "base_url": f"{base_url}/wiki",
        "scope": {"space_keys": ["IT"]},
        "credential_env": {"user": "TEST_CONFLUENCE_USER", "token": "TEST_CONFLUENCE_TOKEN"},
        "group_map": {"Finance-Team": "finance"},
        **extra,
    }
    response = client.post("/sources", json=body)
    assert response.status_code == 201, response.text
    return response.json()


def _sync(client, source_id: str) -> dict:
    started = client.post(f"/sources/{source_id}/sync")
    assert started.status_code == 202, started.text
    assert started.headers["location"] == f"/jobs/{started.json()['job']['id']}"
    wait_for_job(client, started.json()["job"]["id"])
    return client.get(f"/sources/{source_id}").json()


def _ask(client, message: str, *groups: str) -> dict:
    headers = {USER_HEADER: make_user_token(USER_SECRET, "sam", list(groups))}
    reply = client.post("/chat", json={"message": message}, headers=headers)
    assert reply.status_code == 200, reply.text
    return reply.json()


def test_a_space_syncs_answers_with_the_page_link_and_follows_edits_deletions_and_restrictions(
    serve, confluence, caplog, tmp_path
):
    caplog.set_level(logging.DEBUG)
    with serve(kb_dir=None, user_token_secret=USER_SECRET) as client:
        calls = _counting(client)
        source = _create(client, confluence.url)
        assert source["status"] == "never" and source["credential_env"]["token"] == "TEST_CONFLUENCE_TOKEN"

        first = _sync(client, source["id"])
        assert first["status"] == "ok", first
        assert first["documents"] == 5 and first["last_counts"]["added"] == 5
        assert sum(calls) == first["last_counts"]["chunks_embedded"] > 0

        reply = _ask(client, "How do I get a code for the Fjord-Guest Wi-Fi?")
        assert reply["action"] == "answer", reply
        assert reply["sources"][0]["source"] == f"{confluence.url}/wiki/pages/viewpage.action?pageId=102"
        assert "Ask reception for a Fjord-Guest voucher" in reply["answer"]
        assert "nmcli dev wifi connect Fjord-Guest" in reply["answer"]  # the code macro, kept as code

        # the restricted page answers finance, and nobody else
        outsider = _ask(client, "How do I export the monthly payroll from Ledgerline?", "sales")
        assert "finance smart card" not in outsider["answer"]
        assert all("pageId=103" not in s["source"] for s in outsider["sources"])
        member = _ask(client, "How do I export the monthly payroll from Ledgerline?", "finance")
        assert "finance smart card" in member["answer"], member

        # at the source: an edit, a deletion, a permission change (no new version), the rest untouched
        confluence.edit_page(
            "102",
            WIFI.replace("Ask reception for a Fjord-Guest voucher.", "Scan the Fjord-Guest QR code at reception."),
        )
        confluence.delete_page("105")
        confluence.restrict("104", groups=["Finance-Team"])
        calls.clear()
        second = _sync(client, source["id"])
        counts = second["last_counts"]
        assert second["status"] == "ok", second
        assert (counts["updated"], counts["deleted"], counts["permissions_changed"]) == (2, 1, 1), counts
        assert second["documents"] == 4
        # only the edited page and the re-permissioned page were embedded again
        assert sum(calls) == counts["chunks_embedded"] and 0 < sum(calls) <= 6, (calls, counts)
        assert confluence.count("/wiki/rest/api/content/search") >= 1  # incremental: CQL lastmodified

        edited = _ask(client, "How do I get a code for the Fjord-Guest Wi-Fi?")
        assert "Scan the Fjord-Guest QR code" in edited["answer"], edited
        gone = _ask(client, "Where do I replace a lost badge in Building Orm?")
        assert "security desk in Building Orm" not in gone["answer"]
        now_restricted = _ask(client, "How do I ask for a new laptop in the hardware refresh?", "sales")
        assert "Tundra 14" not in now_restricted["answer"]
        assert all("pageId=104" not in s["source"] for s in now_restricted["sources"])
        assert (
            "Tundra 14" in _ask(client, "How do I ask for a new laptop in the hardware refresh?", "finance")["answer"]
        )

        listed = client.get("/sources").json()["sources"]
        assert [s["id"] for s in listed] == [source["id"]]

        assert client.delete(f"/sources/{source['id']}").status_code == 204
        assert not [d for d in client.get("/documents").json()["documents"] if d["source"].startswith(confluence.url)]
        data_dir = client.app.state.resources.settings.storage.data_dir

    # the token went to Confluence and nowhere else: not the database, the API, the logs or the traces
    assert all(h.startswith("Basic ") for h in confluence.auth_headers)
    for path in data_dir.rglob("*.sqlite*"):
        assert TOKEN.encode() not in path.read_bytes(), path
    assert TOKEN not in caplog.text and EMAIL not in caplog.text


def test_throttling_is_waited_out_and_bad_credentials_are_reported_on_the_source(serve, confluence, monkeypatch):
    confluence.throttle_next, confluence.retry_after = 2, "0"
    with serve(kb_dir=None) as client:
        source = _create(client, confluence.url)
        synced = _sync(client, source["id"])
        assert synced["status"] == "ok" and synced["documents"] == 5, synced
        assert sum(1 for r in confluence.requests[:3] if r.startswith("/wiki/api/v2/spaces")) == 3  # retried

        monkeypatch.setenv("TEST_CONFLUENCE_TOKEN", "wrong-token")
        failed = _sync(client, source["id"])
        assert failed["status"] == "error" and "refused the credentials (HTTP 401)" in failed["last_error"]
        assert failed["documents"] == 5  # nothing is lost when a sync fails


def test_sources_are_validated_and_credentials_are_names_not_values(serve, confluence, monkeypatch):
    with serve(kb_dir=None) as client:
        secret_as_value = client.post(
            "/sources",
            json={
                "type": "confluence",
                "base_url": confluence.url,
                "scope": {"space_keys": ["IT"]},
                "credential_env": {"token": TOKEN + "=="},
            },
        )
        assert secret_as_value.status_code == 422 and "NAME of an environment" in secret_as_value.json()["detail"]
        assert TOKEN not in secret_as_value.text
        unset = client.post(
            "/sources",
            json={
                "type": "confluence",
                "base_url": confluence.url,
                "scope": {"space_keys": ["IT"]},
                "credential_env": {"token": "NOPE_X"},
            },
        )
        assert unset.status_code == 422 and "NOPE_X is not set" in unset.json()["detail"]
        no_scope = client.post("/sources", json={"type": "confluence", "base_url": confluence.url, "scope": {}})
        assert no_scope.status_code == 422 and "space_keys" in no_scope.json()["detail"]
        bad_url = client.post(
            "/sources", json={"type": "confluence", "base_url": "ftp://x", "scope": {"space_keys": ["IT"]}}
        )
        assert bad_url.status_code == 422
        first = _create(client, confluence.url)
        again = client.post(
            "/sources",
            json={"type": "confluence", "base_url": f"{confluence.url}/wiki", "scope": {"space_keys": ["IT"]}},
        )
        assert again.status_code == 409 and first["id"] in again.json()["detail"]
        assert client.post("/sources/000000000000/sync").status_code == 404
        assert client.delete("/sources/nope").status_code == 404


def test_a_scheduled_source_syncs_by_itself_once_per_interval(serve, confluence):
    with serve(kb_dir=None, source_schedule_interval_s=0.2) as client:
        manual = _create(client, confluence.url, name="manual copy", scope={"space_keys": ["IT", "OPS"]})
        source = _create(client, confluence.url, schedule="every 1m")
        deadline = time.monotonic() + 60
        while (synced := client.get(f"/sources/{source['id']}").json())["status"] != "ok":
            assert synced["status"] in ("never", "queued", "syncing"), synced
            assert time.monotonic() < deadline, synced
            time.sleep(0.2)
        assert synced["documents"] == 5 and synced["last_counts"]["added"] == 5
        listings = confluence.count("/wiki/api/v2/spaces")
        time.sleep(1.5)  # several scheduler rounds inside the minute: no second sync
        assert confluence.count("/wiki/api/v2/spaces") == listings
        assert client.get(f"/sources/{source['id']}").json()["last_sync_at"] == synced["last_sync_at"]
        assert client.get(f"/sources/{manual['id']}").json()["status"] == "never"  # manual: only on request


def test_cloud_pages_inherit_their_ancestors_read_restrictions(confluence):
    from app.connectors.base import DocumentRef, Unreadable
    from app.connectors.registry import build_connector

    confluence.add_page("301", "Finance handbook", "<p>Finance team pages.</p>", groups=["Finance-Team"])
    confluence.add_page("302", "Payroll export", PAYROLL, parent="301")
    confluence.add_page("303", "Payroll keys", "<p>Key ceremony.</p>", parent="302", users=["5b10ac8d82e05b22cc7d4ef5"])
    connector = build_connector(
        {
            "type": "confluence",
            "base_url": f"{confluence.url}/wiki",
            "scope": {"space_keys": ["IT"]},
            "group_map": {"Finance-Team": "finance"},
            "credential_env": {"user": "TEST_CONFLUENCE_USER", "token": "TEST_CONFLUENCE_TOKEN"},
        }
    )
    try:
        assert connector.audience(connector.fetch(DocumentRef("302", "1"))) == ["finance"]  # from its grandparent
        assert confluence.count("/wiki/api/v2/pages/302/ancestors") == 1
        with pytest.raises(Unreadable, match="no group or user allowed at every level"):
            connector.audience(connector.fetch(DocumentRef("303", "1")))  # finance above, one person here
        assert connector.audience(connector.fetch(DocumentRef("101", "1"))) == []
    finally:
        connector.close()
    confluence.restrict("301", groups=["Finance-Team", "HR-Team"])
    again = build_connector(
        {
            "type": "confluence",
            "base_url": f"{confluence.url}/wiki",
            "scope": {"space_keys": ["IT"]},
            "group_map": {},
            "credential_env": {"user": "TEST_CONFLUENCE_USER", "token": "TEST_CONFLUENCE_TOKEN"},
        }
    )
    try:
        assert again.current_audience("302") == ["finance-team", "hr-team"]  # no page version changed
    finally:
        again.close()


@pytest.fixture
def data_center(monkeypatch):
    monkeypatch.setenv("TEST_CONFLUENCE_PAT", TOKEN)
    with FakeConfluence(email="", token=TOKEN, data_center=True) as server:
        server.add_page("201", "Finance handbook", "<p>Pages for the finance team.</p>", groups=["Finance-Team"])
        server.add_page("202", "Ledgerline payroll export", PAYROLL, parent="201")
        server.add_page("203", "Payroll keys", "<p>The Ledgerline key ceremony.</p>", parent="202", users=["jsmith"])
        server.add_page("204", "Halden printer error E-51", PRINTER)
        yield server


def test_a_data_center_space_syncs_over_rest_api_with_restrictions_inherited_from_ancestors(serve, data_center):
    with serve(kb_dir=None, user_token_secret=USER_SECRET) as client:
        created = client.post(
            "/sources",
            json={
                "type": "confluence",
                "name": "DC space",
                "base_url": data_center.url,
                "scope": {"space_keys": ["IT"], "edition": "data_center"},
                "credential_env": {"token": "TEST_CONFLUENCE_PAT"},
                "group_map": {"Finance-Team": "finance"},
            },
        )
        assert created.status_code == 201, created.text
        first = _sync(client, created.json()["id"])
        assert first["status"] == "ok", first
        # the handbook and the export (restricted through its parent) and the printer page; the keys page is
        # readable only by someone who is also in finance, which no single audience says: withheld
        assert first["documents"] == 3 and first["last_counts"]["withheld"] == 1, first

        printer = _ask(client, "The Halden printer shows error E-51, what do I do?")
        assert printer["sources"][0]["source"] == f"{data_center.url}/pages/viewpage.action?pageId=204"
        outsider = _ask(client, "How do I export the monthly payroll from Ledgerline?", "sales")
        assert "finance smart card" not in outsider["answer"]
        assert all("pageId=202" not in s["source"] for s in outsider["sources"])
        member = _ask(client, "How do I export the monthly payroll from Ledgerline?", "finance")
        assert "finance smart card" in member["answer"], member
        assert not [
            s
            for s in _ask(client, "What is the Ledgerline key ceremony?", "finance")["sources"]
            if "pageId=203" in s["source"]
        ]

        data_center.restrict("201")  # the handbook opens up; its child follows without a new version
        second = _sync(client, created.json()["id"])
        assert second["status"] == "ok" and second["last_counts"]["permissions_changed"] >= 2, second
        assert (
            "finance smart card"
            in _ask(client, "How do I export the monthly payroll from Ledgerline?", "sales")["answer"]
        )

    assert not [r for r in data_center.requests if r.startswith("/wiki")]  # no v2, no /wiki on Data Center
    assert all(h == f"Bearer {TOKEN}" for h in data_center.auth_headers)
