"""A knowledge base written for docs sites, indexed through the real app: the bundled-KB sync with the real
parse sandbox, MiniLM and Chroma. Includes resolve within the folder, fragments are not documents of their
own, and no chunk carries markup."""

from __future__ import annotations

import shutil

import pytest

from tests.conftest import FIXTURES
from tests.unit.test_parsers import MARKUP_RESIDUE

pytestmark = pytest.mark.slow
DOCS_SITES = FIXTURES / "docs_sites"
FRAGMENTS = {
    "kb/learn/includes/vpn-support-disclaimer.md",
    "kb/mkdocs/snippets/driver-warning.md",
    "kb/docusaurus/_partials/live-usb.md",
}


def test_a_docs_site_folder_is_indexed_with_its_includes_resolved_and_no_markup_left(serve, tmp_path):
    kb = tmp_path / "kb"
    shutil.copytree(DOCS_SITES, kb)
    with serve(kb_dir=kb) as client:
        listed = {d["source"]: d for d in client.get("/documents").json()["documents"]}
        assert set(listed) == {
            "kb/learn/reset-vpn-profile.md",
            "kb/mkdocs/printer-queue.md",
            "kb/docusaurus/wifi-setup.md",
            "kb/hugo/password-reset.md",
            "kb/rst-notes.txt",
        }
        assert listed["kb/mkdocs/printer-queue.md"]["title"] == "Clearing a stuck print queue"
        # the original file is still downloadable, though it was indexed with its include resolved
        original = client.get(f"/documents/{listed['kb/learn/reset-vpn-profile.md']['id']}/content")
        assert original.status_code == 200 and original.content == (kb / "learn" / "reset-vpn-profile.md").read_bytes()

        hits = client.post("/search", json={"query": "is the VPN client supported on my personal device"}).json()
        best = hits["results"][0]
        assert best["source"] == "kb/learn/reset-vpn-profile.md"  # the disclaimer lives in the article now
        assert "Important: Brightwave IT supports the VPN client on company-managed devices only." in best["text"]

        steps = client.post("/search", json={"query": "registry key for the VPN profiles error 809 windows"}).json()
        windows = next(h for h in steps["results"] if h["section"] == "Resolution > Windows")
        assert (
            "3. Open Registry Editor and go to the following subkey:\n"
            "   HKEY_CURRENT_USER\\Software\\Brightwave\\VPN\\Profiles\n" in windows["text"]
        )
        assert "\n4. Restart the client and sign in again." in windows["text"]

        chunks = list(client.app.state.resources.index.vector.iter_chunks())
        assert {c["source"] for c in chunks} == set(listed)
        for chunk in chunks:
            found = [m for m in MARKUP_RESIDUE if m in chunk["text"] or m in chunk["section"] or m in chunk["title"]]
            assert not found, (chunk["source"], found, chunk["text"])

    # a fragment indexed on its own earlier (before anything included it) is removed at the next sync
    (kb / "learn" / "reset-vpn-profile.md").write_text("# Reset the VPN profile\n\nQuit the client first.\n")
    with serve(kb_dir=kb) as client:
        sources = {d["source"] for d in client.get("/documents").json()["documents"]}
        assert "kb/learn/includes/vpn-support-disclaimer.md" in sources  # nothing includes it any more
    (kb / "learn" / "reset-vpn-profile.md").write_bytes((DOCS_SITES / "learn" / "reset-vpn-profile.md").read_bytes())
    with serve(kb_dir=kb) as client:
        sources = {d["source"] for d in client.get("/documents").json()["documents"]}
        assert not sources & FRAGMENTS and "kb/learn/reset-vpn-profile.md" in sources


def test_an_uploaded_article_whose_include_is_not_uploaded_with_it_is_indexed_without_it(serve):
    article = b"# Printer\n\nClear the queue.\n\n[!INCLUDE [Disclaimer](../includes/disclaimer.md)]\n"
    with serve(kb_dir=None) as client:
        response = client.post("/documents?wait=true", files={"file": ("printer.md", article)})
        assert response.status_code == 201
        doc_id = response.json()["document"]["id"]
        texts = [c["text"] for c in client.app.state.resources.index.vector.iter_chunks(doc_id)]
        assert texts == ["Clear the queue."]
        assert client.get(f"/documents/{doc_id}/content").content == article  # the original is kept as sent
