"""Running a table of rules cheaply: each pattern's literal anchors, read from the pattern itself.

Most texts hold nothing a rule could match (a question about the VPN has no `ghp_` token and no
`net user` command). A pattern that must start with one of a few literal strings (`AKIA`, `ghp_`,
`password`, `net`) cannot match a text that contains none of them, and a substring test costs a
fraction of a regex search; so each rule runs only on texts that hold one of its anchors, and
patterns with no such start run always. The anchors are derived from the compiled pattern (its
leading literals, through groups and alternatives, past look-arounds and word boundaries), so a
rule and its anchors cannot drift apart.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from re import _constants as sre  # type: ignore[attr-defined]  # private modules typeshed does not describe
from re import _parser as sre_parse  # type: ignore[attr-defined]
from typing import Callable, Iterator

from app.adapters.redaction.spans import Span

_MIN_ANCHOR = 2
_MAX_ANCHORS = 256
_MAX_CLASS = 8
_ZERO_WIDTH = (sre.AT, sre.ASSERT, sre.ASSERT_NOT)


# A step's result: (the literal strings it can start with, zero-width, complete: nothing follows them inside)
Step = tuple[list[str], bool, bool]


def _alternatives(op, arg) -> Step | None:
    """What one parsed item can start with, or None if unknown (a character class, a repeat, …)."""
    if op is sre.LITERAL:
        return [chr(arg)], False, True
    if op is sre.IN and all(o is sre.LITERAL for o, _ in arg) and len(arg) <= _MAX_CLASS:
        return [chr(a) for _, a in arg], False, True
    if op is sre.SUBPATTERN and arg[1] == 0 and arg[2] == 0:  # a plain group, no flags of its own
        return _prefixes(arg[3])
    if op is sre.BRANCH:
        read = [_prefixes(b) for b in arg[1]]
        branches = [b for b in read if b is not None]
        if len(branches) < len(read):
            return None
        if all(zero for _, zero, _ in branches):
            return [""], True, True  # `(?:(?<![A-Za-z0-9])|(?<=m))`: a choice of boundaries
        return [p for b, _, _ in branches for p in b], False, all(complete for _, _, complete in branches)
    if op in (sre.MAX_REPEAT, sre.MIN_REPEAT) and arg[0] == 0 and arg[1] == 1:  # `(?:proxy-)?`
        inner = _prefixes(arg[2])
        if inner is None or not inner[2]:
            return None
        return [*inner[0], ""], False, True
    return None


def _prefixes(items) -> Step | None:
    """The literal strings one of which a sequence of parsed items must start with (None: not even one letter)."""
    out, zero = [""], True
    for op, arg in items:
        if op in _ZERO_WIDTH:
            continue
        step = _alternatives(op, arg)
        if step is None or len(out) * len(step[0]) > _MAX_ANCHORS:
            return (out, zero, False) if not zero else None
        if not step[1]:
            out, zero = [p + q for p in out for q in step[0]], False
        if not step[2]:
            return out, zero, False
    return out, zero, True


def anchors_of(pattern: re.Pattern[str]) -> frozenset[str] | None:
    """The literal strings (lower-cased for a case-blind pattern) one of which every match of `pattern` starts
    with, or None when it may start with nearly anything."""
    try:
        parsed = _prefixes(sre_parse.parse(pattern.pattern, pattern.flags))
    except (re.error, TypeError, ValueError, RecursionError):
        return None
    if parsed is None or not parsed[0] or min(len(a) for a in parsed[0]) < _MIN_ANCHOR:
        return None  # a one-letter start is in nearly every text: no gate
    folded = bool(pattern.flags & re.IGNORECASE)
    return frozenset(a.lower() for a in parsed[0]) if folded else frozenset(parsed[0])


class AnchorIndex:
    """Which patterns of a table may match a text: each distinct anchor is looked for once per text (a
    substring test), and a pattern runs when one of its anchors is there (or when it has none)."""

    def __init__(self, patterns) -> None:
        self._gates: list[tuple[bool, frozenset[str] | None]] = []
        cased: set[str] = set()
        folded: set[str] = set()
        for pattern in patterns:
            anchors = anchors_of(pattern)
            is_folded = bool(pattern.flags & re.IGNORECASE)
            self._gates.append((is_folded, anchors))
            (folded if is_folded else cased).update(anchors or ())
        self._cased, self._folded = tuple(sorted(cased)), tuple(sorted(folded))

    def active(self, text: str, lowered: str) -> list[bool]:
        """For each pattern, in table order: may it match `text` (`lowered` is `text.lower()`)?"""
        cased = {a for a in self._cased if a in text}
        folded = {a for a in self._folded if a in lowered}
        return [
            anchors is None or not anchors.isdisjoint(folded if is_folded else cased)
            for is_folded, anchors in self._gates
        ]


@dataclass(frozen=True)
class Rule:
    """One row of a rule table: what it finds (`kind`), how (`pattern`, its `secret` group, and `accept` on the
    value), and examples — texts and the secret each must yield (`finds`), texts it must leave (`keeps`).
    The examples are the table's tests (tests/unit/test_rule_tables.py)."""

    name: str
    kind: str
    pattern: re.Pattern[str]
    accept: Callable[[str], bool] | None = None
    finds: tuple[tuple[str, str], ...] = ()
    keeps: tuple[str, ...] = ()


class RuleTable:
    """The engine for a table of rules: each rule, gated by its anchors, yields its `secret` group's span."""

    def __init__(self, rules, source: str) -> None:
        self.rules: tuple[Rule, ...] = tuple(rules)
        self.source = source
        self._index = AnchorIndex(rule.pattern for rule in self.rules)

    def spans(
        self, text: str, lowered: str | None = None, reject: Callable[[str, int, int], bool] | None = None
    ) -> Iterator[Span]:
        """Every accepted secret in `text`; `reject(text, start, end)` drops one its context shows to be code."""
        lowered = text.lower() if lowered is None else lowered
        for rule, may_match in zip(self.rules, self._index.active(text, lowered)):
            for m in rule.pattern.finditer(text) if may_match else ():
                value = m.group("secret")
                if (
                    not value
                    or (rule.accept and not rule.accept(value))
                    or (reject is not None and reject(text, m.start("secret"), m.end("secret")))
                ):
                    continue
                yield Span(m.start("secret"), m.end("secret"), rule.kind, self.source)
