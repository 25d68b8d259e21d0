"""A page on another site cannot act as the admin of a development server (which trusts this machine), and a host
name the server was not configured for is not answered (DNS rebinding). Through the real app, real HTTP stack."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from app.request_origin import allowed_hosts, host_name

PAGE = "http://evil.example"
MARKDOWN = ("a.md", b"# A\n\nSome text about printers.", "text/markdown")


@pytest.fixture
def local(make_settings):
    """A development server (no admin key) and a client on this machine: the loopback trust is in force."""
    from app.main import create_app

    def run(base_url: str = "http://127.0.0.1:8400", **settings):
        return TestClient(
            create_app(make_settings(kb_dir=None, **settings)), client=("127.0.0.1", 40000), base_url=base_url
        )

    return run


def test_an_upload_posted_by_a_page_on_another_site_is_refused_and_nothing_is_indexed(local):
    with local() as client:
        refused = client.post("/documents?wait=true", files={"file": MARKDOWN}, headers={"Origin": PAGE})
        assert refused.status_code == 403 and "another site" in refused.json()["detail"]
        assert client.get("/documents").json()["documents"] == []
        sync = client.post("/sources/abc/sync", headers={"Origin": "null"})  # a sandboxed frame says "null"
        assert sync.status_code == 403
        by_referer = client.post("/documents", files={"file": MARKDOWN}, headers={"Referer": f"{PAGE}/attack.html"})
        assert by_referer.status_code == 403
        deleted = client.delete("/documents/0123456789abcdef", headers={"Origin": PAGE})
        assert deleted.status_code == 403


def test_the_same_origin_and_programs_without_an_origin_keep_working(local):
    with local() as client:
        same = client.post(
            "/documents?wait=true",
            files={"file": MARKDOWN},
            headers={"Origin": "http://127.0.0.1:8400", "Referer": "http://127.0.0.1:8400/admin"},
        )
        assert same.status_code == 201, same.text
        program = client.post("/documents?wait=true", files={"file": ("b.md", b"# B\n\nScanners.", "text/markdown")})
        assert program.status_code == 201
        assert client.get("/documents", headers={"Origin": PAGE}).status_code == 200  # reading is not changing
        behind_proxy = client.post(  # a reverse proxy on another port names the original host
            "/chat",
            json={"message": "printer"},
            headers={"Origin": "https://127.0.0.1:8443", "X-Forwarded-Host": "127.0.0.1:8443"},
        )
        assert behind_proxy.status_code == 200
        # another port on this machine is another origin
        other_port = client.post("/chat", json={"message": "printer"}, headers={"Origin": "http://127.0.0.1:9999"})
        assert other_port.status_code == 403


def test_a_request_carrying_a_credential_is_not_judged_by_its_origin(serve):
    admin_key = "adm-" + "Qx7Lm2Np9Rt4Vw8Zb3Kc6Hf1Js5Dg0Ya"
    with serve(admin_key=admin_key, kb_dir=None) as client:
        sent = client.post(
            "/documents?wait=true",
            files={"file": MARKDOWN},
            headers={"Origin": PAGE, "Authorization": f"Bearer {admin_key}"},
        )
        assert sent.status_code == 201  # a page cannot send this header cross-site without deskmate's consent


def test_a_host_name_the_server_was_not_configured_for_is_refused(local):
    with local(base_url="http://rebound.evil.example:8400") as client:
        refused = client.get("/health")
        assert refused.status_code == 400 and "DESKMATE_ALLOWED_HOSTS" in refused.json()["detail"]
    with local(base_url="http://localhost:8400") as client:
        assert client.get("/health").status_code == 200
    with local(base_url="http://desk.corp.example", allowed_hosts="desk.corp.example") as client:
        assert client.get("/health").status_code == 200
        assert (
            client.post(
                "/chat", json={"message": "printer"}, headers={"Origin": "https://desk.corp.example"}
            ).status_code
            == 200
        )


def test_allowed_hosts_default_to_the_bind_address_and_this_machine():
    assert allowed_hosts("", "127.0.0.1") == {"127.0.0.1", "localhost", "::1"}
    assert allowed_hosts("", "10.0.0.5") == {"10.0.0.5", "127.0.0.1", "localhost", "::1"}
    assert allowed_hosts("", "0.0.0.0") is None  # every interface: the names cannot be guessed
    assert allowed_hosts("Desk.Corp, localhost", "0.0.0.0") == {"desk.corp", "localhost"}
    assert allowed_hosts("*", "127.0.0.1") is None
    assert host_name("[::1]:8000") == "::1" and host_name("LocalHost:80") == "localhost"
