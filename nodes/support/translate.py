"""translate and localize: with an LLM, a message in another language is put into English for the rest of the
turn (search, rules and the answer all read English), and deskmate's reply is put back into that language.

Offline there is no translation: `translate` changes nothing and decide answers with the fixed notice in the
user's language (nodes/support/language.py). A failed or unusable translation is treated the same way, with the
fallback notice; a failed translation of the reply leaves it in English, saying why.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from langgraph.runtime import Runtime

import prompts
from core.errors import LLMError
from core.injection import neutralise_delimiters
from core.ports import ChatMessage
from nodes.support.language import language_name
from nodes.support.replies import LLM_FALLBACK_NOTICE

if TYPE_CHECKING:
    from graphs.support import SupportContext, SupportState

log = logging.getLogger(__name__)
MAX_GROWTH = 4  # a translation longer than this many times the original is not a translation
REPLY_NOT_TRANSLATED = "The reply could not be translated, so it is in English."


def _language(code: str) -> str:
    """The language as the prompt names it: its name and its code (the code survives a redactor that takes a
    language name for a person's name)."""
    return f'{language_name(code)} (language code "{code}")'


def _translation(reply: str, original: str) -> str:
    text = reply.strip().strip('"“”').strip()
    if not text or len(text) > MAX_GROWTH * len(original) + 200:
        raise LLMError("the translation was empty or far longer than the text")
    return text


def translate(state: SupportState, runtime: Runtime[SupportContext]) -> dict:
    """The message in English (`query`), marked `translated`; {} offline or when the LLM fails."""
    ctx = runtime.context
    if ctx.llm is None or state["turn"].get("fallback_notice"):
        return {}
    prompt = prompts.render(
        "translate_to_english",
        language=_language(state["turn"]["language"]),
        message=neutralise_delimiters(state["turn"]["query"], ("message",)),
    )
    try:
        reply = ctx.llm.complete(
            [ChatMessage("system", prompts.render("system")), ChatMessage("user", prompt)], max_tokens=400
        )
        english = neutralise_delimiters(_translation(reply, state["turn"]["query"]))
    except LLMError as exc:
        log.warning("translating the message failed, answering with the language notice: %s", exc)
        return {"turn": {"fallback_notice": LLM_FALLBACK_NOTICE}}
    return {"turn": {"query": english, "translated": True}}


def localize(state: SupportState, runtime: Runtime[SupportContext]) -> dict:
    """deskmate's reply in the user's language; the English reply (and why) when the LLM cannot translate it."""
    ctx = runtime.context
    answer = state["turn"].get("answer", "")
    if ctx.llm is None or not answer.strip():
        return {}
    prompt = prompts.render(
        "translate_reply",
        language=_language(state["turn"]["language"]),
        reply=neutralise_delimiters(answer, ("reply",)),
    )
    try:
        reply = ctx.llm.complete(
            [ChatMessage("system", prompts.render("system")), ChatMessage("user", prompt)],
            max_tokens=max(ctx.llm_max_tokens, 2 * len(answer) // 3),
        )
        return {"turn": {"answer": _translation(reply, answer)}}
    except LLMError as exc:
        log.warning("translating the reply failed, sending it in English: %s", exc)
        return {"turn": {"fallback_notice": state["turn"].get("fallback_notice") or REPLY_NOT_TRANSLATED}}
