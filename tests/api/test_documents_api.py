"""POST/GET/DELETE /documents through the real app; a failed upload leaves the index as it was."""

import pytest

from tests.conftest import REPO

GUIDE = b"# Guide\n\n## Steps\n\n1. Open the app.\n2. Click Start.\n"


def _snapshot(client):
    return client.get("/documents").json(), client.get("/ready").json()["chunks"]


def test_upload_list_replace_and_delete(serve):
    with serve(kb_dir=None) as client:
        created = client.post("/documents?wait=true", files={"file": ("guide.md", GUIDE)})
        assert created.status_code == 201 and created.json()["status"] == "new"
        doc = created.json()["document"]
        assert doc["title"] == "Guide" and doc["source"] == "uploads/guide.md" and doc["content_type"] == "markdown"

        same = client.post("/documents?wait=true", files={"file": ("guide.md", GUIDE)})
        assert same.status_code == 200 and same.json()["status"] == "unchanged"

        changed = client.post("/documents?wait=true", files={"file": ("guide.md", GUIDE + b"3. Wait.\n")})
        assert changed.json()["status"] == "replaced" and changed.json()["document"]["id"] == doc["id"]
        assert [d["id"] for d in client.get("/documents").json()["documents"]] == [doc["id"]]

        assert client.delete(f"/documents/{doc['id']}").status_code == 204
        assert client.get("/documents").json()["documents"] == []
        missing = client.delete(f"/documents/{doc['id']}")
        assert missing.status_code == 404 and "GET /documents" in missing.json()["detail"]


def test_every_format_is_accepted(serve):
    files = {
        "a.pdf": (REPO / "kb" / "contact-it-service-desk.pdf").read_bytes(),
        "b.html": b"<html><body><h1>Badges</h1><p>Ask reception.</p></body></html>",
        "c.txt": b"Kiosk\n=====\n\nTap the screen.\n",
        "d.md": GUIDE,
    }
    with serve(kb_dir=None) as client:
        for name, data in files.items():
            response = client.post("/documents?wait=true", files={"file": (name, data)})
            assert response.status_code == 201, (name, response.text)
        types = sorted(d["content_type"] for d in client.get("/documents").json()["documents"])
    assert types == ["html", "markdown", "pdf", "text"]


@pytest.mark.parametrize(
    "name, data, status, words",
    [
        ("notes.docx", b"PK\x03\x04zipzip", 422, "damaged Office file"),
        ("notes.odt", b"PK\x03\x04zipzip", 415, "not supported"),
        ("vpn.adoc", b"= VPN\n\nNOTE: Text {sys:id}\n", 415, "asciidoctor vpn.adoc"),
        ("report.pdf", b"this is plain text", 415, "not a PDF"),
        ("scan.pdf", b"%PDF-1.4\n1 0 obj << >> endobj\ntrailer << >>\n%%EOF", 422, "PDF"),
        ("empty.txt", b"", 422, "empty"),
        ("blank.md", b"\n\n   \n", 422, "No text"),
        ("data.txt", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", 415, "binary"),
    ],
)
def test_bad_uploads_are_refused_clearly_and_change_nothing(serve, name, data, status, words):
    with serve(kb_dir=None) as client:
        client.post("/documents?wait=true", files={"file": ("guide.md", GUIDE)})
        before = _snapshot(client)
        response = client.post("/documents?wait=true", files={"file": (name, data)})
        assert response.status_code == status, response.text
        assert words in response.json()["detail"]
        assert _snapshot(client) == before


def test_oversized_upload_is_413(serve):
    with serve(kb_dir=None, max_upload_bytes=1000) as client:
        response = client.post("/documents?wait=true", files={"file": ("big.md", b"# Big\n\n" + b"word " * 400)})
        assert response.status_code == 413 and "limit" in response.json()["detail"]
        huge = client.post("/documents?wait=true", files={"file": ("huge.md", b"x" * 200_000)})
        # declared far over the limit: refused before it is read, in the same JSON shape as every error
        assert huge.status_code == 413 and "limited to 1,000 bytes" in huge.json()["detail"]
        assert client.get("/documents").json()["documents"] == []


def test_upload_without_a_file_field_is_422(serve):
    with serve(kb_dir=None) as client:
        response = client.post("/documents?wait=true", data={"other": "x"})
    assert response.status_code == 422 and "'file' is required" in response.json()["detail"]
