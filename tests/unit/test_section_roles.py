"""Section roles from headings and shape, for the layouts IT knowledge bases use."""

import pytest

from core.roles import ROLE_RULES, heading_role, section_role


@pytest.mark.parametrize("rule", ROLE_RULES, ids=lambda r: r.role)
def test_every_role_rule_classifies_its_own_examples(rule):
    for heading in rule.matches:
        assert heading_role(heading) == rule.role, heading
    for heading in rule.misses:
        assert heading_role(heading) != rule.role, heading


@pytest.mark.parametrize(
    "layout",
    [
        # Microsoft support
        [
            ("Symptoms", "symptoms"),
            ("Cause", "cause"),
            ("Resolution", "resolution"),
            ("Workaround", "workaround"),
            ("More information", "more_info"),
        ],
        # KCS (ServiceNow, Zendesk, Salesforce knowledge)
        [("Issue", "symptoms"), ("Environment", "environment"), ("Resolution", "resolution"), ("Cause", "cause")],
        # how-to page
        [
            ("Overview", "intro"),
            ("Before you begin", "prerequisites"),
            ("Configure the printer", "procedure"),
            ("See also", "more_info"),
        ],
        # FAQ
        [
            ("Why does my badge stop working?", "cause"),
            ("How do I reset my PIN?", "procedure"),
            ("I got an error. How do I fix it?", "resolution"),
        ],
    ],
)
def test_headings_of_common_article_layouts_get_their_roles(layout):
    assert [(h, heading_role(h)) for h, _ in layout] == layout


def test_a_heading_that_names_no_role_takes_its_parents():
    assert section_role(["Resolution", "macOS"], ["Open System Settings."]) == "resolution"
    assert section_role(["Resolution", "Method 2: Reset the app"], ["Quit the app."]) == "resolution"
    assert section_role(["Symptoms", "Word 2016"], ["Word stops responding."]) == "symptoms"


def test_without_a_telling_heading_the_shape_decides():
    assert section_role(["Printing from a Mac"], ["1. Open the file.", "2. Press Cmd+P."]) == "procedure"
    assert (
        section_role(["Office locations"], ["Site | Floor | Printer", "A | 1 | P-1", "B | 2 | P-2", "C | 3 | P-3"])
        == "reference"
    )
    assert section_role([], ["Welcome to the guide."]) == "intro"
    assert section_role(["Opening hours"], ["Weekdays 8 to 18."]) == "info"


def test_markup_in_a_heading_does_not_hide_its_role():
    assert heading_role('<a id="fix"></a>Resolution') == "resolution"
    assert heading_role("**Workaround**") == "workaround"
