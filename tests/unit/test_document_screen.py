"""The document screen's rows: every example it must flag is flagged, every warning or ordinary step is not."""

from __future__ import annotations

import pytest

from core.document_screen import RULES, unsafe_instructions, warning_for


@pytest.mark.parametrize("rule, text", [(r, t) for r in RULES for t in r.matches])
def test_each_rule_flags_its_examples(rule, text):
    assert rule.name in unsafe_instructions(text)


@pytest.mark.parametrize("rule, text", [(r, t) for r in RULES for t in r.not_matches])
def test_warnings_and_ordinary_steps_are_not_flagged(rule, text):
    assert unsafe_instructions(text) == []


def test_the_warning_names_what_the_document_asks_for():
    line = warning_for(["send-credentials", "disable-security"])
    assert "send a password or code" in line and "turn off security software" in line


def test_a_long_document_is_screened_in_bounded_time_and_text():
    assert unsafe_instructions("Restart the router. " * 50_000) == []
