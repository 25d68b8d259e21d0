"""clarify: one specific question when the message is too vague to search."""

from __future__ import annotations

import logging
import re
from typing import TYPE_CHECKING

from langchain_core.messages import AIMessage
from langgraph.runtime import Runtime

import prompts
from core.errors import LLMError
from core.lexicon import OS_LABELS
from core.ports import ChatMessage
from nodes.support.answer import format_history
from nodes.support.replies import CLARIFY_GENERIC, CLARIFY_OPTIONS, CLARIFY_WITH_OS, LLM_FALLBACK_NOTICE

if TYPE_CHECKING:
    from graphs.support import SupportContext, SupportState

log = logging.getLogger(__name__)
CLARIFY_ERROR_DETAILS = "What exactly do you see when it fails: an error message, a warning light, or nothing at all?"
_GENERIC_QUESTION = re.compile(
    r"^(can|could) you (please )?(provide|give|share) (some )?more (details|information)\??$", re.I
)
MAX_QUESTION_CHARS = 400


def _last_assistant_text(state: SupportState) -> str:
    for message in reversed(state.get("messages", [])):
        if isinstance(message, AIMessage):
            return str(message.content)
    return ""


def offline_question(state: SupportState, min_score: float) -> str:
    # only offer articles for a message that names something: for "it's not working", whatever the
    # search returned matched filler words, and offering it would be noise
    titles = (
        []
        if state["turn"].get("is_vague")
        else list(
            dict.fromkeys(c["title"] for c in state["turn"].get("retrieved_chunks", []) if c["score"] >= min_score)
        )
    )
    if len(titles) >= 2:
        options = titles[:3]
        question = CLARIFY_OPTIONS.format(options=", ".join(options[:-1]) + f" or {options[-1]}")
    elif (user_os := state.get("user_os")) and len(state["turn"]["query"].split()) <= 5:
        question = CLARIFY_WITH_OS.format(os=OS_LABELS[user_os])
    else:
        question = CLARIFY_GENERIC
    if question == _last_assistant_text(state):  # never ask the same thing twice in a row
        question = CLARIFY_ERROR_DETAILS
    return question


def validate_question(text: str) -> str:
    question = text.strip().strip('"')
    if not question.endswith("?") or len(question) > MAX_QUESTION_CHARS or _GENERIC_QUESTION.match(question):
        raise LLMError("clarifying reply was not one specific question")
    return question


def clarify(state: SupportState, runtime: Runtime[SupportContext]) -> dict:
    ctx = runtime.context
    update: dict = {"needs_input": True, "is_clarifying": True, "sources": []}
    if ctx.llm is not None and not state["turn"].get("fallback_notice"):
        try:
            prompt = prompts.render(
                "clarify",
                question=state["turn"]["query"],
                history=format_history(state),
                found=", ".join(sorted({c["title"] for c in state["turn"].get("retrieved_chunks", [])}))
                or "nothing relevant",
            )
            reply = ctx.llm.complete(
                [ChatMessage("system", prompts.render("system")), ChatMessage("user", prompt)], max_tokens=120
            )
            return {"turn": update | {"answer": validate_question(reply)}}
        except LLMError as exc:
            log.warning("clarify LLM failed, asking the offline question: %s", exc)
            update["fallback_notice"] = LLM_FALLBACK_NOTICE
    return {"turn": update | {"answer": offline_question(state, ctx.min_score)}}
