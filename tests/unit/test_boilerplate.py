"""Boilerplate rows (app/adapters/boilerplate.py): every example of every row, and a page read without its furniture."""

from __future__ import annotations

import pytest

from app.adapters.boilerplate import RULES, is_boilerplate, remove_phrases
from app.adapters.parsers import FileParser, render_plain_text

BLOCK_EXAMPLES = [(r.name, m) for r in RULES if r.kind == "block" for m in r.matches]
PHRASE_EXAMPLES = [(r.name, m) for r in RULES if r.kind == "phrase" for m in r.matches]
KEEPS = [(r.name, k) for r in RULES for k in r.keeps]
RENDERS = [(r.name, source, text) for r in RULES for source, text in r.renders]


@pytest.mark.parametrize(("rule", "paragraph"), BLOCK_EXAMPLES)
def test_a_paragraph_that_is_only_furniture_is_dropped(rule, paragraph):
    assert is_boilerplate(paragraph)


@pytest.mark.parametrize(("rule", "paragraph"), PHRASE_EXAMPLES)
def test_a_reference_to_a_picture_is_cut_from_its_paragraph(rule, paragraph):
    assert remove_phrases(paragraph) != paragraph


@pytest.mark.parametrize(("rule", "paragraph"), KEEPS)
def test_content_that_only_resembles_furniture_is_kept_as_written(rule, paragraph):
    assert not is_boilerplate(paragraph) and remove_phrases(paragraph) == paragraph


@pytest.mark.parametrize(("rule", "source", "text"), RENDERS)
def test_a_paragraph_reads_as_its_row_says(rule, source, text):
    assert remove_phrases(source) == text


def test_a_support_page_reads_without_its_furniture_and_keeps_quoted_messages_and_paths():
    page = (
        b"# Can't open the department share\n\n"
        b"_Original KB number:_ &nbsp; 4051234\n\n"
        b"_Applies to:_ &nbsp; Windows 11, Windows 10\n\n"
        b"## Symptoms\n\n"
        b"When you open the share, you get the following error message, as shown in the following screenshot:\n\n"
        b'"Windows cannot access \\\\\\\\files.example\\\\departments. Error code 0x80070035."\n\n'
        b"## Resolution\n\n"
        b"1. Open File Explorer. The following screenshot shows the address bar.\n"
        b"2. Type `\\\\files.example\\departments` in the address bar.\n\n"
        b"Still need help? Go to [Example Community](https://community.example.test/).\n\n"
        b"Was this page helpful? Yes No\n"
    )
    text = render_plain_text(FileParser().parse("share.md", page))
    for furniture in ("KB number", "4051234", "Applies to", "screenshot", "Still need help", "helpful", "Community"):
        assert furniture not in text
    assert "you get the following error message:" in text
    assert '"Windows cannot access \\\\files.example\\departments. Error code 0x80070035."' in text
    assert "2. Type \\\\files.example\\departments in the address bar." in text
    assert "1. Open File Explorer.\n" in text
