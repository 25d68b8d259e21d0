"""Every markup rule's own examples: what its pattern must and must not match, and what a reader gets."""

from __future__ import annotations

import pytest

from app.adapters.markup_rules import RULES, image_text, note_label
from app.adapters.parsers import FileParser, render_plain_text

parser = FileParser()


def _examples(field: str):
    return [
        pytest.param(rule, example, id=f"{rule.name}: {example[:40]!r}")
        for rule in RULES
        for example in getattr(rule, field)
    ]


def test_every_rule_has_examples_on_both_sides_and_a_rendering():
    for rule in RULES:
        assert rule.matches and rule.not_matches and rule.renders, rule.name
    assert len({rule.name for rule in RULES}) == len(RULES)


@pytest.mark.parametrize("rule, example", _examples("matches"))
def test_a_rule_matches_its_examples(rule, example):
    assert rule.finds(example)


@pytest.mark.parametrize("rule, example", _examples("not_matches"))
def test_a_rule_leaves_its_counter_examples_alone(rule, example):
    assert not rule.finds(example)


@pytest.mark.parametrize(
    "rule, case",
    [pytest.param(rule, case, id=f"{rule.name}: {case[0][:40]!r}") for rule in RULES for case in rule.renders],
)
def test_a_rule_renders_as_a_reader_should_see_it(rule, case):
    source, expected = case
    for name in ("example.md", "example.txt"):
        if name.endswith(".txt") and rule.stage == "paragraph" and "   >" in source:
            continue  # an alert indented under a step is Markdown structure plain text does not have
        document = parser.parse(name, source.encode())
        seen = "\n".join(line for line in render_plain_text(document).splitlines()) if document.blocks else ""
        if name.endswith(".txt"):
            seen, expected = _flat(seen), _flat(expected)
        assert seen.strip() == expected.strip(), (name, source)


def _flat(text: str) -> str:
    """Plain text files have no '#' headings and do not indent code: compare the words that are left."""
    return " ".join(word for word in text.split() if not set(word) <= {"#"})


@pytest.mark.parametrize(
    "alt, kept",
    [
        ("Select the Online Repair option to repair Office.", True),
        ("Microsoft SharePoint shows as a background process.", True),
        ("Screenshot of the Force Quit Applications window.", False),
        ("Screenshot shows the add shared folder entry.", False),
        ("The screen on which the option to add a sender is displayed.", False),
        ("An image of the router's status lights.", False),
        ("msconfig safemode", False),
        ("media/vpn/connect-button.png", False),
        ("", False),
    ],
)
def test_image_alt_text_is_kept_only_when_it_says_something(alt, kept):
    assert (image_text(alt) == alt and alt != "") is kept
    assert image_text(alt, "icon") == ""


def test_note_kinds_read_as_labels():
    assert [note_label(k) for k in ("NOTE", "warning", "hint", "seealso", "gotcha-alert")] == [
        "Note",
        "Warning",
        "Tip",
        "See also",
        "Gotcha alert",
    ]


def test_every_line_a_rule_matches_reaches_the_rules():
    from app.adapters.markup import _may_need_rules  # the engine's quick test that skips ordinary lines

    for rule in RULES:
        if rule.stage in ("block", "line"):
            assert all(_may_need_rules(example) for example in rule.matches), rule.name


def test_an_image_whose_alt_text_is_a_link_or_a_file_name_leaves_no_markup():
    doc = parser.parse(
        "x.md",
        b"See the comic: ![[XKCD 936](https://xkcd.com/936/)](https://imgs.example/p.png)\n\n"
        b"![Windows 11-2021-10-05-15-20-37.png](../assets/w.webp)\n",
    )
    assert [b.text for b in doc.blocks] == ["See the comic: XKCD 936 (https://xkcd.com/936/)"]


def test_a_path_in_a_code_span_keeps_every_backslash_and_escapes_outside_still_work():
    from app.adapters.markup import clean_inline

    assert (
        clean_inline(r"type `\\files.example\departments` in the box") == r"type \\files.example\departments in the box"
    )
    assert clean_inline(r"`\\srv\home\<username>`") == r"\\srv\home\<username>"
    assert clean_inline(r"a \*literal\* star and \`no code\` here") == "a *literal* star and `no code` here"
    # a span may end in a backslash: inside code it escapes nothing, not even the closing backtick
    assert clean_inline(r"open `C:\users\<username>\documents\`, then") == r"open C:\users\<username>\documents\, then"
    assert clean_inline(r"``a ` b`` and `x`") == "a ` b and x"


def _headings(source: str) -> list[tuple[int, str]]:
    return [(b.level, b.text) for b in parser.parse("page.md", source.encode()).blocks if b.kind == "heading"]


def test_a_tab_label_never_ends_the_section_above_the_tabs():
    # Material content tabs with headings inside, after an introduction: "macOS" is a heading, not the
    # introduction's last line
    source = (
        "# App\n\n## Install\n\nPick your system.\n\n"
        '=== "macOS"\n\n    ### Disk image\n\n    1. Open it.\n\n'
        '=== "Windows"\n\n    ### Web installer\n\n    1. Run it.\n'
    )
    blocks = parser.parse("page.md", source.encode()).blocks
    assert [(b.kind, b.text) for b in blocks[2:5]] == [
        ("paragraph", "Pick your system."),
        ("heading", "macOS"),
        ("heading", "Disk image"),
    ]
    assert _headings(source) == [
        (1, "App"),
        (2, "Install"),
        (3, "macOS"),
        (4, "Disk image"),
        (3, "Windows"),
        (4, "Web installer"),
    ]


def test_two_tab_groups_under_one_heading_are_both_at_the_level_below_it():
    source = (
        "## Install\n\n{start_tabs}\n{tab|mac}\n#### Disk image\n1. Open it.\n{end_tabs}\n\n"
        "{start_tabs}\n{tab|linux}\n#### APT\n1. Run apt.\n{end_tabs}\n\n## Remove\n\nDrag it to the bin.\n"
    )
    assert _headings(source) == [
        (2, "Install"),
        (3, "Mac"),
        (4, "Disk image"),
        (3, "Linux"),
        (4, "APT"),
        (2, "Remove"),
    ]


def test_a_heading_inside_a_code_block_in_a_tab_is_no_heading():
    source = '## Set up\n\n=== "Linux"\n\n    ```\n    # a comment, not a heading\n    ```\n\n    1. Run it.\n'
    assert _headings(source) == [(2, "Set up")]  # the tab keeps its label line
    assert "Linux" in [b.text for b in parser.parse("page.md", source.encode()).blocks]


def test_the_control_character_tabs_are_marked_with_never_comes_from_the_document():
    from app.adapters.markup_rules import TAB_MARK

    document = parser.parse("page.md", f"## A\n\n{TAB_MARK}+Fake\n\n{TAB_MARK}-\n\nText.\n".encode())
    assert all(TAB_MARK not in b.text for b in document.blocks)
    assert _headings(f"## A\n\n{TAB_MARK}+Fake\n\n### B\n\n{TAB_MARK}-\n") == [(2, "A"), (3, "B")]
