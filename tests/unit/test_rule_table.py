"""A rule runs only on text holding one of the literal strings its matches start with, read from its pattern."""

import re

import pytest

from app.adapters.redaction.chat_phrases import CHAT_SHAPES, PHRASES, PRIVATE_KEYS
from app.adapters.redaction.chat_rules import find_secrets
from app.adapters.redaction.command_lines import COMMAND_LINES
from app.adapters.redaction.rule_table import AnchorIndex, anchors_of
from app.adapters.redaction.vendor_tokens import TOKEN_RULES


@pytest.mark.parametrize(
    "pattern, anchors",
    [
        (
            re.compile(r"(?:(?<![A-Za-z0-9])|(?<=m))gh[pousr]_[A-Za-z0-9]{30,255}"),
            {"ghp_", "gho_", "ghu_", "ghs_", "ghr_"},
        ),
        (re.compile(r"\b(?:proxy-)?authorization\s*[:=]", re.I), {"proxy-authorization", "authorization"}),
        (re.compile(r"\bnet\s+user\s+\S+", re.I), {"net"}),
        (re.compile(r"(?:AKIA|ASIA)[0-9A-Z]{16}"), {"AKIA", "ASIA"}),
        (re.compile(r"\b(?:pw|pin(?:\s?code)?)\s*:", re.I), {"pw", "pin"}),
    ],
)
def test_the_anchors_of_a_pattern_are_the_literal_strings_its_matches_start_with(pattern, anchors):
    assert anchors_of(pattern) == anchors


@pytest.mark.parametrize(
    "pattern",
    [
        re.compile(r"[A-Za-z0-9]{32}-us\d{1,2}"),  # starts with a character class
        re.compile(r"(?:^|\s)-u\s+\S+"),  # may start with one space
        re.compile(r"\b\w*(?:password|pwd)\w*\s+REG_SZ"),  # starts with any word
    ],
)
def test_a_pattern_that_may_start_with_nearly_anything_has_no_gate(pattern):
    assert anchors_of(pattern) is None


def test_a_table_runs_only_the_patterns_whose_anchors_occur():
    index = AnchorIndex([re.compile(r"ghp_\w+"), re.compile(r"password\s*=", re.I), re.compile(r"[a-f0-9]{32}")])
    text = "Password = x"
    assert index.active(text, text.lower()) == [False, True, True]


PATTERNS = [rule.pattern for rule in TOKEN_RULES] + [
    r.pattern for table in (PRIVATE_KEYS, PHRASES, CHAT_SHAPES, COMMAND_LINES) for r in table.rules
]


@pytest.mark.parametrize(
    "text",
    [
        "export GITHUB_TOKEN=ghp_R8x2Lq9ZkW4mN7vB3cT6yH1jP5sD0fGaXe2Q",
        "net user alice Zq7!Lp4#Wg7y /add",
        "AUTHORIZATION: Bearer Zq7Lp4Wg7yR8x2Lq9ZkW4mN7vB3cT6yH",
        "my Passwort ist Zq7!Lp4#Wg7y",
    ],
)
def test_a_gated_table_finds_what_every_rule_run_on_its_own_finds(text):
    everything = {(n, m.start(), m.end()) for n, p in enumerate(PATTERNS) for m in p.finditer(text)}
    active = AnchorIndex(PATTERNS).active(text, text.lower())
    gated = {(n, m.start(), m.end()) for n, p in enumerate(PATTERNS) if active[n] for m in p.finditer(text)}
    assert everything and gated == everything
    assert find_secrets(text)
