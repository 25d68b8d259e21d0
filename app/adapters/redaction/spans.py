"""Detected spans → one non-overlapping set → text with typed, numbered placeholders."""

from __future__ import annotations

import re
from dataclasses import dataclass

from app.adapters.redaction.kinds import NUMBERED_KINDS, priority
from core.ports import Finding, Redaction

PLACEHOLDER = re.compile(r"\[REDACTED:(?P<kind>[A-Z][A-Z_]*?)(?:_(?P<n>\d+))?\]")
_EDGE = " \t\r\n\"'`"
_TRAILING = ".,;:"
_PAIRS = {"(": ")", "[": "]", "{": "}", "<": ">"}


@dataclass(frozen=True)
class Span:
    start: int
    end: int
    kind: str
    source: str = ""  # which detector found it (for benchmarks and debugging, never shown to users)

    def __len__(self) -> int:
        return self.end - self.start


def trimmed(text: str, span: Span) -> Span | None:
    """Drop whitespace, quotes, sentence punctuation and unbalanced brackets a detector swallowed
    ("hunter2." -> "hunter2", "(pw)" -> "pw"); a '!' or '?' stays: it may be part of a password."""
    start, end = span.start, span.end
    changed = True
    while changed and start < end:
        changed = False
        value = text[start:end]
        if value[0] in _EDGE:
            start, changed = start + 1, True
        elif value[-1] in _EDGE or value[-1] in _TRAILING:
            end, changed = end - 1, True
        elif value[0] in _PAIRS and _PAIRS[value[0]] not in value:
            start, changed = start + 1, True
        elif value[-1] in _PAIRS.values() and not any(o in value for o, c in _PAIRS.items() if c == value[-1]):
            end, changed = end - 1, True
    if end <= start:
        return None
    return Span(start, end, span.kind, span.source)


def _outside_placeholders(span: Span, placeholders: list[tuple[int, int]]) -> list[Span]:
    """Cut a span around existing placeholders, so redacting redacted text changes nothing."""
    pieces = [(span.start, span.end)]
    for p_start, p_end in placeholders:
        next_pieces = []
        for start, end in pieces:
            if p_end <= start or end <= p_start:
                next_pieces.append((start, end))
                continue
            if start < p_start:
                next_pieces.append((start, p_start))
            if p_end < end:
                next_pieces.append((p_end, end))
        pieces = next_pieces
    return [Span(s, e, span.kind, span.source) for s, e in pieces]


def resolve(text: str, spans: list[Span]) -> list[Span]:
    """One set of non-overlapping spans: overlapping detections merge into their union (nothing of
    either survives), labelled with the most specific kind (highest priority, then longest)."""
    placeholders = [m.span() for m in PLACEHOLDER.finditer(text)]
    cleaned: list[Span] = []
    for span in spans:
        for piece in _outside_placeholders(span, placeholders) if placeholders else [span]:
            kept = trimmed(text, piece)
            if kept is not None and sum(ch.isalnum() for ch in text[kept.start : kept.end]) >= 1:
                cleaned.append(piece)
    cleaned.sort(key=lambda s: (s.start, -s.end))
    merged: list[list[Span]] = []
    for span in cleaned:
        if merged and span.start < max(s.end for s in merged[-1]):
            merged[-1].append(span)
        else:
            merged.append([span])
    out = []
    for group in merged:
        best = max(group, key=lambda s: (priority(s.kind), len(s)))
        out.append(Span(min(s.start for s in group), max(s.end for s in group), best.kind, best.source))
    return out


def render(text: str, spans: list[Span]) -> Redaction:
    """Replace resolved spans by placeholders; personal data is numbered per distinct value,
    continuing after placeholders already in the text."""
    if not spans:
        return Redaction(text=text)
    counters: dict[str, int] = {}
    for match in PLACEHOLDER.finditer(text):
        if match.group("n"):
            kind = match.group("kind")
            counters[kind] = max(counters.get(kind, 0), int(match.group("n")))
    numbers: dict[tuple[str, str], int] = {}
    out: list[str] = []
    findings: list[Finding] = []
    cursor = 0
    for span in spans:
        value = text[span.start : span.end]
        if span.kind in NUMBERED_KINDS:
            key = (span.kind, " ".join(value.lower().split()))
            if key not in numbers:
                counters[span.kind] = counters.get(span.kind, 0) + 1
                numbers[key] = counters[span.kind]
            placeholder = f"[REDACTED:{span.kind}_{numbers[key]}]"
        else:
            placeholder = f"[REDACTED:{span.kind}]"
        out.append(text[cursor : span.start])
        out.append(placeholder)
        findings.append(Finding(kind=span.kind, placeholder=placeholder))
        cursor = span.end
    out.append(text[cursor:])
    return Redaction(text="".join(out), findings=tuple(findings))
