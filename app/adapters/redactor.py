"""The Redactor port's implementations: one composite redactor, one view of it per destination.

- `redactors_from_settings(settings)`: what the service uses — chat rules, vendor token formats and
  detect-secrets' plugins for secrets; Presidio (and its spaCy names model, when a destination removes
  names) for personal data; a redactor per destination (memory, llm, ticket, trace, log, documents).
- `PatternRedactor()`: the same secret rules plus e-mail addresses by pattern, no models, nothing to
  load: for tests and tools that need a redactor in microseconds.

Typed placeholders keep the sentence readable ("my password is [REDACTED:PASSWORD]"); personal data
is numbered per distinct value ([REDACTED:EMAIL_1]) so a reader can tell two people apart.
See app/adapters/redaction/ for the detectors and the policy.
"""

from __future__ import annotations

import logging

from app.adapters.redaction.chat_rules import find_secrets
from app.adapters.redaction.engine import PolicyRedactor, RedactionEngine
from app.adapters.redaction.pii import email_addresses
from app.adapters.redaction.policy import (
    DESTINATIONS,
    RedactionPolicy,
    build_engine,
    build_redactors,
    start_background_loads,
)
from app.adapters.redaction.spans import Span
from core.ports import Redactor

log = logging.getLogger(__name__)


class _EmailPattern:
    kinds = frozenset({"EMAIL"})

    def find(self, text: str, kinds: frozenset[str]) -> list[Span]:
        return email_addresses(text)


class PatternRedactor(PolicyRedactor):
    """Secrets by the chat rules and vendor formats, e-mail addresses by pattern; no models."""

    def __init__(self) -> None:
        super().__init__(RedactionEngine([find_secrets], [_EmailPattern()]), {"EMAIL"}, destination="pattern")


def redactors_from_settings(
    settings,
    override: Redactor | None = None,
    *,
    in_use: tuple[str, ...] = DESTINATIONS,
    start_names_load: bool = True,
) -> dict[str, Redactor]:
    """One redactor per destination from the settings' policy, sharing one engine (built once: the
    names model takes seconds, and is loaded only when a destination `in_use` removes names, on a thread of
    its own: the first text that needs it waits for it; `start_names_load=False`: the load begins at
    `start_background_loads(redactors)` or at that first text). `override` (tests) is used for every destination."""
    if override is not None:
        return {d: override for d in (*DESTINATIONS, "documents")}
    policy = RedactionPolicy.from_settings(settings)
    engine = build_engine(
        policy,
        max_chars=settings.redaction.redact_max_chars,
        names_model=settings.redaction.names_model,
        destinations=in_use,
        load_names_in_background=True,
        start_names_load=start_names_load,
    )
    log.info(
        "redaction policy: %s",
        "; ".join(
            f"{d} removes secrets{', ' + ', '.join(sorted(policy.kinds_for(d))) if policy.kinds_for(d) else ''}"
            for d in DESTINATIONS
        ),
    )
    return build_redactors(policy, engine)


__all__ = [
    "PatternRedactor",
    "PolicyRedactor",
    "RedactionEngine",
    "RedactionPolicy",
    "redactors_from_settings",
    "start_background_loads",
]
