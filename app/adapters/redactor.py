"""Rule-based redactor for what people paste into a support chat: passwords, keys, tokens, e-mails.

Typed placeholders keep the sentence readable ("my password is [REDACTED:PASSWORD]"); personal
data is numbered per distinct value ([REDACTED:EMAIL_1]) so a reader can tell two people apart.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

from graphs.ports import Finding, Redaction

# Words that follow "password" in ordinary sentences and are not the password itself.
_NOT_A_SECRET = frozenset(
    "is was are be been expired expires expiring expiry wrong incorrect correct invalid not no reset resets "
    "change changed changes locked lock unlock working works work doesnt doesn't didnt didn't won't wont "
    "keeps keep isnt isn't still too the a an my your our their this that it for to on in at of with from "
    "and or but if when policy portal page field box prompt manager managers requirement requirements rules "
    "rule length history hint hints again anymore please help issue issues problem problems needs need "
    "required case sensitive being getting has have had will would should can could any every new old "
    "current same different temporary temp one expire expired. reset. set stopped fails failed failing "
    "screen login prompt via by over through who what why how where which".split()
)
_SECRET_WORD = r"(?:password|passwort|passwd|passcode|passphrase|pwd|pw|pin)"


@dataclass(frozen=True)
class Rule:
    kind: str
    pattern: re.Pattern[str]
    group: str = "secret"  # the named group that is replaced; the rest of the match is kept
    accept: Callable[[str], bool] | None = None


def _looks_secret(value: str) -> bool:
    v = value.strip(".,;:!?\"'()[]")
    if not v or v.lower() in _NOT_A_SECRET or v.startswith("[REDACTED"):
        return False
    return True


def _looks_secret_without_connector(value: str) -> bool:
    """"password abc123": without 'is' or ':', only a token that is not a plain word counts."""
    v = value.strip(".,;:!?\"'()[]")
    return _looks_secret(v) and (bool(re.search(r"\d", v)) or bool(re.search(r"[^A-Za-z]", v))) and len(v) >= 3


_RULES: tuple[Rule, ...] = (
    Rule("PRIVATE_KEY", re.compile(
        r"(?P<secret>-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----.*?(?:-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\Z))",
        re.S)),
    Rule("URL_CREDENTIALS", re.compile(r"\b[a-z][a-z0-9+.\-]*://[^\s:/@]+:(?P<secret>[^\s@/]+)@", re.I)),
    Rule("AWS_KEY", re.compile(r"(?P<secret>\b(?:AKIA|ASIA|AGPA|AIDA|AROA)[0-9A-Z]{16}\b)")),
    Rule("GITHUB_TOKEN", re.compile(r"(?P<secret>\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})\b)")),
    Rule("GITLAB_TOKEN", re.compile(r"(?P<secret>\bglpat-[A-Za-z0-9_\-]{20,}\b)")),
    Rule("SLACK_TOKEN", re.compile(r"(?P<secret>\bxox[abposr]-[A-Za-z0-9\-]{10,}\b)")),
    Rule("API_KEY", re.compile(
        r"(?P<secret>\b(?:sk-(?:proj-|ant-)?[A-Za-z0-9_\-]{16,}|gsk_[A-Za-z0-9]{20,}|"
        r"(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}|AIza[0-9A-Za-z_\-]{35}|SG\.[A-Za-z0-9_\-]{16,}\.[A-Za-z0-9_\-]{16,})\b)")),
    Rule("JWT", re.compile(r"(?P<secret>\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,})")),
    Rule("AUTH_HEADER", re.compile(
        r"\b(?:authorization|proxy-authorization)\s*[:=]\s*(?:bearer|basic|token|digest|negotiate)?\s*(?P<secret>[^\s\"',;]+)",
        re.I)),
    Rule("TOKEN", re.compile(r"\bbearer\s+(?P<secret>[A-Za-z0-9._~+/=\-]{12,})", re.I)),
    Rule("API_KEY", re.compile(
        r"\b(?:[a-z0-9_]*(?:api[_\-]?key|apikey|secret|token|access[_\-]?key|client[_\-]?secret|private[_\-]?key|auth[_\-]?key))"
        r"\s*[:=]\s*[\"']?(?P<secret>[^\s\"',;]{6,})", re.I)),
    Rule("PASSWORD", re.compile(
        rf"\b[a-z_]*{_SECRET_WORD}[a-z_]*\s*[:=]\s*[\"']?(?P<secret>[^\s\"';,]+)", re.I),
        accept=_looks_secret),
    Rule("PASSWORD", re.compile(
        rf"\b{_SECRET_WORD}\s+(?:is|was|=|:|would be|should be|used to be|is now|now is)\s+[\"']?(?P<secret>[^\s\"']+)",
        re.I), accept=_looks_secret),
    Rule("PASSWORD", re.compile(rf"\b{_SECRET_WORD}\s+[\"']?(?P<secret>[^\s\"']+)", re.I),
         accept=_looks_secret_without_connector),
    Rule("EMAIL", re.compile(r"(?P<secret>\b[A-Za-z0-9._%+\-]+@[A-Za-z0-9.\-]+\.[A-Za-z]{2,}\b)")),
)
_NUMBERED_KINDS = frozenset({"EMAIL", "PHONE", "PERSON", "IP_ADDRESS"})


class PatternRedactor:
    """Regex rules, applied in order; earlier (more specific) rules win overlapping spans."""

    def redact(self, text: str) -> Redaction:
        spans: list[tuple[int, int, str]] = []
        for rule in _RULES:
            for match in rule.pattern.finditer(text):
                start, end = match.span(rule.group)
                value = match.group(rule.group)
                if start == end or (rule.accept and not rule.accept(value)):
                    continue
                value_clean = value.rstrip(".,;:!?)")
                end = start + len(value_clean)
                if any(s < end and start < e for s, e, _ in spans):
                    continue
                spans.append((start, end, rule.kind))
        if not spans:
            return Redaction(text=text)
        spans.sort()
        numbers: dict[tuple[str, str], int] = {}
        counters: dict[str, int] = {}
        out: list[str] = []
        findings: list[Finding] = []
        cursor = 0
        for start, end, kind in spans:
            value = text[start:end]
            if kind in _NUMBERED_KINDS:
                key = (kind, value.lower())
                if key not in numbers:
                    counters[kind] = counters.get(kind, 0) + 1
                    numbers[key] = counters[kind]
                placeholder = f"[REDACTED:{kind}_{numbers[key]}]"
            else:
                placeholder = f"[REDACTED:{kind}]"
            out.append(text[cursor:start])
            out.append(placeholder)
            findings.append(Finding(kind=kind, placeholder=placeholder))
            cursor = end
        out.append(text[cursor:])
        return Redaction(text="".join(out), findings=tuple(findings))
