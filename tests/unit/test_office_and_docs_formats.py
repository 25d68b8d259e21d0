"""Word, PowerPoint, Excel and reStructuredText read into blocks; hostile packages refused before any library opens them."""

import pytest

from app.adapters.parsers import FileParser, render_plain_text
from core.errors import DocumentRejected
from tests.office_files import (
    asset_list_xlsx,
    macro_docm_named_docx,
    onboarding_pptx,
    rewrite_package,
    vpn_howto_docx,
    xlsx_with_external_link,
    zip_bomb_docx,
)

PARSER = FileParser()


def test_a_word_how_to_keeps_its_headings_numbered_steps_nested_bullets_table_and_alt_text():
    document = PARSER.parse("vpn-token.docx", vpn_howto_docx())
    text = render_plain_text(document)
    assert document.title == "Reset the Contoso VPN token" and document.content_type == "docx"
    assert "# Steps" in text and "## Token lifetimes" in text
    # the bullet under step 2 is nested, and the numbering carries on after it
    assert "2. Choose Security, then Reset VPN token.\n   - Keep the old token" in text
    assert "3. Scan the new QR code" in text
    assert "Staff | 90 days" in text
    assert "Security tab lists the Reset VPN token button" in text


def test_a_slide_deck_is_one_section_per_slide_with_its_bullets_and_speaker_notes():
    document = PARSER.parse("onboarding.pptx", onboarding_pptx())
    headings = [b.text for b in document.blocks if b.kind == "heading"]
    assert document.title == "New starter IT onboarding"
    assert headings == ["New starter IT onboarding", "Your laptop", "Who to call"]
    text = render_plain_text(document)
    assert "- Collect it from the IT bar on level 2\n   - Bring your badge" in text
    assert "Speaker notes: Remind them that BitLocker recovery keys are in the portal." in text
    assert "Service desk | 4357" in text


def test_a_workbook_is_one_section_per_sheet_with_rows_as_records_under_their_headers():
    document = PARSER.parse("assets.xlsx", asset_list_xlsx())
    assert document.title == "Assets"
    assert [b.text for b in document.blocks if b.kind == "heading"] == ["Laptops", "On-call rota"]
    records = [b.text for b in document.blocks if b.kind == "list_item"]
    assert "Asset tag: LT-1001; Model: ThinkPad T14; Owner: user1" in records
    assert "Week: 2026-W48; Engineer: Dana; Phone: +44 20 7946 0000" in records


def test_a_workbook_over_the_cell_cap_is_refused_with_a_way_out(monkeypatch):
    monkeypatch.setattr("app.adapters.office_reader.MAX_SHEET_CELLS", 50)
    with pytest.raises(DocumentRejected) as refused:
        PARSER.parse("assets.xlsx", asset_list_xlsx(rows=40))
    assert refused.value.kind == "too_large" and "Split it" in refused.value.reason


@pytest.mark.parametrize(
    "name, make, kind, words",
    [
        ("bomb.docx", zip_bomb_docx, "too_large", "decompression bomb"),
        ("invoice.docx", macro_docm_named_docx, "unsupported_type", "macro-enabled"),
        ("assets.xlsx", xlsx_with_external_link, "unparseable", "Break Link"),
        ("assets.docx", asset_list_xlsx, "unsupported_type", "rename it to .xlsx"),
        ("old.doc.docx", lambda: b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\0" * 600, "unsupported_type", "legacy"),
        ("notes.docx", lambda: b"PK\x03\x04zipzip", "unparseable", "damaged"),
        ("notes.md", asset_list_xlsx, "unsupported_type", "ZIP package"),
    ],
)
def test_hostile_or_mislabelled_office_files_are_refused_with_an_actionable_reason(name, make, kind, words):
    with pytest.raises(DocumentRejected) as refused:
        PARSER.parse(name, make())
    assert refused.value.kind == kind and words in refused.value.reason


def test_a_package_with_thousands_of_parts_is_refused_before_it_is_opened(monkeypatch):
    monkeypatch.setattr("app.adapters.office_reader.MAX_PARTS", 20)
    many = rewrite_package(vpn_howto_docx(), add={f"word/media/x{i}.bin": b"x" for i in range(30)})
    with pytest.raises(DocumentRejected) as refused:
        PARSER.parse("many.docx", many)
    assert refused.value.kind == "too_large" and "parts" in refused.value.reason


RST = b"""
Reset your VPN token
====================

See :ref:`the token policy <token-policy>` first, and press :kbd:`Ctrl+R`.

.. note::
   Tokens expire after 90 days.

.. include:: /etc/passwd

.. raw:: html

   <script>alert(1)</script>

Steps
-----

#. Open the portal.
#. Run the reset:

   .. code-block:: bash

      vpnctl reset --user me

.. tabs::

   .. tab:: Windows

      Use the tray icon.

.. seealso:: The MFA guide.

.. toctree::

   other-page
"""


def test_restructuredtext_directives_become_plain_sections_and_never_read_files():
    document = PARSER.parse("vpn.rst", RST)
    text = render_plain_text(document)
    assert document.title == "Reset your VPN token" and document.content_type == "rst"
    assert "See the token policy first, and press Ctrl+R." in text
    assert "Note: Tokens expire after 90 days." in text
    assert "2. Run the reset:" in text and "vpnctl reset --user me" in text
    assert "Windows: Use the tray icon." in text and "See also: The MFA guide." in text
    assert "root:" not in text and "script" not in text and "other-page" not in text
