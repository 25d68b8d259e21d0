"""The measured redactor: secrets (chat rules, vendor formats, detect-secrets' plugins) and personal
data (Presidio, spaCy names), with a policy per destination. See policy.py for who applies what."""

from app.adapters.redaction.engine import PolicyRedactor, RedactionEngine
from app.adapters.redaction.kinds import PII_KINDS, SECRET_KINDS, parse_pii_kinds
from app.adapters.redaction.policy import DESTINATIONS, RedactionPolicy, build_engine, build_redactors
from app.adapters.redaction.spans import PLACEHOLDER, Span

__all__ = [
    "DESTINATIONS",
    "PII_KINDS",
    "PLACEHOLDER",
    "PolicyRedactor",
    "RedactionEngine",
    "RedactionPolicy",
    "SECRET_KINDS",
    "Span",
    "build_engine",
    "build_redactors",
    "parse_pii_kinds",
]
