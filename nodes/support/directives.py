"""System-message directives: a caller steers answers from its system message, not from code.

Two formats, detected automatically; keys are case-insensitive:

    You are a friendly support agent.          You are a friendly support agent.
    RESPONSE_MODE: HYBRID                      <config>
    MIN_CONFIDENCE: 0.6                        RESPONSE_MODE: hybrid
                                               DOCUMENT_CONTEXT: technical, how-to
                                               </config>

Plain `KEY: value` lines count anywhere in the text; a `<config>…</config>` block (which may also hold
a JSON object) wins when present, and loose directive lines outside it are then ignored with a warning.
What is left once the directives are removed is the persona, handed to the answer prompts.

A line is a directive when its key is a known one (any case), or looks like one (ALL_CAPS_WITH_UNDERSCORES:
an unknown directive, dropped with a warning). Ordinary prose with a colon ("Note: be polite") is persona.

Progressive validation: a bad critical field (an unknown RESPONSE_MODE) raises
InvalidDirective (→ 422 with the accepted values); a bad optional field (MIN_CONFIDENCE, FALLBACK_STRATEGY,
the three document-context lists) falls back to its default and adds one warning naming the field, the
value and the default used. Pure functions: the API calls `parse_directives`, the graph reads the result.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any

from core.errors import InvalidFilter
from core.filters import normalise_values
from core.injection import delimit_data
from nodes.support.modes import (
    DEFAULT_FALLBACK_STRATEGY,
    DEFAULT_MIN_CONFIDENCE,
    DEFAULT_MODE,
    FALLBACK_STRATEGIES,
    ResponseMode,
    parse_mode,
)

MAX_SYSTEM_CHARS = 8_000  # read no further into a system message
MAX_PERSONA_CHARS = 2_000  # persona text handed to a prompt
MAX_WARNINGS = 10
_SHOWN_CHARS = 40  # of a bad value quoted in a warning

# directive key → (Directives attribute, core.filters field or None)
DIRECTIVES: dict[str, tuple[str, str | None]] = {
    "RESPONSE_MODE": ("response_mode", None),
    "MIN_CONFIDENCE": ("min_confidence", None),
    "FALLBACK_STRATEGY": ("fallback_strategy", None),
    "DOCUMENT_CONTEXT": ("document_context", "context_type"),
    "CONTENT_DOMAINS": ("content_domains", "content_domain"),
    "DOCUMENT_CATEGORIES": ("document_categories", "document_category"),
}
KNOWN_KEYS = ", ".join(DIRECTIVES)
_ANY_VALUE = {"all", "any", "*"}  # a list directive naming these means "no filter", the default

_LINE = re.compile(r"^\s*([A-Za-z][A-Za-z0-9_]*)\s*:\s*(.*?)\s*$")
_LOOKS_LIKE_DIRECTIVE = re.compile(r"^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$")
_CONFIG_BLOCK = re.compile(r"<config>(.*?)</config>", re.I | re.S)
_CONFIG_TAG = re.compile(r"</?config>", re.I)
_BLANK_RUNS = re.compile(r"\n{3,}")


@dataclass(frozen=True)
class Directives:
    """How to answer: the response mode, its threshold and fallback, and document-context filters (None = all)."""

    response_mode: ResponseMode = DEFAULT_MODE
    min_confidence: float = DEFAULT_MIN_CONFIDENCE
    fallback_strategy: str = DEFAULT_FALLBACK_STRATEGY
    document_context: tuple[str, ...] | None = None
    content_domains: tuple[str, ...] | None = None
    document_categories: tuple[str, ...] | None = None
    given: frozenset[str] = frozenset()  # attributes the caller set (rather than defaulted)


@dataclass(frozen=True)
class DirectiveResult:
    directives: Directives = field(default_factory=Directives)
    warnings: list[str] = field(default_factory=list)
    persona: str = ""


class _Warnings(list):
    """At most MAX_WARNINGS, then one line saying how many more there were."""

    dropped = 0

    def add(self, text: str) -> None:
        if len(self) < MAX_WARNINGS:
            self.append(text)
        else:
            self.dropped += 1

    def final(self) -> list[str]:
        return list(self) + ([f"…and {self.dropped} more directive warning(s)."] if self.dropped else [])


def _shown(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    text = " ".join(text.split())
    return text if len(text) <= _SHOWN_CHARS else text[:_SHOWN_CHARS] + "…"


def _is_directive_key(key: str) -> bool:
    return key.upper() in DIRECTIVES or bool(_LOOKS_LIKE_DIRECTIVE.match(key))


def _split_lines(text: str) -> tuple[list[str], list[tuple[str, Any]]]:
    """Loose text → (persona lines, directive entries); prose with colons stays persona."""
    persona, entries = [], []
    for line in text.split("\n"):
        match = _LINE.match(line)
        if match and _is_directive_key(match.group(1)):
            entries.append((match.group(1), match.group(2)))
        else:
            persona.append(line)
    return persona, entries


def _block_entries(body: str, warnings: _Warnings) -> list[tuple[str, Any]]:
    """A <config> block's body: a JSON object, or KEY: value lines (every key counts, whatever its shape)."""
    if body.strip().startswith("{"):
        try:
            data = json.loads(body)
        except (ValueError, RecursionError):
            data = None
        if not isinstance(data, dict):
            warnings.add(
                "The <config> block looks like JSON but is not a JSON object; it was ignored. "
                'Write it as KEY: value lines or as {"RESPONSE_MODE": "HYBRID", …}.'
            )
            return []
        return [(str(key), value) for key, value in data.items()]
    entries = []
    for line in body.split("\n"):
        if not line.strip():
            continue
        match = _LINE.match(line)
        if match:
            entries.append((match.group(1), match.group(2)))
        else:
            warnings.add(f"The <config> line '{_shown(line)}' is not a KEY: value line; it was ignored.")
    return entries


def _confidence(raw: Any) -> float | None:
    if isinstance(raw, bool):
        return None
    if isinstance(raw, (int, float)):
        number = float(raw)
    elif isinstance(raw, str):
        text = raw.strip()
        scale = 100.0 if text.endswith("%") else 1.0
        try:
            number = float(text.rstrip("%").strip()) / scale
        except ValueError:
            return None
    else:
        return None
    return number if math.isfinite(number) and 0.0 <= number <= 1.0 else None


def _optional(key: str, raw: Any, warnings: _Warnings) -> tuple[bool, Any]:
    """(accepted, value) for an optional field; a rejected value adds a warning naming the default."""
    attribute, filter_field = DIRECTIVES[key]
    if key == "MIN_CONFIDENCE":
        number = _confidence(raw)
        if number is None:
            warnings.add(
                f"MIN_CONFIDENCE '{_shown(raw)}' is not a number between 0 and 1 (e.g. 0.7 or 70%); "
                f"using the default {DEFAULT_MIN_CONFIDENCE}."
            )
            return False, None
        return True, number
    if key == "FALLBACK_STRATEGY":
        strategy = "_".join(raw.replace("-", " ").lower().split()) if isinstance(raw, str) else None
        if strategy not in FALLBACK_STRATEGIES:
            warnings.add(
                f"FALLBACK_STRATEGY '{_shown(raw)}' is not one of {', '.join(FALLBACK_STRATEGIES)}; "
                f"using the default {DEFAULT_FALLBACK_STRATEGY}."
            )
            return False, None
        return True, strategy
    assert filter_field is not None  # every directive but the two above names a filter field
    try:
        values = normalise_values(filter_field, raw)
    except InvalidFilter as exc:
        reason = str(exc).replace(f"'{filter_field}'", "the list", 1).rstrip(".")
        warnings.add(f"{key} '{_shown(raw)}' was ignored ({reason}); using the default: all documents.")
        return False, None
    if not values:
        warnings.add(f"{key} has no values; using the default: all documents.")
        return False, None
    if set(values) & _ANY_VALUE:
        return True, None
    return True, tuple(values)


def _validate(entries: list[tuple[str, Any]], warnings: _Warnings) -> Directives:
    chosen: dict[str, Any] = {}
    for raw_key, raw in entries:
        key = raw_key.upper()
        if key not in DIRECTIVES:
            warnings.add(f"Unknown directive {_shown(raw_key)} was ignored; known directives are {KNOWN_KEYS}.")
            continue
        if key in chosen:
            warnings.add(f"{key} is given more than once; the last value is used.")
        chosen[key] = raw
    settings: dict[str, Any] = {}
    if "RESPONSE_MODE" in chosen:
        settings["response_mode"] = parse_mode(chosen["RESPONSE_MODE"])  # critical: raises InvalidDirective
    for key, raw in chosen.items():
        if key == "RESPONSE_MODE":
            continue
        accepted, value = _optional(key, raw, warnings)
        if accepted:
            settings[DIRECTIVES[key][0]] = value
    return Directives(**settings, given=frozenset(settings))


def _persona(lines: list[str], warnings: _Warnings) -> str:
    text = _BLANK_RUNS.sub("\n\n", "\n".join(line.rstrip() for line in lines)).strip()
    if len(text) > MAX_PERSONA_CHARS:
        warnings.add(
            f"The system message's persona text is longer than {MAX_PERSONA_CHARS:,} characters; "
            f"only the first {MAX_PERSONA_CHARS:,} are used."
        )
        text = text[:MAX_PERSONA_CHARS].rstrip()
    return text


def parse_directives(system_text: str | None) -> DirectiveResult:
    """Directives, warnings and persona from a system message; InvalidDirective for an unknown RESPONSE_MODE."""
    if not system_text or not system_text.strip():
        return DirectiveResult()
    warnings = _Warnings()
    text = system_text.replace("\r\n", "\n").replace("\r", "\n")
    if len(text) > MAX_SYSTEM_CHARS:
        warnings.add(
            f"The system message is longer than {MAX_SYSTEM_CHARS:,} characters; "
            f"only the first {MAX_SYSTEM_CHARS:,} were read."
        )
        text = text[:MAX_SYSTEM_CHARS]
    blocks = list(_CONFIG_BLOCK.finditer(text))
    if blocks:
        entries = _block_entries(blocks[0].group(1), warnings)
        if len(blocks) > 1:
            warnings.add(f"Only the first <config> block is read; {len(blocks) - 1} more were ignored.")
        persona_lines, loose = _split_lines(_CONFIG_TAG.sub("", _CONFIG_BLOCK.sub("\n", text)))
        for raw_key, _ in loose:
            if raw_key.upper() in DIRECTIVES:
                warnings.add(f"{raw_key.upper()} outside the <config> block was ignored: the block's settings win.")
            else:
                entries.append((raw_key, None))  # reported as unknown below
    else:
        if _CONFIG_TAG.search(text):
            warnings.add("A <config> tag has no matching </config>; its lines were read as plain directives.")
            text = _CONFIG_TAG.sub("", text)
        persona_lines, entries = _split_lines(text)
    directives = _validate(entries, warnings)
    persona = _persona(persona_lines, warnings)
    return DirectiveResult(directives, warnings.final(), persona)


def directives_to_filters(directives: Directives) -> dict[str, list[str]] | None:
    """The document-context directives as a search filter in core.filters.parse_filter's shape (None = all)."""
    filters = {}
    for attribute, filter_field in DIRECTIVES.values():
        values = getattr(directives, attribute)
        if filter_field and values:
            filters[filter_field] = list(values)
    return filters or None


def format_persona(persona: str) -> str:
    """The persona for a prompt's ${persona}: delimited data (it shapes tone and role, never the rules)."""
    return delimit_data("persona", persona) if persona.strip() else "(none given)"
