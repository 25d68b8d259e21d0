"""ServiceNow knowledge articles synced through the real app against a Table API server on 127.0.0.1."""

from __future__ import annotations

from urllib.parse import unquote_plus

import pytest

from tests.e2e.servicenow_server import FakeServiceNow
from tests.e2e.test_confluence_source import _counting, _sync

pytestmark = pytest.mark.slow

USER, PASSWORD = "deskmate.integration", "Sn0w-" + "q8Rz2Lm5Tx9Vb3Kp"
DISPLAY = (
    "<p>The Orrery conference displays are in every meeting room.</p><h2>Share your screen</h2>"
    "<ol><li>Press the Orrery button on the table.</li><li>Choose your laptop in the share list.</li></ol>"
)


def test_published_articles_sync_with_their_kb_links_and_retirements_remove_them(serve, monkeypatch):
    monkeypatch.setenv("TEST_SN_USER", USER)
    monkeypatch.setenv("TEST_SN_PASSWORD", PASSWORD)
    with FakeServiceNow(user=USER, password=PASSWORD) as instance, serve(kb_dir=None) as client:
        display = instance.publish("KB0010001", "Share your screen on an Orrery display", DISPLAY)
        printer = instance.publish("KB0010002", "Add the Wren printer", "<p>Open Settings, Printers, Add Wren-2.</p>")
        instance.publish("KB0010003", "HR onboarding checklist", "<p>Other knowledge base.</p>", kb="kb-hr")
        instance.publish(
            "KB0010004",
            "Vault recovery codes",
            "<p>The Quillon vault recovery codes are kept by IT.</p>",
            can_read="0a52d3dcd7011200f2d224837e6103f2",
        )
        calls = _counting(client)
        created = client.post(
            "/sources",
            json={
                "type": "servicenow",
                "base_url": instance.url,
                "scope": {"knowledge_bases": ["kb-it"]},
                "credential_env": {"user": "TEST_SN_USER", "password": "TEST_SN_PASSWORD"},
            },
        )
        assert created.status_code == 201, created.text
        source = created.json()

        first = _sync(client, source["id"])
        assert first["status"] == "ok" and first["documents"] == 2, first
        assert first["last_counts"]["withheld"] == 1  # user criteria: not indexed for everyone
        vault = client.post("/chat", json={"message": "Where are the Quillon vault recovery codes?"}).json()
        assert "KB0010004" not in str(vault["sources"]) and "kept by IT" not in vault["answer"]
        reply = client.post("/chat", json={"message": "How do I share my screen on the Orrery display?"}).json()
        assert reply["sources"][0]["source"] == f"{instance.url}/kb_view.do?sysparm_article=KB0010001", reply
        assert "Press the Orrery button" in reply["answer"]

        instance.edit(
            display, DISPLAY.replace("Press the Orrery button on the table.", "Tap Share on the Orrery touch panel.")
        )
        instance.retire(printer)
        calls.clear()
        second = _sync(client, source["id"])
        counts = second["last_counts"]
        assert (counts["updated"], counts["deleted"]) == (1, 1) and second["documents"] == 1, counts
        assert sum(calls) == counts["chunks_embedded"] > 0
        assert any("sys_updated_on>=2026-11-25 09:00" in unquote_plus(r) for r in instance.requests)  # incremental
        reply = client.post("/chat", json={"message": "How do I share my screen on the Orrery display?"}).json()
        assert "Tap Share on the Orrery touch panel" in reply["answer"], reply
