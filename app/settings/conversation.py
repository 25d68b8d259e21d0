"""Settings of the conversation: the LLM and what the agent may do."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr, field_validator, model_validator

from app.settings.base import Group, env


class LLMSettings(Group):
    """The optional LLM."""

    llm_provider: Literal["auto", "none", "groq", "openai"] = Field(
        "auto",
        validation_alias=env("DESKMATE_LLM_PROVIDER"),
        description=(
            "`auto`: groq if `GROQ_API_KEY` is set, openai if `DESKMATE_LLM_BASE_URL` is set, else none; "
            "or force `none`, `groq`, `openai`."
        ),
    )
    llm_base_url: str | None = Field(
        None,
        validation_alias=env("DESKMATE_LLM_BASE_URL", "OPENAI_BASE_URL"),
        description="OpenAI-compatible server, e.g. http://127.0.0.1:11434/v1 (Ollama).",
    )
    llm_model: str | None = Field(
        None, validation_alias=env("DESKMATE_LLM_MODEL"), description="Model name for the OpenAI-compatible server."
    )
    llm_api_key: SecretStr | None = Field(
        None,
        validation_alias=env("DESKMATE_LLM_API_KEY", "OPENAI_API_KEY"),
        description="API key for the OpenAI-compatible server, if it needs one.",
    )
    groq_api_key: SecretStr | None = Field(
        None, validation_alias=env("GROQ_API_KEY"), description="Groq API key; enables Groq when set."
    )
    groq_model: str = Field(
        "llama-3.3-70b-versatile", validation_alias=env("GROQ_MODEL"), description="Groq model name."
    )
    groq_base_url: str | None = Field(
        None, validation_alias=env("GROQ_BASE_URL"), description="Override Groq's API address (proxies, tests)."
    )
    llm_timeout_s: float = Field(
        20.0,
        gt=0,
        le=300,
        validation_alias=env("DESKMATE_LLM_TIMEOUT_S"),
        description="Per-call LLM timeout; on expiry deskmate falls back offline.",
    )
    llm_max_tokens: int = Field(
        1024,
        ge=16,
        le=8192,
        validation_alias=env("DESKMATE_LLM_MAX_TOKENS"),
        description="Longest LLM reply requested.",
    )

    @field_validator("llm_base_url", "llm_model", "groq_base_url", mode="before")
    @classmethod
    def _empty_means_unset(cls, value):
        return None if isinstance(value, str) and not value.strip() else value

    @model_validator(mode="after")
    def _refuse_unusable_llm_config(self) -> LLMSettings:
        if self.llm_provider == "openai" and not self.llm_base_url:
            raise ValueError(
                "DESKMATE_LLM_PROVIDER=openai needs DESKMATE_LLM_BASE_URL (and usually DESKMATE_LLM_MODEL)"
            )
        if self.llm_provider == "groq" and not self.groq_api_key:
            raise ValueError("DESKMATE_LLM_PROVIDER=groq needs GROQ_API_KEY")
        return self

    @property
    def resolved_llm_provider(self) -> Literal["none", "groq", "openai"]:
        if self.llm_provider != "auto":
            return self.llm_provider
        if self.groq_api_key:
            return "groq"
        if self.llm_base_url:
            return "openai"
        return "none"


class ConversationSettings(Group):
    """The conversation: the answer policy file, history, message size, the actions the decision LLM is offered (nodes/support/actions.py), a person, other languages."""

    config_file: Path | None = Field(
        None,
        validation_alias=env("DESKMATE_CONFIG"),
        description=(
            "YAML file with named LLMs, knowledge collections, intent detection and response rules (see "
            "Answer policy and `examples/`); validated at start-up, every problem listed at once. Unset: "
            "the built-in defaults, configured by these variables alone."
        ),
    )
    history_turns: int = Field(
        10,
        ge=1,
        le=100,
        validation_alias=env("DESKMATE_HISTORY_TURNS"),
        description="Conversation turns kept in session memory.",
    )
    max_message_chars: int = Field(
        4000, ge=1, validation_alias=env("DESKMATE_MAX_MESSAGE_CHARS"), description="Longest chat message accepted."
    )
    action_top_k: int = Field(
        2,
        ge=0,
        le=20,
        validation_alias=env("DESKMATE_ACTION_TOP_K"),
        description=(
            "Actions offered to the decision LLM besides the core ones: the best "
            "matches of the message to each action's example queries (with the 7 "
            "built-in actions and the default core, the LLM sees 5). `0`: the core "
            "actions only."
        ),
    )
    core_actions: str = Field(
        "answer,clarify,create_ticket",
        validation_alias=env("DESKMATE_CORE_ACTIONS"),
        description=(
            "Actions always offered to the decision LLM (comma-separated) when the "
            "deployment can carry them out; unknown names are refused at start-up. "
            "Add `search_kb` to let the LLM ask for another search whatever the "
            "message says (its examples rarely match a message: it is about how the"
            " search went)."
        ),
    )
    integration_min_score: float = Field(
        0.6,
        ge=0.0,
        le=1.0,
        validation_alias=env("DESKMATE_INTEGRATION_MIN_SCORE"),
        description="Without an LLM, a message is sent to a configured "
        "integration (DESKMATE_CONFIG `integrations:`) when its "
        "closest example query is at least this similar (cosine) "
        "and closer than every built-in action's examples.",
    )
    handoff_contact: str = Field(
        "",
        max_length=500,
        validation_alias=env("DESKMATE_HANDOFF_CONTACT"),
        description=(
            'How a person at the IT service desk is reached, told to users who ask for one ("real agent '
            'please", "can I talk to someone") and to "are you a bot?", e.g. `call +1 555 0100 or open '
            "https://it.example.com/portal`. Unset: the way to a person is a ticket carrying the redacted"
            " conversation (offered, confirmed by the user); set, the contact is given and the ticket "
            "still offered."
        ),
    )
    language_detection: bool = Field(
        True,
        validation_alias=env("DESKMATE_LANGUAGE_DETECTION"),
        description=(
            "Detect messages in another language than English (py3langid, its model inside the package; "
            "about 80 MB in memory, 0.3 ms a message; only messages of 3+ words, at probability ≥ 0.7). "
            "With an LLM the message is translated into English for the search and the reply translated "
            "back; without one, deskmate says in that language (de, fr, es, it, pt, nl, pl, sv; English "
            "otherwise) that only English documents are searched."
        ),
    )

    @field_validator("config_file", mode="before")
    @classmethod
    def _empty_means_unset(cls, value):
        return None if isinstance(value, str) and not value.strip() else value

    @field_validator("core_actions")
    @classmethod
    def _known_actions(cls, value: str) -> str:
        from nodes.support.actions import parse_action_names

        try:
            return ",".join(parse_action_names(value))
        except ValueError as exc:
            raise ValueError(f"DESKMATE_CORE_ACTIONS: {exc}") from exc

    @property
    def core_action_names(self) -> tuple[str, ...]:
        return tuple(n for n in self.core_actions.split(",") if n)
