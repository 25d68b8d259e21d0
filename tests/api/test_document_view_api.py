"""The document view a cited source opens, and what the chat page learns from the server's settings."""

from tests.conftest import REPO


def test_a_cited_source_opens_its_document_section_by_section_with_the_download_beside(serve):
    with serve() as client:
        reply = client.post("/chat", json={"message": "How do I connect to the VPN on my Mac?"}).json()
        source = reply["sources"][0]
        assert source["section"] == "macOS"
        view = client.get(f"/documents/{source['doc_id']}/sections")
        assert view.status_code == 200
        doc = view.json()
        assert doc["title"] == "Connecting to the VPN" and doc["source"] == "kb/vpn-connect.md"
        # in reading order, the cited one among them, each section once
        names = [s["section"] for s in doc["sections"]]
        assert names.index("Windows") < names.index("macOS") < names.index("Linux")
        assert len(names) == len(set(names))
        assert "sudo openconnect" in next(s["text"] for s in doc["sections"] if s["section"] == "Linux")
        assert client.get(doc["download"]).status_code == 200
        page = client.get(f"/view/{source['doc_id']}")
        assert page.status_code == 200 and "script-src 'self'" in page.headers["content-security-policy"]
        assert '<script src="/ui/doc.js"></script>' in page.text


def test_two_sections_of_one_name_are_told_apart_by_the_chunk_a_source_cites(serve, tmp_path):
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "printing.md").write_text(
        "# Printing from the office\n\n## Known problems\n\n"
        "### The printer is offline\n\nThe print queue shows the printer as offline after a power cut.\n\n"
        "### Solution\n\n1. Switch the printer off and on.\n2. Remove and add the printer again.\n\n"
        "### Pages come out blank\n\nEvery page prints blank after a toner change.\n\n"
        "### Solution\n\n1. Pull the sealing tape out of the new toner cartridge.\n2. Print a cleaning page.\n"
    )
    with serve(kb_dir=str(kb)) as client:
        reply = client.post("/chat", json={"message": "every page prints blank after I changed the toner"}).json()
        source = reply["sources"][0]
        sections = client.get(f"/documents/{source['doc_id']}/sections").json()["sections"]
        solutions = [s for s in sections if s["section"] == "Known problems > Solution"]
        assert len(solutions) == 2 and all(s["chunk_ids"] for s in solutions)
        assert not set(solutions[0]["chunk_ids"]) & set(solutions[1]["chunk_ids"])
        every = [chunk for s in sections for chunk in s["chunk_ids"]]
        assert source["chunk_id"] in every and len(every) == len(set(every))


def test_an_unknown_document_view_is_a_404_that_says_where_the_ids_are(serve):
    with serve(kb_dir=None) as client:
        missing = client.get("/documents/0123456789abcdef/sections")
        assert missing.status_code == 404 and "GET /documents lists the ids" in missing.json()["detail"]
        assert client.get("/documents/not-an-id/sections").status_code == 404


def test_the_chat_page_gets_one_limit_and_no_outage_question_without_a_status_page(serve):
    with serve(kb_dir=None, max_message_chars=1234) as client:
        config = client.get("/ui-settings").json()
        assert config["max_message_chars"] == 1234 and config["status_page"] is False
        assert "Is there an outage?" not in config["suggestions"] and config["suggestions"]
        refused = client.post("/chat", json={"message": "x" * 1235})
        assert refused.status_code == 422 and "the limit is 1,234" in refused.json()["detail"]


def test_with_a_status_page_the_outage_question_is_suggested(serve):
    with serve(kb_dir=None, status_page_url="http://127.0.0.1:9") as client:
        config = client.get("/ui-settings").json()
        assert config["status_page"] is True and "Is there an outage?" in config["suggestions"]


def test_the_chat_page_has_no_hard_coded_limit_or_suggestions():
    page = (REPO / "app" / "ui" / "static" / "chat.html").read_text()
    assert "maxlength" not in page and "Is there an outage?" not in page
