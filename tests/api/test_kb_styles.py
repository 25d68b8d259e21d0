"""Knowledge bases in every common style, through the real app (parse sandbox, MiniLM, Chroma, BM25, POST /chat).

tests/fixtures/kb_styles holds one small KB per style: a help centre in Markdown with include and tab macros
(its fragments in `include/`, nested), FAQ pages whose title is the question, a KCS article, a support article
with its furniture (KB number, "applies to", "still need help", picture references) and a UNC path, and a Sphinx
page. Each question is asked in a new conversation; the reply must cite the right file and section, carry the
fix, and read without markup or furniture; GET /search must rank first the article the chat cites.
"""

from __future__ import annotations

import re
import shutil

import pytest

from tests.conftest import FIXTURES

pytestmark = pytest.mark.slow
STYLES = FIXTURES / "kb_styles"
UNC = "\\\\files.brightwave.example\\departments"  # two backslashes, then one

# (question, cited file, cited section or "" for the whole page, words the reply must carry)
QUESTIONS = [
    (
        "how can I turn the sound back on for a chat room I silenced",
        "helpcentre/mute-a-chat-room.md",
        "Unmute a room",
        ["1. Go to Rooms", "2. Open the Muted rooms", "Unmute"],
    ),
    ("my vpn connection drops every 8 hours, why?", "faq/vpn-disconnects.md", "", ["eight hours"]),
    ("can I get the vpn on my personal mobile", "faq/vpn-phone.md", "", ["Brightwave Connect"]),
    (
        "outlook prompts for my password over and over",
        "kcs/outlook-password-prompts.md",
        "Resolution",
        ["Credential Manager", "MicrosoftOffice16_Data"],
    ),
    (
        "how do I map the S: drive for my department",
        "support/map-department-share.md",
        "Resolution",
        [UNC, "Map network drive"],
    ),
    ("sync my work calendar to my android phone", "sphinx/calendar-sync.rst", "Android", ["DAVx5"]),
]
FURNITURE = [
    "KB number",
    "4051234",
    "Applies to",
    "screenshot",
    "Still need help",
    "helpful",
    "{",
    "}",
    "()",
    "<i",
    "!!!",
    ":menuselection:",
    ":kbd:",
    "{{<",
]


def ask(client, message: str) -> dict:
    response = client.post("/chat", json={"message": message})
    assert response.status_code == 200, response.text
    return response.json()


def walk(client, message: str, most: int = 6) -> list[dict]:
    """Ask, then reply "next" while a walkthrough goes on (at most `most` replies in all)."""
    replies = [ask(client, message)]
    while replies[-1]["action"] == "troubleshoot" and len(replies) < most and "last step" not in replies[-1]["answer"]:
        replies.append(ask_in(client, "next", replies[-1]["session_id"]))
    return replies


def ask_in(client, message: str, session_id: str) -> dict:
    response = client.post("/chat", json={"message": message, "session_id": session_id})
    assert response.status_code == 200, response.text
    return response.json()


@pytest.fixture
def styles_kb(tmp_path):
    kb = tmp_path / "kb"
    shutil.copytree(STYLES, kb)
    return kb


def test_every_kb_style_is_answered_from_the_right_section_without_markup_or_furniture(serve, styles_kb):
    with serve(kb_dir=styles_kb) as client:
        sources = {d["source"] for d in client.get("/documents").json()["documents"]}
        assert not any("/include/" in s for s in sources)  # fragments are read inside their pages only
        assert "kb/helpcentre/mute-a-chat-room.md" in sources and len(sources) == 7
        for question, source, section, words in QUESTIONS:
            reply = ask(client, question)
            assert reply["sources"], (question, reply["answer"])
            cited = reply["sources"][0]
            assert cited["source"] == f"kb/{source}", (question, cited)
            if section:
                assert cited["section"].split(" > ")[0] == section, (question, cited)
            for word in words:
                assert word in reply["answer"], (question, word, reply["answer"])
            for mark in FURNITURE:
                assert mark not in reply["answer"].split("\nSources:")[0], (question, mark, reply["answer"])
            ranked = client.get("/search", params={"q": question}).json()["results"]
            assert ranked[0]["source"] == cited["source"], (question, ranked[0]["source"])  # one retrieval


def test_a_nested_include_is_read_inside_its_page(serve, styles_kb):
    with serve(kb_dir=styles_kb) as client:
        hits = client.get("/search", params={"q": "does unmuting bring back sound for earlier messages"}).json()
        best = hits["results"][0]
        assert best["source"] == "kb/helpcentre/mute-a-chat-room.md" and best["section"] == "Unmute a room"
        assert "Tip: Unmuting brings back sound for new messages only" in best["text"]  # two includes deep


def test_a_batch_upload_resolves_includes_among_its_files_and_indexes_only_the_pages(serve):
    folder = STYLES / "helpcentre"
    files = [("files", (str(p.relative_to(folder)), p.read_bytes())) for p in sorted(folder.rglob("*.md"))]
    with serve(kb_dir=None) as client:
        response = client.post("/documents/batch?wait=true", files=files)
        assert response.status_code == 202, response.text
        body = response.json()
        assert body["fragments"] == [
            "include/room-settings-intro.md",
            "include/unmute-steps.md",
            "include/unmute-tip.md",
        ]
        assert list(body["uploads"]) == ["mute-a-chat-room.md"]
        assert body["uploads"]["mute-a-chat-room.md"]["status"] == "new"
        assert [d["source"] for d in client.get("/documents").json()["documents"]] == ["uploads/mute-a-chat-room.md"]
        reply = ask(client, "how can I turn the sound back on for a chat room I silenced")
        assert reply["sources"][0]["source"] == "uploads/mute-a-chat-room.md"
        assert "Open the Muted rooms section" in reply["answer"]


def test_a_batch_with_a_file_type_deskmate_does_not_read_stores_nothing(serve):
    with serve(kb_dir=None) as client:
        files = [("files", ("page.md", b"# Page\n\nText.\n")), ("files", ("tool.exe", b"MZ\x90\x00binary"))]
        response = client.post("/documents/batch?wait=true", files=files)
        assert response.status_code == 415
        assert client.get("/documents").json()["documents"] == []


def test_a_walkthrough_takes_the_steps_for_the_browser_the_employee_names_and_names_the_others(serve, tmp_path):
    kb = tmp_path / "kb"
    shutil.copytree(STYLES / "helpcentre", kb / "helpcentre")
    shutil.copy(FIXTURES / "tabbed_kb" / "desktop-alerts.md", kb / "helpcentre")
    with serve(kb_dir=kb) as client:
        steps = walk(client, "desktop alerts are not working in firefox, not even the test alert")
    first = steps[0]
    assert first["action"] == "troubleshoot" and first["sources"][0]["source"].endswith("helpcentre/desktop-alerts.md")
    assert "3 steps for **Firefox**" in first["answer"] and "also has steps for Chrome, Mobile" in first["answer"]
    shown = "\n".join(r["answer"] for r in steps)
    assert "Open the Firefox menu" in shown and "Privacy & Security" in shown and "reload the tab" in shown
    assert "lock" not in shown and "phone's" not in shown  # the other browsers' and devices' steps are not walked


def test_naming_another_browser_during_a_walkthrough_starts_that_browsers_steps_and_keeps_the_first_to_go_back(
    serve, tmp_path
):
    kb = tmp_path / "kb"
    shutil.copytree(FIXTURES / "tabbed_kb", kb)
    with serve(kb_dir=kb) as client:
        first = ask(client, "desktop alerts are not working in firefox")
        session = first["session_id"]
        chrome = ask_in(client, "sorry, I'm actually on chrome", session)
        after = ask_in(client, "next", session)
        back = ask_in(client, "no wait, it is firefox after all", session)
    assert "3 steps for **Firefox**" in first["answer"]
    assert chrome["action"] == "troubleshoot" and "3 steps for **Chrome** instead" in chrome["answer"]
    assert "Step 1 of 3:** Click the lock icon" in chrome["answer"]
    assert "Step 2 of 3:** Set Notifications and Sound to Allow" in after["answer"]
    assert "Step 1 of 3:** Open the Firefox menu" in back["answer"]


def test_a_docs_site_page_with_content_tabs_walks_the_tab_for_the_employees_computer(serve, tmp_path):
    kb = tmp_path / "kb"
    shutil.copytree(FIXTURES / "tabbed_kb", kb)
    with serve(kb_dir=kb) as client:
        steps = walk(client, "the vpn dropped and won't reconnect on my macbook")
    first = steps[0]
    assert first["action"] == "troubleshoot" and first["sources"][0]["source"].endswith("reconnect-the-vpn.md")
    shown = "\n".join(r["answer"] for r in steps)
    assert "3 steps for **macOS**" in first["answer"] and "also has steps for Windows" in first["answer"]
    assert "===" not in shown and "Choose Quit Connect from the menu bar icon." in shown  # the tab's markup is gone
    assert "System Settings > VPN" in shown and "Start Connect from Launchpad" in shown
    assert "taskbar" not in shown  # the Windows tab is not walked


def test_a_fix_offered_two_ways_walks_the_first_and_goes_on_to_the_second_when_it_did_not_fix_it(serve, tmp_path):
    kb = tmp_path / "kb"
    shutil.copytree(FIXTURES / "tabbed_kb", kb)
    with serve(kb_dir=kb) as client:
        first = ask(client, "my mail app says cannot reach the server")
        session = first["session_id"]
        replies = [ask_in(client, "next", session) for _ in range(3)]
        failed = ask_in(client, "still broken", session)
        everything = ask_in(client, "all steps", session)
        offer = ask_in(client, "still broken", session)
    assert first["action"] == "troubleshoot"
    assert first["sources"][0]["source"].endswith("mail-app-cannot-reach-the-server.md")
    assert "4 steps for **Detect the settings**" in first["answer"]
    assert "another way, **Enter the settings by hand**" in first["answer"]
    assert "Step 1 of 4:** Open the mail app" in first["answer"]
    assert "Step 4 of 4:** Quit the mail app" in replies[-1]["answer"]
    assert "Manual setup" not in "\n".join(r["answer"] for r in [first, *replies])  # the second way is not mixed in
    # the first way's last step did not fix it: the second way, from its first step, instead of a ticket offer
    assert failed["action"] == "troubleshoot" and "didn't fix it" in failed["answer"]
    assert "another way, **Enter the settings by hand** (4 steps)" in failed["answer"]
    assert "Step 1 of 4:** Open the mail app" in failed["answer"] and "technician" not in failed["answer"]
    assert "Manual setup" in everything["answer"] and "mail.example.org" in everything["answer"]
    assert "Detect the settings" not in everything["answer"]  # the way already tried is not offered again
    # the second way did not fix it either: the ticket carries the steps of both ways
    assert "needs a technician" in offer["answer"] and "the 8 steps you tried (2 unsuccessful)" in offer["answer"]


def test_naming_the_other_way_during_the_first_switches_to_it_from_its_first_step(serve, tmp_path):
    kb = tmp_path / "kb"
    shutil.copytree(FIXTURES / "tabbed_kb", kb)
    with serve(kb_dir=kb) as client:
        first = ask(client, "my mail app says cannot reach the server")
        switched = ask_in(client, "detecting didn't work, I'll enter the settings by hand", first["session_id"])
    assert "4 steps for **Enter the settings by hand** instead" in switched["answer"]
    assert "Step 1 of 4:** Open the mail app" in switched["answer"]


def test_a_tab_with_headings_of_its_own_is_a_heading_level_and_a_named_platform_gets_only_its_steps(serve, tmp_path):
    kb = tmp_path / "kb"
    shutil.copytree(FIXTURES / "tabbed_headings_kb", kb)
    with serve(kb_dir=kb) as client:
        doc = next(d for d in client.get("/documents").json()["documents"] if d["source"].endswith("desktop-app.md"))
        sections = [s["section"] for s in client.get(f"/documents/{doc['id']}/sections").json()["sections"]]
        reply = ask(client, "how do I install the desktop app on windows")
        mac = ask(client, "how do I install the desktop app on my mac")
    assert "Install the latest release > Mac > Disk image (recommended)" in sections
    assert "Install the latest release > Windows > Offline installer (for machines without internet)" in sections
    assert not any(s.endswith(("Mac", "Windows", "Linux")) for s in sections)  # no label glued to a section
    assert reply["sources"][0]["section"].startswith("Install the latest release > Windows > "), reply["sources"]
    body = reply["answer"].split("\nSources:")[0]
    assert "QuillnoteSetup.exe" in body and "quillnote-x64.msi" in body
    for other in ("Launchpad", "brew", "apt install", "AppImage", "Trash"):  # no other platform's step
        assert other not in body, (other, body)
    assert mac["sources"][0]["section"].startswith("Install the latest release > Mac > "), mac["sources"]
    body = mac["answer"].split("\nSources:")[0]
    assert "Launchpad" in body and "QuillnoteSetup.exe" not in body and "apt install" not in body


def test_with_no_platform_named_a_tabbed_install_page_walks_one_platforms_steps_and_names_the_others(serve, tmp_path):
    kb = tmp_path / "kb"
    shutil.copytree(FIXTURES / "tabbed_headings_kb", kb)
    with serve(kb_dir=kb) as client:
        answer = ask(client, "how do I install the quillnote desktop app")
        steps = walk(client, "I can't install the quillnote desktop app", most=12)
    platforms = {"macOS": "Launchpad", "Windows": "QuillnoteSetup.exe", "Linux": "apt install"}
    quoted = answer["answer"].split("\nSources:")[0]
    shown = [name for name, word in platforms.items() if word in quoted]
    assert len(shown) == 1, quoted  # one platform's steps, the others offered
    assert f"These are the {shown[0]} steps. If you're on" in quoted
    first = steps[0]
    assert first["action"] == "troubleshoot", first["answer"]
    walked = re.search(r"(\d+) steps for \*\*(macOS|Windows|Linux)\*\*", first["answer"])
    assert walked and int(walked.group(1)) <= 6, first["answer"]  # not the 16 steps of every platform
    assert "The article also has steps for" in first["answer"]
    text = "\n".join(r["answer"] for r in steps)
    assert [name for name, word in platforms.items() if word in text] == [walked.group(2)]
