"""Word, PowerPoint, Excel and reStructuredText uploads through the real app: real parse sandbox, MiniLM, Chroma."""

from tests.office_files import (
    asset_list_xlsx,
    macro_docm_named_docx,
    onboarding_pptx,
    vpn_howto_docx,
    xlsx_with_external_link,
    zip_bomb_docx,
)

RST = b"Printer jams\n============\n\n.. warning::\n   Switch the printer off first.\n\n#. Open tray 2.\n#. Pull the paper out.\n"


def test_an_uploaded_word_how_to_answers_with_its_steps_and_cites_it(serve):
    with serve(kb_dir=None) as client:
        upload = client.post("/documents?wait=true", files={"file": ("vpn-token.docx", vpn_howto_docx())})
        assert upload.status_code == 201, upload.text
        assert upload.json()["document"]["content_type"] == "docx"
        reply = client.post("/chat", json={"message": "How do I reset my Contoso VPN token?"}).json()
    assert reply["action"] == "answer", reply
    assert reply["sources"][0]["source"] == "uploads/vpn-token.docx"
    assert "Choose Security, then Reset VPN token" in reply["answer"]
    assert "Scan the new QR code" in reply["answer"]


def test_decks_workbooks_and_restructuredtext_are_accepted_and_listed_by_type(serve):
    with serve(kb_dir=None) as client:
        for name, data in {
            "onboarding.pptx": onboarding_pptx(),
            "assets.xlsx": asset_list_xlsx(),
            "printer.rst": RST,
        }.items():
            response = client.post("/documents?wait=true", files={"file": (name, data)})
            assert response.status_code == 201, (name, response.text)
        types = sorted(d["content_type"] for d in client.get("/documents").json()["documents"])
    assert types == ["pptx", "rst", "xlsx"]


def test_hostile_office_files_get_a_clear_4xx_and_change_nothing(serve):
    with serve(kb_dir=None) as client:
        client.post("/documents?wait=true", files={"file": ("assets.xlsx", asset_list_xlsx())})
        before = client.get("/documents").json()
        for name, data, status, words in [
            ("bomb.docx", zip_bomb_docx(), 413, "decompression bomb"),
            ("invoice.docx", macro_docm_named_docx(), 415, "macro-enabled"),
            ("links.xlsx", xlsx_with_external_link(), 422, "external links"),
        ]:
            response = client.post("/documents?wait=true", files={"file": (name, data)})
            assert response.status_code == status and words in response.json()["detail"], (name, response.text)
        assert client.get("/documents").json() == before
