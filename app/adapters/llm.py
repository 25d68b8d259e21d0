"""LLM adapters behind the ChatModel port: none (default), Groq, or any OpenAI-compatible server.

LangChain chat models are used underneath so that Langfuse's LangChain callback records every
generation (prompt, reply, token counts) inside the graph run that made it.
"""

from __future__ import annotations

import logging
import re
from typing import Sequence

from app.adapters.redaction.engine import PolicyRedactor
from app.settings import Settings
from core.errors import LLMError
from core.policy_config import LLMSpec
from core.ports import ChatMessage, ChatModel, Redactor

log = logging.getLogger(__name__)


def _to_langchain(messages: Sequence[ChatMessage]):
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

    kinds = {"system": SystemMessage, "user": HumanMessage, "assistant": AIMessage}
    return [kinds[m.role](content=m.content) for m in messages]


class LangChainChatModel:
    """Wraps a LangChain BaseChatModel; every failure becomes LLMError so callers can fall back."""

    def __init__(self, model, name: str, *, max_tokens_in_body: bool = False) -> None:
        self._model = model
        self.name = name
        # langchain-openai sends `max_completion_tokens`; llama.cpp, Ollama and older vLLM read `max_tokens`
        self._max_tokens_in_body = max_tokens_in_body

    def complete(self, messages: Sequence[ChatMessage], *, max_tokens: int | None = None) -> str:
        if not max_tokens:
            model = self._model
        elif self._max_tokens_in_body:
            model = self._model.bind(extra_body={"max_tokens": max_tokens})
        else:
            model = self._model.bind(max_tokens=max_tokens)
        try:
            reply = model.invoke(_to_langchain(messages))
        except Exception as exc:  # HTTP errors, timeouts, bad JSON from the server: all mean "no answer"
            raise LLMError(f"{self.name}: {type(exc).__name__}: {exc}") from exc
        content = (
            reply.content
            if isinstance(reply.content, str)
            else "".join(part.get("text", "") if isinstance(part, dict) else str(part) for part in reply.content)
        )
        if not content.strip():
            raise LLMError(f"{self.name}: empty reply")
        return content


def build_chat_model(settings: Settings) -> ChatModel | None:
    """The configured LLM, or None for the offline default."""
    provider = settings.llm.resolved_llm_provider
    if provider == "none":
        return None
    if provider == "groq":
        from langchain_groq import ChatGroq

        groq = ChatGroq(
            model_name=settings.llm.groq_model,  # what `model=` sets: the field's own name type-checks
            api_key=settings.llm.groq_api_key.get_secret_value() if settings.llm.groq_api_key else None,
            base_url=settings.llm.groq_base_url,
            timeout=settings.llm.llm_timeout_s,
            max_retries=1,
            temperature=0.1,
        )
        return LangChainChatModel(groq, name=f"groq:{settings.llm.groq_model}")
    from langchain_openai import ChatOpenAI

    model_name = settings.llm.llm_model or "default"
    model = ChatOpenAI(
        model=model_name,
        base_url=settings.llm.llm_base_url,
        # local servers (Ollama, llama.cpp) need no key, but the client insists on one
        api_key=settings.llm.llm_api_key.get_secret_value() if settings.llm.llm_api_key else "not-needed",
        timeout=settings.llm.llm_timeout_s,
        max_retries=1,
        temperature=0.1,
    )
    return LangChainChatModel(model, name=f"openai:{model_name}", max_tokens_in_body=True)


def build_named_chat_model(spec: LLMSpec, model: str | None = None) -> ChatModel | None:
    """An LLM the configuration file names (app/config_file.py); None for `type: none`."""
    model_name = model or spec.model
    if spec.type == "none":
        return None
    if spec.type == "groq":
        from langchain_groq import ChatGroq

        groq = ChatGroq(
            model_name=model_name or "llama-3.3-70b-versatile",
            api_key=spec.api_key,
            base_url=spec.base_url,
            timeout=spec.timeout_s,
            max_retries=1,
            temperature=0.1,
        )
        return LangChainChatModel(groq, name=f"{spec.name}:groq:{model_name}")
    from langchain_openai import ChatOpenAI

    chat = ChatOpenAI(
        model=model_name or "default",
        base_url=spec.base_url,
        api_key=spec.api_key or "not-needed",
        timeout=spec.timeout_s,
        max_retries=1,
        temperature=0.1,
    )
    return LangChainChatModel(chat, name=f"{spec.name}:openai:{model_name or 'default'}", max_tokens_in_body=True)


# Company documents are quoted to the LLM inside <source …> … </source> (nodes/support/answer.py); they keep the
# contacts they publish (servicedesk@…), so only secrets are removed there. Everything else in a prompt
# (the user's words, the conversation) gets the full LLM policy.
_DATA_BLOCK = re.compile(r"<source\b[^>]*>(.*?)</source>", re.S)


class RedactingChatModel:
    """The LLM behind the redactor: every outgoing message passes the `llm` destination policy."""

    def __init__(self, inner: ChatModel, redactor: Redactor) -> None:
        self._inner = inner
        self._redactor = redactor
        self.name = inner.name

    @property
    def inner(self) -> ChatModel:
        return self._inner

    def _redact(self, content: str) -> str:
        exempt = [m.span(1) for m in _DATA_BLOCK.finditer(content)]
        if exempt and isinstance(self._redactor, PolicyRedactor):
            return self._redactor.redact(content, pii_exempt=exempt).text
        return self._redactor.redact(content).text

    def complete(self, messages: Sequence[ChatMessage], *, max_tokens: int | None = None) -> str:
        redacted = [ChatMessage(m.role, self._redact(m.content)) for m in messages]
        return self._inner.complete(redacted, max_tokens=max_tokens)
