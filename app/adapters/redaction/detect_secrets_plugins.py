"""detect-secrets' plugins, run on text line by line (no files, no baseline, never any verification).

We call each plugin's `analyze_string` directly: `analyze_line` may call a vendor's API to verify a
key when verification is configured, which would send the very secret we are hiding to the network.
The high-entropy plugins only count with a secret keyword on the same line (a hash, a commit id
or a GUID in a support chat is not a secret), and detect-secrets' own heuristic filters apply.
"""

from __future__ import annotations

import re
from typing import Any, Iterator

from app.adapters.redaction.code_shapes import is_declaration
from app.adapters.redaction.heuristics import is_masked, is_template, looks_fake
from app.adapters.redaction.spans import Span
from app.adapters.redaction.values import (
    URL_PLACEHOLDERS,
    key_name_kind,
    key_value_ok,
    names_a_public_value,
    names_a_setting,
    value_looks_like_secret,
)

_WINDOWS_SID = re.compile(r"S-1-\d+(?:-\d+){2,}")
SOURCE = "detect_secrets"
_KIND_BY_TYPE = {
    "AWS Access Key": "AWS_KEY",
    "Azure Storage Account access key": "AZURE_KEY",
    "Basic Auth Credentials": "URL_CREDENTIALS",
    "GitHub Token": "GITHUB_TOKEN",
    "GitLab Token": "GITLAB_TOKEN",
    "Slack Token": "SLACK_TOKEN",
    "Stripe Access Key": "STRIPE_KEY",
    "JSON Web Token": "JWT",
    "Private Key": "PRIVATE_KEY",
    "Base64 High Entropy String": "SECRET",
    "Hex High Entropy String": "SECRET",
    "Secret Keyword": "SECRET",
}
_SKIPPED_PLUGINS = frozenset(
    {
        "IPPublicDetector",  # IP addresses are personal data here, handled (and policed) by the PII detector
    }
)
# detect-secrets' own patterns backtrack on long runs (`eyJeyJ…` costs seconds at 100,000 characters);
# a longer line is a paste the chat rules check on their own (only the private-key markers are still looked for)
_MAX_LINE = 4000
_LONG_LINE_PLUGINS = frozenset({"PrivateKeyDetector"})  # literal markers: cheap, and a key may sit in a long line
_ENTROPY_PLUGINS = frozenset({"Base64HighEntropyString", "HexHighEntropyString"})
_KEYWORD_ON_LINE = re.compile(r"(?i)(?:key|token|secret|passw|pwd|credential|auth|bearer|signature|salt|api)")
# the entropy plugins count only with a secret keyword on the line; the keyword plugin needs one of its own
# keywords (every one of detect_secrets.plugins.keyword.DENYLIST contains one of these)
_KEYWORD_PLUGIN_ANCHOR = re.compile(r"(?i)key|pass|pwd|secret|contrase")
_BACKREFERENCE = re.compile(r"\\\d|\(\?P=")


def _under_a_public_name(line: str, value: str) -> bool:
    match = _KEYWORD_NAME.search(line[: max(line.find(value), 0)])
    return match is not None and names_a_public_value(match.group(1))


def _union_safe(plugin) -> bool:
    """A pattern plugin whose patterns can join one alternation (no back-references to renumbered groups)."""
    patterns = list(getattr(plugin, "denylist", None) or [])
    return bool(patterns) and not any(_BACKREFERENCE.search(p.pattern) for p in patterns)


def _inline(pattern: re.Pattern[str]) -> str:
    return f"(?i:{pattern.pattern})" if pattern.flags & re.IGNORECASE else f"(?:{pattern.pattern})"


_KEYWORD_NAME = re.compile(r"([A-Za-z_][A-Za-z0-9_.\-]*)[\"'\]]{0,2}\s*(?:=|:|:=|=>)\s*[\"'`]?$")


def _code_or_prose(line: str, value: str) -> bool:
    """`password: str | None = None`, `:param password: …`, `api_key or os.getenv(…)`, `password: Optional
    password for …`: the keyword plugin reads everything after `name:` as the value; a type or a docstring
    field is a declaration, and unquoted words with spaces are code or a description."""
    at = line.find(value)
    if at < 0:
        return False
    if line[:at].rstrip().endswith(":") and is_declaration(line, line.rfind(":", 0, at), at):
        return True
    return line[at - 1 : at] not in ('"', "'", "`") and any(c.isspace() for c in value.strip())


def _enclosing_token(line: str, value: str) -> str:
    """The whitespace-delimited token around `value` (a plugin may report only part of a JWT), at most
    200 characters either side (a 100,000-character run is one "token": checking it whole for every
    value found in it would be quadratic)."""
    at = line.find(value)
    if at < 0:
        return value
    window_start, window_end = max(0, at - 200), min(len(line), at + len(value) + 200)
    space = line.rfind(" ", window_start, at)
    start = space + 1 if space >= 0 else window_start
    end = line.find(" ", at + len(value), window_end)
    return line[start : end if end >= 0 else window_end]


class DetectSecretsPlugins:
    """All of detect-secrets' line plugins with their default limits, as a span detector."""

    def __init__(self) -> None:
        from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
        from detect_secrets.filters import heuristic
        from detect_secrets.plugins.keyword import (
            CONFIG_DENYLIST_REGEX_TO_GROUP,
            QUOTES_REQUIRED_DENYLIST_REGEX_TO_GROUP,
        )

        plugin_classes: dict[str, type[Any]] = get_mapping_from_secret_type_to_class()  # secret type → class
        self._plugins = [cls() for cls in plugin_classes.values() if cls.__name__ not in _SKIPPED_PLUGINS]
        # one search for every plugin's patterns: most lines match none, and then no pattern plugin runs
        gated = [p for p in self._plugins if _union_safe(p)]
        self._gated = [_union_safe(p) for p in self._plugins]  # by position: a plugin's __eq__ is costly
        self._any_pattern = re.compile("|".join(_inline(pattern) for p in gated for pattern in p.denylist))
        self._keyword_maps = (QUOTES_REQUIRED_DENYLIST_REGEX_TO_GROUP, CONFIG_DENYLIST_REGEX_TO_GROUP)
        self._h = heuristic
        self.names = sorted(type(p).__name__ for p in self._plugins)

    def _filtered(self, value: str, line: str, plugin) -> bool:
        h = self._h
        return (
            h.is_sequential_string(value)
            or h.is_potential_uuid(value)
            or h.is_templated_secret(value)
            or h.is_prefixed_with_dollar_sign(value)
            or h.is_not_alphanumeric_string(value)
            or h.is_likely_id_string(value, line, plugin)
            or is_template(value)
            or is_masked(value)
        )

    def _values(self, plugin, line: str) -> Iterator[tuple[str, str]]:
        name = type(plugin).__name__
        if name == "KeywordDetector":
            if self._h.is_indirect_reference(line):
                return
            for regex_map in self._keyword_maps:
                for value in plugin.analyze_string(line, denylist_regex_to_group=regex_map):
                    if value_looks_like_secret(value) and not _code_or_prose(line, value):
                        yield value, "SECRET"
            return
        for value in plugin.analyze_string(line):
            if name in _ENTROPY_PLUGINS and (
                not _KEYWORD_ON_LINE.search(line) or plugin.calculate_shannon_entropy(value) <= plugin.entropy_limit
            ):
                continue
            if looks_fake(_enclosing_token(line, value)):  # AKIA…EXAMPLE and friends from documentation
                continue
            yield value, _KIND_BY_TYPE.get(plugin.secret_type, "API_KEY")

    def find(self, text: str) -> list[Span]:
        spans: list[Span] = []
        offset = 0
        for line in text.splitlines(keepends=True):
            body = line.rstrip("\r\n")
            if len(body) >= 8:
                spans.extend(self._line_spans(body, offset))
            offset += len(line)
        return spans

    def _line_spans(self, line: str, offset: int) -> Iterator[Span]:
        long_line = len(line) > _MAX_LINE
        any_pattern = self._any_pattern.search(line) is not None
        keyword = _KEYWORD_ON_LINE.search(line) is not None
        keyword_plugin = _KEYWORD_PLUGIN_ANCHOR.search(line) is not None
        for plugin, gated in zip(self._plugins, self._gated):
            if long_line and type(plugin).__name__ not in _LONG_LINE_PLUGINS:
                continue
            name = type(plugin).__name__
            if (
                (gated and not any_pattern)
                or (name in _ENTROPY_PLUGINS and not keyword)
                or (name == "KeywordDetector" and not keyword_plugin)
            ):
                continue  # nothing on the line that the plugin's patterns could match
            for value, kind in self._values(plugin, line):
                value = value.strip()
                if len(value) < 4 or self._filtered(value, line, plugin) or _WINDOWS_SID.match(value):
                    continue  # (a Windows SID under "key": `ProfileList key S-1-5-21-…`)
                if kind == "URL_CREDENTIALS" and value.lower() in URL_PLACEHOLDERS:
                    continue  # `postgres://user:pass@host/db` in documentation
                if kind == "PRIVATE_KEY":
                    # the plugin reports the BEGIN marker; the whole block is the secret (the chat
                    # rules find BEGIN…END; this catches formats they do not know): rest of the line
                    start = line.find(value)
                    yield Span(offset + max(start, 0), offset + len(line), kind, SOURCE)
                    continue
                if kind in ("SECRET", "API_KEY") and _under_a_public_name(line, value):
                    continue  # `"publicKey": "…"`, `csrf_token = "…"` (the entropy plugins see the same)
                if kind == "SECRET" and type(plugin).__name__ == "KeywordDetector":
                    keyword_kind = self._keyword_kind(line, value)
                    if keyword_kind is None or (keyword_kind != "PASSWORD" and not key_value_ok(value)):
                        continue  # `secret = "db-secret"`: a name; `api_key = "0000…"`: a pattern
                    kind = keyword_kind
                at = line.find(value)
                while at >= 0:
                    yield Span(offset + at, offset + at + len(value), kind, SOURCE)
                    at = line.find(value, at + len(value))

    @staticmethod
    def _keyword_kind(line: str, value: str) -> str | None:
        at = line.find(value)
        match = _KEYWORD_NAME.search(line[: max(at, 0)])
        if match and (names_a_setting(match.group(1)) or names_a_public_value(match.group(1))):
            return None  # `PasswordPolicy: MinimumLength=14`, `"primaryKey": "8f14…"`
        kind = key_name_kind(match.group(1)) if match else None
        return kind or "SECRET"
