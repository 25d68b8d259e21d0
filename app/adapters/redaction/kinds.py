"""The kinds of sensitive text deskmate removes, and how much each one outranks the others.

Secrets are always removed, for every destination; which personal-data kinds are removed is
policy (settings), per destination. Priorities decide the label of overlapping detections: the
most specific detector wins (a JWT inside an `Authorization:` header is a JWT).
"""

from __future__ import annotations

from types import MappingProxyType

# secret kind -> priority
SECRET_KINDS = MappingProxyType(
    {
        "PRIVATE_KEY": 100,
        "URL_CREDENTIALS": 90,
        "CONNECTION_STRING": 90,
        "AWS_KEY": 80,
        "AZURE_KEY": 80,
        "GITHUB_TOKEN": 80,
        "GITLAB_TOKEN": 80,
        "SLACK_TOKEN": 80,
        "STRIPE_KEY": 80,
        "JWT": 80,
        "AUTH_HEADER": 70,
        "API_KEY": 60,
        "TOKEN": 60,
        "PASSWORD": 50,
        "SECRET": 40,
    }
)

# personal-data kind -> priority
PII_KINDS = MappingProxyType(
    {
        "CREDIT_CARD": 35,
        "IBAN": 35,
        "US_SSN": 35,
        "EMAIL": 30,
        "PHONE": 20,
        "IP_ADDRESS": 15,
        "PERSON": 10,
    }
)

ALL_KINDS = MappingProxyType({**SECRET_KINDS, **PII_KINDS})

# Personal data is numbered per distinct value ([REDACTED:EMAIL_1], [REDACTED:EMAIL_2]) so a reader
# can tell two people apart; secrets are not (nobody needs to tell two passwords apart).
NUMBERED_KINDS = frozenset(PII_KINDS)


def priority(kind: str) -> int:
    return ALL_KINDS.get(kind, 0)


def parse_pii_kinds(value: str | list[str] | tuple[str, ...] | frozenset[str] | None) -> frozenset[str]:
    """'EMAIL, PHONE' (or a list) -> a validated set of personal-data kinds; '' / 'none' -> empty."""
    if value is None:
        return frozenset()
    items = value.split(",") if isinstance(value, str) else list(value)
    kinds = {item.strip().upper() for item in items if item and item.strip()}
    kinds.discard("NONE")
    unknown = sorted(kinds - set(PII_KINDS))
    if unknown:
        raise ValueError(
            f"unknown personal-data kind(s) {', '.join(unknown)}; "
            f"choose from {', '.join(sorted(PII_KINDS))} (secrets are always removed)"
        )
    return frozenset(kinds)
