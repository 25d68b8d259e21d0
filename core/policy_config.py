"""The answer policy as data: named LLMs, knowledge collections, intent
detection and the ordered response rules. Built from the YAML file by app/config_file.py, or — with no
file — `default_policy()`, which reproduces deskmate's behaviour without one.

Pure data: nodes/support/policy.py evaluates it, the app builds the adapters it names.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal

LLMType = Literal["groq", "openai-compatible", "none"]
RAG_RESULTS = ("match", "partial", "none")
# the fields a rule's `match` may test (plus `<field>_regexp` for each) and what they hold in the profile
MATCH_FIELDS = ("rag_result", "intent", "collection", "service", "response_mode", "user_message")
DEFAULT_LLM = "default"  # the environment-configured LLM (DESKMATE_LLM_* / GROQ_*), when there is one


@dataclass(frozen=True)
class LLMSpec:
    name: str
    type: LLMType
    base_url: str | None = None
    api_key: str | None = field(default=None, repr=False)
    model: str | None = None
    timeout_s: float = 30.0


@dataclass(frozen=True)
class CollectionSpec:
    """A knowledge collection: `collection` is its Chroma name. Thresholds are cosine distances
    (1 − the calibrated score): below `match_threshold` a result is a match, below
    `candidate_threshold` a partial match, else it is left out."""

    name: str
    collection: str
    match_threshold: float
    candidate_threshold: float | None = None
    intent_identifier: str | None = None
    description: str = ""
    prompt: str = ""  # ${profile.service_prompt}
    max_tokens: int | None = None  # ${profile.service_tokens}


@dataclass(frozen=True)
class IntentDetection:
    llm: str
    categories: tuple[tuple[str, str], ...]  # (name, description)
    model: str | None = None


@dataclass(frozen=True)
class ResponseRule:
    """First match wins. An empty `match` always matches (the fallback)."""

    index: int
    name: str
    match: tuple[tuple[str, Any], ...] = ()  # (field, value) or (field_regexp, compiled pattern)
    prompt: str | None = None  # None: deskmate's own answer prompt (prompts/answer.txt)
    llm: str = DEFAULT_LLM
    model: str | None = None
    max_tokens: int | str | None = None  # an int, or "${profile.service_tokens}"

    @property
    def is_fallback(self) -> bool:
        return not self.match

    def needs_intent(self) -> bool:
        return any(key in ("intent", "intent_regexp") for key, _ in self.match)

    def describe(self) -> dict:
        return {
            "index": self.index,
            "name": self.name,
            "llm": self.llm,
            "model": self.model,
            "match": {k: (v.pattern if isinstance(v, re.Pattern) else v) for k, v in self.match},
        }


@dataclass(frozen=True)
class IntegrationSpec:
    """A read-only lookup in another system (a configured tool), offered to the decision agent
    like its own actions: described by `examples`, chosen by embedding similarity, called with GET.

    `url` may hold `${user}` (the signed-in caller's id) and `${query}` (the redacted message), each
    URL-encoded when the call is made; `${VAR}` environment references are already resolved."""

    name: str
    description: str
    examples: tuple[str, ...]
    url: str
    headers: tuple[tuple[str, str], ...] = field(default=(), repr=False)  # may carry credentials
    timeout_s: float = 5.0
    max_bytes: int = 65_536

    @property
    def needs_user(self) -> bool:
        return "${user}" in self.url


BUILTIN_SOURCE = "built-in defaults"


@dataclass(frozen=True)
class AnswerPolicy:
    llms: tuple[LLMSpec, ...] = ()
    collections: tuple[CollectionSpec, ...] = ()
    responses: tuple[ResponseRule, ...] = ()
    intent_detection: IntentDetection | None = None
    response_mode: str = "SMART_FALLBACK"
    agent_llm: str = DEFAULT_LLM  # decides, clarifies, troubleshoots and drafts tickets
    integrations: tuple[IntegrationSpec, ...] = ()  # read-only lookups the decision agent may choose
    source: str = BUILTIN_SOURCE  # the file it came from, for logs and /health

    @property
    def configured(self) -> bool:
        """Written by someone (a configuration file), not deskmate's built-in defaults."""
        return self.source != BUILTIN_SOURCE

    def collection(self, name: str) -> CollectionSpec | None:
        return next((c for c in self.collections if c.name == name), None)


def default_policy(*, chroma_collection: str, min_score: float, candidate_floor: float = 0.75) -> AnswerPolicy:
    """Without a configuration file: the one knowledge collection, answered with deskmate's own prompt by
    the environment's LLM (or extractively), and the honest not-found otherwise."""
    kb = CollectionSpec(
        name="kb",
        collection=chroma_collection,
        match_threshold=round(1 - min_score, 4),
        candidate_threshold=round(1 - min_score * candidate_floor, 4),
        intent_identifier="knowledge_base",
        description="the company IT knowledge base",
    )
    return AnswerPolicy(
        collections=(kb,),
        responses=(
            ResponseRule(index=0, name="knowledge base match", match=(("rag_result", "match"),)),
            ResponseRule(index=1, name="fallback"),
        ),
    )
