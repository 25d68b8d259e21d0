"""All of deskmate's configuration: one `Settings` of groups by concern (server, storage, jobs, retention,
embeddings, retrieval, feedback, ingestion, llm, conversation, tracing, security, redaction, integrations),
each a pydantic-settings class read from the same environment variables as before the groups.

Every field lists the environment variable(s) it is read from and says what it does: the docs' configuration
reference is generated from these classes (app/config_reference.py, `make docs`), and a test fails on a field
without a description, so a new knob cannot go undocumented.
"""

from __future__ import annotations

import warnings
from typing import Any, Iterator, Mapping

from pydantic import BaseModel, model_validator
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings
from pydantic_settings.sources import ENV_FILE_SENTINEL

from app.settings.base import BUNDLED_KB_DIR, MIN_SECRET_CHARS, is_default_secret
from app.settings.conversation import ConversationSettings, LLMSettings
from app.settings.integrations import IntegrationsSettings
from app.settings.safety import RedactionSettings, SecuritySettings, TracingSettings
from app.settings.search import EmbeddingsSettings, FeedbackSettings, IngestionSettings, RetrievalSettings
from app.settings.service import JobsSettings, RetentionSettings, ServerSettings, StorageSettings

__all__ = [
    "BUNDLED_KB_DIR",
    "GROUPS",
    "MIN_SECRET_CHARS",
    "OWNER",
    "Settings",
    "is_default_secret",
    "setting_fields",
    "ServerSettings",
    "StorageSettings",
    "JobsSettings",
    "RetentionSettings",
    "EmbeddingsSettings",
    "RetrievalSettings",
    "FeedbackSettings",
    "IngestionSettings",
    "LLMSettings",
    "ConversationSettings",
    "TracingSettings",
    "SecuritySettings",
    "RedactionSettings",
    "IntegrationsSettings",
]

GROUPS: dict[str, type[BaseSettings]] = {
    "server": ServerSettings,
    "storage": StorageSettings,
    "jobs": JobsSettings,
    "retention": RetentionSettings,
    "embeddings": EmbeddingsSettings,
    "retrieval": RetrievalSettings,
    "feedback": FeedbackSettings,
    "ingestion": IngestionSettings,
    "llm": LLMSettings,
    "conversation": ConversationSettings,
    "tracing": TracingSettings,
    "security": SecuritySettings,
    "redaction": RedactionSettings,
    "integrations": IntegrationsSettings,
}
# a setting's (or a derived value's) group, by its name: flat keywords and flat reads find their group by it
OWNER: dict[str, str] = {
    name: group
    for group, model in GROUPS.items()
    for name in (*model.model_fields, *(n for n, v in vars(model).items() if isinstance(v, property)))
}


def setting_fields() -> Iterator[tuple[str, str, FieldInfo]]:
    """Every setting as (group, name, field), group by group in the reference's order."""
    for group, model in GROUPS.items():
        for name, field in model.model_fields.items():
            yield group, name, field


class Settings(BaseModel):
    """deskmate settings, one group per concern (`settings.retrieval.top_k`); each group reads the same
    environment variables (and `.env`) as always, and environment variables win over defaults.

    `Settings(top_k=3)` puts a flat keyword in its group, like `Settings(retrieval={"top_k": 3})`, and
    `model_copy(update={"top_k": 3})` does the same. A flat read (`settings.top_k`), what code written before
    the groups does, still answers, with a DeprecationWarning naming the group."""

    server: ServerSettings
    storage: StorageSettings
    jobs: JobsSettings
    retention: RetentionSettings
    embeddings: EmbeddingsSettings
    retrieval: RetrievalSettings
    feedback: FeedbackSettings
    ingestion: IngestionSettings
    llm: LLMSettings
    conversation: ConversationSettings
    tracing: TracingSettings
    security: SecuritySettings
    redaction: RedactionSettings
    integrations: IntegrationsSettings

    def __init__(self, _env_file: Any = ENV_FILE_SENTINEL, **values: Any) -> None:
        groups: dict[str, Any] = {}
        for group, model in GROUPS.items():
            given = values.pop(group, None)
            flat = {name: values.pop(name) for name in list(values) if name in model.model_fields}
            if isinstance(given, model):
                groups[group] = given.model_copy(update=flat) if flat else given
            else:
                groups[group] = model(_env_file=_env_file, **{**(given or {}), **flat})
        unknown = sorted(values)
        if unknown:
            raise TypeError(f"Settings has no setting {', '.join(unknown)}")
        super().__init__(**groups)

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Settings:
        """A copy with some values replaced; a flat name is replaced in its group."""
        routed: dict[str, Any] = {}
        for name, value in (update or {}).items():
            group = OWNER.get(name)
            if group is not None and name in GROUPS[group].model_fields:
                routed.setdefault(group, {})[name] = value
            else:
                routed[name] = value
        for group in GROUPS:
            if isinstance(routed.get(group), dict):
                routed[group] = getattr(self, group).model_copy(update=routed[group])
        return super().model_copy(update=routed, deep=deep)

    def __getattr__(self, name: str) -> Any:
        group = OWNER.get(name)
        if group is None:
            return super().__getattr__(name)  # type: ignore[misc]
        warnings.warn(f"settings.{name} is settings.{group}.{name}", DeprecationWarning, stacklevel=2)
        return getattr(getattr(self, group), name)

    @model_validator(mode="after")
    def _postgres_lexical_needs_postgres(self) -> Settings:
        if self.retrieval.lexical_backend == "postgres" and not self.storage.uses_postgres:
            raise ValueError(
                "DESKMATE_LEXICAL_BACKEND=postgres keeps the BM25 index in the database: it needs "
                "DESKMATE_DATABASE_URL=postgresql://… (or set DESKMATE_LEXICAL_BACKEND=memory)"
            )
        return self

    # --- derived from more than one group ------------------------------------------------------------
    @property
    def runs_inprocess_worker(self) -> bool:
        """DESKMATE_INPROCESS_WORKER, or its default: on embedded, off in server mode (a database URL)."""
        inprocess = self.jobs.inprocess_worker
        return inprocess if inprocess is not None else not self.storage.database_url.strip()
