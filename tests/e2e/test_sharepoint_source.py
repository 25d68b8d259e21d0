"""A SharePoint document library synced through Graph delta, against a Graph-speaking server on 127.0.0.1.

Word, PowerPoint and Excel files go through the same sandboxed parsers as uploads.
"""

from __future__ import annotations

import logging

import pytest

from app.identity import USER_HEADER, make_user_token
from tests.e2e.graph_server import FakeGraph, aad_group, site_group
from tests.e2e.test_confluence_source import _counting, _sync
from tests.office_files import asset_list_xlsx, onboarding_pptx, vpn_howto_docx

pytestmark = pytest.mark.slow

TENANT, CLIENT_ID, SECRET = (
    "contoso.onmicrosoft.com",
    "6731de76-14a6-49ae-97bc-6eba6914391e",
    "Qx8Q~" + "p3r5T7v9X1z3B5d7F9h1K3m5N7q9S1u3",
)
USER_SECRET = "usr-" + "Vb8Nq3Lx6Tz1Rk9Wm4Pc7Hs2Jd5Gf0Ya"


@pytest.fixture
def graph(monkeypatch):
    monkeypatch.setenv("TEST_GRAPH_CLIENT_ID", CLIENT_ID)
    monkeypatch.setenv("TEST_GRAPH_CLIENT_SECRET", SECRET)
    with FakeGraph(tenant=TENANT, client_id=CLIENT_ID, client_secret=SECRET) as server:
        server.put("01A", "VPN token reset.docx", vpn_howto_docx())
        server.put("01B", "Onboarding.pptx", onboarding_pptx())
        server.put("01C", "Assets.xlsx", asset_list_xlsx(), grants=[aad_group("IT Asset Managers")])
        server.put("01D", "logo.png", b"\x89PNG\r\n\x1a\n")  # not a document: never downloaded
        yield server


def _ask(client, message: str, *groups: str) -> dict:
    reply = client.post(
        "/chat", json={"message": message}, headers={USER_HEADER: make_user_token(USER_SECRET, "kim", list(groups))}
    )
    assert reply.status_code == 200, reply.text
    return reply.json()


def test_a_library_syncs_its_office_files_and_follows_delta_changes_and_permissions(serve, graph, caplog):
    caplog.set_level(logging.DEBUG)
    graph.throttle_next = 1
    with serve(kb_dir=None, user_token_secret=USER_SECRET) as client:
        calls = _counting(client)
        created = client.post(
            "/sources",
            json={
                "type": "sharepoint",
                "name": "IT library",
                "base_url": graph.url,
                "scope": {
                    "site": "contoso.sharepoint.com:/sites/IT",
                    "library": "Documents",
                    "tenant": TENANT,
                    "authority": graph.url,
                },
                "credential_env": {"client_id": "TEST_GRAPH_CLIENT_ID", "client_secret": "TEST_GRAPH_CLIENT_SECRET"},
                "group_map": {"Contoso Members": "*", "IT Asset Managers": "it-assets"},
            },
        )
        assert created.status_code == 201, created.text
        source = created.json()

        first = _sync(client, source["id"])
        assert first["status"] == "ok" and first["documents"] == 3, first
        assert not [p for p, _ in graph.requests if p.endswith("/01D/content")]
        docx_url = "https://contoso.sharepoint.com/sites/IT/Shared%20Documents/VPN token reset.docx"
        reply = _ask(client, "How do I reset my Contoso VPN token?")
        assert reply["action"] == "answer" and reply["sources"][0]["source"] == docx_url, reply
        assert "Choose Security, then Reset VPN token" in reply["answer"]
        # the asset list is shared with one group only
        outsider = _ask(client, "Who owns laptop asset LT-1001?", "sales")
        assert "user1" not in outsider["answer"] and all("Assets.xlsx" not in s["source"] for s in outsider["sources"])
        assert "user1" in _ask(client, "Who owns laptop asset LT-1001?", "it-assets")["answer"]

        graph.put("01A", "VPN token reset.docx", vpn_howto_docx(extra_step="Sign out and back in to the VPN client."))
        graph.delete("01B")
        graph.share_only_with("01C", site_group("Contoso Members"))
        calls.clear()
        second = _sync(client, source["id"])
        counts = second["last_counts"]
        assert (counts["updated"], counts["deleted"], counts["permissions_changed"]) == (2, 1, 1), counts
        assert sum(calls) == counts["chunks_embedded"] > 0
        assert second["documents"] == 2
        assert "Sign out and back in" in _ask(client, "How do I reset my Contoso VPN token?")["answer"]
        assert "user1" in _ask(client, "Who owns laptop asset LT-1001?", "sales")["answer"]  # now everyone's
        data_dir = client.app.state.resources.settings.storage.data_dir

    # the bearer token never went to the download host path, and the secret is nowhere deskmate writes
    assert all(auth == "" for path, auth in graph.requests if path.startswith("/download/"))
    for path in data_dir.rglob("*.sqlite*"):
        assert SECRET.encode() not in path.read_bytes()
    assert SECRET not in caplog.text


def test_a_wrong_client_secret_is_reported_on_the_source(serve, graph, monkeypatch):
    monkeypatch.setenv("TEST_GRAPH_CLIENT_SECRET", "not-the-secret")
    with serve(kb_dir=None) as client:
        source = client.post(
            "/sources",
            json={
                "type": "sharepoint",
                "base_url": graph.url,
                "scope": {"site": "contoso.sharepoint.com:/sites/IT", "tenant": TENANT, "authority": graph.url},
                "credential_env": {"client_id": "TEST_GRAPH_CLIENT_ID", "client_secret": "TEST_GRAPH_CLIENT_SECRET"},
            },
        ).json()
        failed = _sync(client, source["id"])
    assert failed["status"] == "error" and "invalid_client" in failed["last_error"], failed
    assert "not-the-secret" not in failed["last_error"]
