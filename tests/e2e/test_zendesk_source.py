"""Zendesk Guide articles synced through the real app against a Help Center API server on 127.0.0.1."""

from __future__ import annotations

import pytest

from app.identity import USER_HEADER, make_user_token
from tests.e2e.test_confluence_source import _counting, _sync
from tests.e2e.zendesk_server import FakeZendesk

pytestmark = pytest.mark.slow

EMAIL, TOKEN = "agent@example.com", "zd-" + "Hq7Wm2Xp9Lk4Tz6Rb1Nc8Vf3"
USER_SECRET = "usr-" + "Vb8Nq3Lx6Tz1Rk9Wm4Pc7Hs2Jd5Gf0Ya"
KIOSK = (
    "<p>Visitor kiosks print a Saltmarsh badge.</p><h2>Print a visitor badge</h2>"
    "<ol><li>Tap Visitor on the kiosk.</li><li>Scan the QR code from the invitation email.</li></ol>"
)
ROTA = "<p>The Saltmarsh on-call engineer this week answers on extension 7781.</p>"


def _ask(client, message: str, *groups: str) -> dict:
    return client.post(
        "/chat", json={"message": message}, headers={USER_HEADER: make_user_token(USER_SECRET, "ana", list(groups))}
    ).json()


def test_guide_articles_sync_incrementally_and_user_segments_become_audiences(serve, monkeypatch):
    monkeypatch.setenv("TEST_ZD_EMAIL", EMAIL)
    monkeypatch.setenv("TEST_ZD_TOKEN", TOKEN)
    with FakeZendesk(email=EMAIL, token=TOKEN) as zendesk, serve(kb_dir=None, user_token_secret=USER_SECRET) as client:
        zendesk.segment(11, "Signed-in users")
        zendesk.segment(12, "IT staff", user_type="staff", group_ids=[900])
        zendesk.publish(101, "Print a visitor badge", KIOSK, segment=11)
        zendesk.publish(102, "On-call rota", ROTA, segment=12)
        zendesk.publish(103, "Old VPN client", "<p>Retired client notes.</p>")
        zendesk.throttle_next = 1
        calls = _counting(client)
        created = client.post(
            "/sources",
            json={
                "type": "zendesk",
                "base_url": zendesk.url,
                "scope": {},
                "credential_env": {"email": "TEST_ZD_EMAIL", "token": "TEST_ZD_TOKEN"},
                "group_map": {"IT staff": "it-staff"},
            },
        )
        assert created.status_code == 201, created.text
        source = created.json()

        first = _sync(client, source["id"])
        assert first["status"] == "ok" and first["documents"] == 3, first
        reply = _ask(client, "How do I print a visitor badge at the kiosk?")
        assert reply["sources"][0]["source"] == f"{zendesk.url}/hc/en-us/articles/101", reply
        assert "Scan the QR code" in reply["answer"]
        assert "7781" not in _ask(client, "Who is the Saltmarsh on-call engineer?", "sales")["answer"]
        assert "7781" in _ask(client, "Who is the Saltmarsh on-call engineer?", "it-staff")["answer"]

        zendesk.edit(101, KIOSK.replace("Tap Visitor on the kiosk.", "Tap Guest arrival on the kiosk."))
        zendesk.archive(103)
        calls.clear()
        second = _sync(client, source["id"])
        counts = second["last_counts"]
        assert (counts["updated"], counts["deleted"]) == (1, 1) and second["documents"] == 2, counts
        assert sum(calls) == counts["chunks_embedded"] > 0
        assert "Tap Guest arrival" in _ask(client, "How do I print a visitor badge at the kiosk?")["answer"]
