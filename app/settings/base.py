"""What every group of settings shares: how a group reads the environment, and what a real secret is."""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import AliasChoices
from pydantic_settings import BaseSettings, SettingsConfigDict

BUNDLED_KB_DIR = Path(__file__).resolve().parent.parent.parent / "kb"


def env(*names: str) -> AliasChoices:
    """The environment variables a setting is read from, the first one winning."""
    return AliasChoices(*names)


MIN_SECRET_CHARS = 32  # HS256 wants a key of at least 256 bits (RFC 7518 §3.2)
# Values seen in examples, compose files and tutorials: none of them may guard a production deployment.
_DEFAULT_SECRET_WORDS = (
    "change-me",
    "changeme",
    "change_me",
    "replace-me",
    "replaceme",
    "your-",
    "example",
    "placeholder",
    "secret",
    "password",
    "admin",
    "deskmate",
    "test",
    "default",
)


# a short unit typed again and again: `Qwerty123!Qwerty123!Qwerty123!Qwerty123!` is as long as a key, not as strong
_REPEATED = re.compile(r"(.{1,16}?)\1{2,}.{0,16}", re.S)


def is_default_secret(value: str) -> bool:
    """A placeholder, a well-known default, text with almost no variety (e.g. 0000…) or one short unit
    repeated."""
    lowered = value.strip().lower()
    if len(set(lowered)) < 8 or _REPEATED.fullmatch(lowered):
        return True
    return any(lowered.startswith(word) or lowered == word for word in _DEFAULT_SECRET_WORDS) or any(
        word in lowered for word in ("change-me", "changeme", "change_me", "replace-me", "placeholder")
    )


class Group(BaseSettings):
    """One concern's settings, read from the same environment variables (and `.env`) as always."""

    model_config = SettingsConfigDict(env_file=".env", extra="ignore", populate_by_name=True)
