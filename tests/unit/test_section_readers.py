"""Whom a section addresses (core/readers.py), and how the composer gives an employee the user path."""

import pytest

from core.readers import ADMIN_HEADING, READER_SIGNALS, section_reader
from core.records import Block, ParsedDocument, RetrievedChunk
from core.roles import section_role
from nodes.indexing.chunking import chunk_document
from nodes.support.compose import article_sections, choose_target, target_steps


@pytest.mark.parametrize("signal", [ADMIN_HEADING, *READER_SIGNALS], ids=lambda s: s.name)
def test_every_reader_signal_finds_its_own_examples_and_leaves_its_misses(signal):
    for text in signal.matches:
        assert signal.pattern.search(text), text
    for text in signal.misses:
        assert not signal.pattern.search(text), text


@pytest.mark.parametrize(
    ("path", "body", "reader"),
    [
        (["Resolution"], "1. Close Outlook.\n2. Open Outlook again and sign in.", "user"),
        (["Resolution", "For administrators"], "1. Sign in to the admin console.\n2. Reset the user.", "admin"),
        (
            ["Method 2"],
            "Open Registry Editor.\nGo to HKEY_CURRENT_USER\\Software\\Contoso and set Value to 1.",
            "admin",
        ),
        (["Fix"], "Run `Set-Mailbox -Identity a@example.test -Type Shared`.\nThen run `Get-Mailbox`.", "admin"),
        (["Workaround"], "Save the following script as fix.vbs.\nA global administrator must run it.", "admin"),
        (["Resolution"], "If it still fails, contact your administrator.\n1. Restart the laptop.", "user"),
        (
            ["Resolution"],
            "1. Select **Start**, right-click Command Prompt and select **Run as administrator**.",
            "user",
        ),
        ([], "Wi-Fi drops when the laptop sleeps. The Add-in loads at Start-up.", "user"),
    ],
)
def test_a_section_is_for_the_it_team_only_on_admin_headings_or_admin_evidence(path, body, reader):
    assert section_reader(path, body.splitlines()) == reader


def test_indexing_stores_each_sections_reader_on_its_chunks():
    doc = ParsedDocument(
        "Outlook asks for a password",
        "markdown",
        [
            Block("heading", "Outlook asks for a password", 1),
            Block("heading", "Resolution", 2),
            Block("list_item", "Close Outlook.", ordered=True),
            Block("list_item", "Sign out of Office and back in.", ordered=True),
            Block("heading", "Resolution for administrators", 2),
            Block("list_item", "Open the admin center.", ordered=True),
            Block("list_item", "Run Set-CASMailbox -Identity user.", ordered=True),
        ],
    )
    chunks = chunk_document(
        doc, doc_id="d", version="v", source="outlook.md", max_tokens=200, count=lambda t: len(t.split())
    )
    readers = {c["section"]: c["reader"] for c in chunks}
    assert readers == {"Resolution": "user", "Resolution for administrators": "admin"}


def article(parts, readers):
    chunks = []
    for index, (section, text) in enumerate(parts):
        path = section.split(" > ") if section else []
        chunks.append(
            RetrievedChunk(
                chunk_id=f"k-{index}",
                doc_id="k",
                title="BitLocker recovery key",
                source="kb/k.md",
                section=section,
                os="",
                chunk_index=index,
                text=text,
                score=0.0,
                role=section_role(path, text.splitlines()),
                reader=readers.get(section, "user"),
            )
        )
    return chunks


KEY = article(
    [
        ("Symptoms", "Windows asks for the BitLocker recovery key at start-up."),
        ("Resolution", "Try these in order."),
        ("Resolution > Method 1: Find the key in the admin console", "1. Open the admin console.\n2. Search device."),
        ("Resolution > Method 2: Find the key in your account", "1. Sign in to your account page.\n2. Select Keys."),
    ],
    {"Resolution > Method 1: Find the key in the admin console": "admin"},
)


def hit(chunks, section, score):
    return {**next(c for c in chunks if c["section"] == section), "score": score}


def test_an_employee_gets_the_way_they_can_carry_out_and_the_admin_way_is_named_for_it():
    target = choose_target(
        article_sections(KEY),
        [hit(KEY, "Resolution > Method 1: Find the key in the admin console", 0.8)],
        "fix",
        "where is my recovery key",
    )
    assert target_steps(target)[0].startswith("Sign in to your account page")
    assert target.for_it_team == ["Method 1: Find the key in the admin console"]
    assert not target.admin_only


def test_a_section_only_for_admins_is_marked_so():
    only = article([("Resolution", "1. Open the admin console.\n2. Reset the policy.")], {"Resolution": "admin"})
    target = choose_target(article_sections(only), [hit(only, "Resolution", 0.7)], "fix", "reset policy")
    assert target.admin_only


def test_what_an_administrator_may_do_for_the_employee_does_not_make_a_section_admin_only():
    body = "Your administrator can set a storage quota for your account.\nAn administrator can configure a default."
    assert section_reader(["Storage quota"], body.splitlines()) == "user"


def test_an_admin_note_after_the_employees_own_steps_leaves_the_section_theirs():
    body = [
        "1. Select File > Options.",
        "2. Select Trust Center > Trust Center Settings.",
        "3. Clear the Open check box for the file type, and select OK.",
        "Note: these settings can be enforced by a Group Policy Object (GPO). Here's how to open the GPO:",
        "1. Open the Group Policy Management Console.",
        "2. Navigate to User Configuration\\Administrative Templates.",
    ]
    assert section_reader(["Resolution"], body) == "user"
    assert section_reader(["Resolution"], body[3:]) == "admin"
