"""Every rule table's examples are its tests: each row yields the secret of every text in `finds` and nothing
from the texts in `keeps`, on its own and through the whole redactor."""

import pytest

from app.adapters.redaction.chat_phrases import CHAT_SHAPES, LOGIN_CALLS, PHRASES, PRIVATE_KEYS
from app.adapters.redaction.command_lines import COMMAND_LINES
from app.adapters.redaction.rule_table import RuleTable
from app.adapters.redactor import PatternRedactor

TABLES = {
    "private keys": PRIVATE_KEYS,
    "phrases": PHRASES,
    "chat shapes": CHAT_SHAPES,
    "login calls": LOGIN_CALLS,
    "command lines": COMMAND_LINES,
}
ROWS = [(table, rule) for table, rules in TABLES.items() for rule in rules.rules]


def alone(rule, text: str) -> list[str]:
    return [text[s.start : s.end] for s in RuleTable([rule], source="test").spans(text)]


@pytest.mark.parametrize("table, rule", ROWS, ids=[f"{t}: {r.name}" for t, r in ROWS])
def test_every_row_has_examples_that_must_and_must_not_match(table, rule):
    assert rule.finds and rule.keeps, f"{rule.name}: a row needs an example it finds and one it leaves"


@pytest.mark.parametrize(
    "table, rule, text, secret",
    [(t, r, text, secret) for t, r in ROWS for text, secret in r.finds],
    ids=[f"{t}: {r.name}: {text[:40]}" for t, r in ROWS for text, _ in r.finds],
)
def test_a_row_finds_the_secret_in_its_examples_and_the_redactor_removes_it(table, rule, text, secret):
    assert secret in alone(rule, text)
    assert secret not in PatternRedactor().redact(text).text


@pytest.mark.parametrize(
    "table, rule, text",
    [(t, r, text) for t, r in ROWS for text in r.keeps],
    ids=[f"{t}: {r.name}: {text[:40]}" for t, r in ROWS for text in r.keeps],
)
def test_a_row_finds_nothing_in_its_counter_examples(table, rule, text):
    assert alone(rule, text) == []
