"""Hostile input through the real app (real MiniLM, real Chroma, real parse workers).

Uploads: damaged, looping and bomb-like PDFs, a parser that hangs or crashes; each is refused with a
readable 4xx or safely indexed, within the time limit, the index exactly as before a refusal, and the
service still healthy after all of them. Downloads: originals only as attachments that cannot run;
uploaded HTML only as sanitised text. Chat bodies: not UTF-8, nested, invisible characters, limits.
"""

from __future__ import annotations

from contextlib import contextmanager

import pytest
from fastapi.testclient import TestClient

from app.adapters.parse_sandbox import SandboxedParser
from tests.conftest import FIXTURES, REPO
from tests.unit.test_parse_sandbox import MisbehavingParser, deflate_bomb_pdf, many_pages_pdf

GUIDE = b"# Guide\n\n## Steps\n\n1. Open the app.\n2. Click Start.\n"
HOSTILE_HTML = (
    b"<html><head><title>Badges</title><script>document.location='https://evil.example'</script></head>"
    b'<body onload="steal()"><h1>Door badges</h1><p onclick="alert(1)">Ask <a href="javascript:'
    b'alert(2)">reception</a> for a new badge.</p><img src=x onerror="alert(3)">'
    b"<p>&lt;script&gt;alert(4)&lt;/script&gt;Bring photo ID.</p></body></html>"
)


def _snapshot(client) -> tuple:
    return client.get("/documents").json(), client.get("/ready").json()["chunks"]


def _stored_uploads(settings) -> list[str]:
    """The uploaded originals deskmate keeps (in its database), as "<doc id>-<file name>"."""
    from app.storage import Database, database_url_for
    from app.storage.schema import document_originals

    database = Database.open(database_url_for(settings), migrate=False)
    try:
        with database.connect() as conn:
            rows = conn.execute(document_originals.select()).mappings().all()
    finally:
        database.close()
    return sorted(f"{row['doc_id']}-{row['filename']}" for row in rows)


@contextmanager
def _app_with_parser(make_settings, parser):
    from app.main import create_app

    settings = make_settings(kb_dir=None)
    with TestClient(create_app(settings, parser=parser), base_url="http://localhost") as client:
        yield client, settings


@pytest.mark.slow
def test_hostile_pdfs_are_refused_clearly_or_indexed_and_the_service_stays_up(serve, make_settings):
    uploads = [(p.name, p.read_bytes()) for p in sorted((FIXTURES / "hostile_pdfs").glob("*.pdf"))]
    uploads += [
        ("bomb.pdf", deflate_bomb_pdf()),
        ("pages.pdf", many_pages_pdf(2100)),
        ("fake.pdf", b"MZ\x90\x00 an executable"),
        ("loop.html", b"<html>" + b"<div>" * 50_000),
    ]
    # a parse time limit a loaded machine cannot reach by accident: a refusal here comes from what the file is
    # (2,100 pages → 413), never from the box being slow (the 5 s default would make it a 422 under load)
    settings = make_settings(kb_dir=None, parse_timeout_s=30)
    statuses: dict[str, int] = {}
    with serve(settings) as client:
        assert client.post("/documents?wait=true", files={"file": ("guide.md", GUIDE)}).status_code == 201
        for name, data in uploads:
            before, stored_before = _snapshot(client), _stored_uploads(settings)
            # bounded by the sandbox's parse timeout: a file it cannot read in time is refused, never waited for
            response = client.post("/documents?wait=true", files={"file": (name, data, "application/pdf")})
            statuses[name] = response.status_code
            assert response.status_code in (200, 201, 413, 415, 422), (name, response.text)
            if response.status_code >= 400:
                detail = response.json()["detail"]
                assert name in detail and len(detail) > 40, (name, detail)
                assert _snapshot(client) == before, name  # the index is exactly as it was
                assert _stored_uploads(settings) == stored_before, name
            else:
                assert response.json()["document"]["source"] == f"uploads/{name}"
        assert client.get("/health").json() == {"status": "ok"}
        assert client.get("/ready").json()["status"] == "ready"
        assert client.post("/chat", json={"message": "how do I open the app"}).status_code == 200
    assert statuses["bad1.pdf"] == 415 and statuses["fake.pdf"] == 415
    assert statuses["pages-loop.pdf"] == statuses["broken-lzw.pdf"] == statuses["bomb.pdf"] == 422
    assert statuses["pages.pdf"] == 413
    assert statuses["outlines-with-loop.pdf"] == 201  # damaged, but its text is readable


@pytest.mark.slow
def test_a_hanging_or_crashing_parse_is_refused_and_the_next_upload_works(make_settings):
    parser = SandboxedParser(MisbehavingParser, timeout_s=1, memory_mb=256)
    with _app_with_parser(make_settings, parser) as (client, settings):
        assert client.post("/documents?wait=true", files={"file": ("guide.md", GUIDE)}).status_code == 201
        before = _snapshot(client)
        hung = client.post("/documents?wait=true", files={"file": ("hang-notes.md", GUIDE + b"3. More.\n")})
        assert hung.status_code == 422 and "took longer than 1 s to read" in hung.json()["detail"]
        crashed = client.post("/documents?wait=true", files={"file": ("crash-notes.md", GUIDE + b"4. More.\n")})
        assert crashed.status_code == 422 and "stopped unexpectedly" in crashed.json()["detail"]
        hog = client.post("/documents?wait=true", files={"file": ("hog-notes.md", GUIDE + b"5. More.\n")})
        assert hog.status_code == 422 and "256 MB of memory" in hog.json()["detail"]
        guide_id = before[0]["documents"][0]["id"]
        assert _snapshot(client) == before and _stored_uploads(settings) == [f"{guide_id}-guide.md"]
        assert (
            client.post("/documents?wait=true", files={"file": ("after.md", b"# After\n\nStill works.\n")}).status_code
            == 201
        )
        assert client.get("/health").json() == {"status": "ok"}
    assert parser.worker_pids() == []  # the app's shutdown stopped the workers


@pytest.mark.slow
def test_uploaded_html_comes_back_only_as_sanitised_text(serve):
    with serve(kb_dir=None) as client:
        created = client.post("/documents?wait=true", files={"file": ("badges.html", HOSTILE_HTML, "text/html")})
        assert created.status_code == 201, created.text
        doc_id = created.json()["document"]["id"]
        response = client.get(f"/documents/{doc_id}/content")
        reply = client.post("/chat", json={"message": "how do I get a new door badge"}).json()
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/plain; charset=utf-8"
    assert response.headers["content-disposition"] == 'attachment; filename="badges.txt"'
    assert response.headers["x-content-type-options"] == "nosniff"
    assert "sandbox" in response.headers["content-security-policy"]
    body = response.text
    assert body.startswith("# Door badges\n") and "Ask reception for a new badge." in body and "Bring photo ID." in body
    for payload in ("<", "script", "alert", "steal", "onload", "onerror", "javascript"):
        assert payload not in body, payload
        assert payload not in reply["answer"], payload


@pytest.mark.slow
def test_pdf_and_markdown_originals_are_served_as_downloads_that_cannot_run(serve):
    pdf = (REPO / "kb" / "contact-it-service-desk.pdf").read_bytes()
    with serve() as client:
        pdf_id = client.post("/documents?wait=true", files={"file": ("desk.pdf", pdf)}).json()["document"]["id"]
        md_id = client.post("/documents?wait=true", files={"file": ("guide.md", GUIDE)}).json()["document"]["id"]
        pdf_response = client.get(f"/documents/{pdf_id}/content")
        md_response = client.get(f"/documents/{md_id}/content")
        kb_doc = next(d for d in client.get("/documents").json()["documents"] if d["source"] == "kb/vpn-connect.md")
        kb_response = client.get(f"/documents/{kb_doc['id']}/content")
        missing = client.get("/documents/0123456789abcdef/content")
        bad_id = client.get("/documents/..%2F..%2Fetc%2Fpasswd/content")
    assert pdf_response.status_code == 200 and pdf_response.content == pdf
    assert pdf_response.headers["content-type"] == "application/pdf"
    assert pdf_response.headers["content-disposition"] == 'attachment; filename="desk.pdf"'
    assert pdf_response.headers["x-content-type-options"] == "nosniff"
    assert md_response.content == GUIDE and md_response.headers["content-type"] == "text/markdown; charset=utf-8"
    assert kb_response.status_code == 200 and kb_response.content == (FIXTURES / "kb" / "vpn-connect.md").read_bytes()
    assert missing.status_code == 404 and "GET /documents" in missing.json()["detail"]
    assert bad_id.status_code == 404


@pytest.mark.slow
def test_a_chunked_upload_without_content_length_meets_the_streaming_body_limit(serve):
    def body():  # no Content-Length header: only a limit that counts arriving bytes can stop this
        yield b'--B\r\nContent-Disposition: form-data; name="file"; filename="big.md"\r\n\r\n# Big\n\n'
        for _ in range(20):
            yield b"word " * 50_000
        yield b"\r\n--B--\r\n"

    with serve(kb_dir=None, max_upload_bytes=100_000) as client:
        response = client.post(
            "/documents?wait=true", content=body(), headers={"content-type": "multipart/form-data; boundary=B"}
        )
        assert response.status_code == 413
        assert "larger than the 100,000-byte upload limit" in response.json()["detail"]
        assert client.get("/documents").json()["documents"] == []


# --- chat bodies ------------------------------------------------------------------------------------
@pytest.mark.slow
def test_hostile_chat_bodies_get_a_clear_422_and_the_service_keeps_answering(serve):
    json_header = {"content-type": "application/json"}
    with serve(max_message_chars=50) as client:
        latin1 = client.post("/chat", content='{"message": "caf\u00e9 wifi"}'.encode("latin-1"), headers=json_header)
        garbage = client.post("/chat", content=b'{"message": "\xff\xfe\xfa"}', headers=json_header)
        nested = client.post(
            "/chat", content=b'{"message": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", headers=json_header
        )
        too_long = client.post("/chat", json={"message": "w" * 51})
        at_limit = client.post("/chat", json={"message": "how do I connect to the vpn " + "?" * 22})
        invisible = client.post("/chat", json={"message": "\u200b\u202e\ufeff \u2066 \u0085"})
        wrong_type = client.post("/chat", json={"message": ["how", "do", "I"]})
        not_object = client.post("/chat", json=["how do I connect to the vpn"])
        surrogate = client.post("/chat", content=b'{"message": "vpn \\ud800 help"}', headers=json_header)
        joiners = client.post("/chat", json={"message": "\u200c\u200d\u00ad\u0301\U000e0041"})
        empty_body = client.post("/chat", content=b"", headers=json_header)
        huge_number = client.post(
            "/chat", content=b'{"message": "vpn", "debug": ' + b"9" * 5000 + b"}", headers=json_header
        )
        health = client.get("/health")
    assert joiners.status_code == 422 and "empty" in joiners.json()["detail"]
    assert empty_body.status_code == 422 and "body is empty" in empty_body.json()["detail"]
    assert huge_number.status_code == 422 and "number too long" in huge_number.json()["detail"]
    for response in (latin1, garbage):
        assert response.status_code == 422 and "not valid UTF-8" in response.json()["detail"]
    assert nested.status_code == 422 and nested.json()["detail"]
    assert too_long.status_code == 422 and "limit is 50" in too_long.json()["detail"]
    assert at_limit.status_code == 200
    assert invisible.status_code == 422 and "empty" in invisible.json()["detail"]
    assert wrong_type.status_code == 422 and "message" in wrong_type.json()["detail"]
    assert not_object.status_code == 422
    assert surrogate.status_code == 200, surrogate.text
    assert health.json() == {"status": "ok"}


def test_different_file_names_never_replace_each_others_documents(serve):
    names = [
        "Пароль.md",
        "日本語.md",
        "Ελληνικά.md",
        "report (1).md",
        "report [1].md",
        "a" * 200 + "-finance.md",
        "a" * 200 + "-hr.md",
    ]
    with serve(kb_dir=None) as client:
        sources = []
        for n, name in enumerate(names):
            reply = client.post(
                "/documents?wait=true", files={"file": (name, f"# Topic {n}\n\nZebraword{n} lives here.\n".encode())}
            )
            assert reply.status_code == 201 and reply.json()["status"] == "new", (name, reply.text)
            sources.append(reply.json()["document"]["source"])
        assert len(set(sources)) == len(names)
        assert "uploads/Пароль.md" in sources and "uploads/日本語.md" in sources  # letters of every script kept
        listed = client.get("/documents").json()["documents"]
        assert len(listed) == len(names)
        # the same name again replaces its own document, not another one
        again = client.post(
            "/documents?wait=true", files={"file": ("report (1).md", b"# Topic 3\n\nZebraword3 moved.\n")}
        )
        assert again.json()["status"] == "replaced" and again.json()["document"]["source"] == sources[3]
        russian = next(d["id"] for d in listed if d["source"] == "uploads/Пароль.md")
        download = client.get(f"/documents/{russian}/content")
        assert download.status_code == 200 and "Zebraword0" in download.text
        assert download.headers["content-disposition"] == (
            "attachment; filename=\"______.md\"; filename*=UTF-8''%D0%9F%D0%B0%D1%80%D0%BE%D0%BB%D1%8C.md"
        )


def test_odd_but_valid_text_files_are_indexed_not_refused(serve):
    indented = ("Printer notes\n\nThe queue restarts nightly.\n" + " " * 202 + "- aligned note\n").encode()
    notepad = "# Drucker\n\nDrücken Sie zweimal auf Freigeben.\n".encode("utf-16")  # Notepad's "Unicode"
    with serve(kb_dir=None) as client:
        for name, data in (("indented.txt", indented), ("drucker.md", notepad)):
            reply = client.post("/documents?wait=true", files={"file": (name, data)})
            assert reply.status_code == 201, (name, reply.text)
        hits = client.post("/search", json={"query": "Drücken Sie zweimal"}).json()["results"]
        assert hits and hits[0]["source"] == "uploads/drucker.md"
