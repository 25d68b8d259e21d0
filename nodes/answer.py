"""answer: a cited reply from the retrieved passages — extractive offline, grounded LLM when configured."""

from __future__ import annotations

import logging
import re

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.runtime import Runtime

import prompts
from graphs.context import SupportContext
from graphs.errors import LLMError
from graphs.ports import ChatMessage
from graphs.records import RetrievedChunk, Source
from graphs.state import SupportState
from nodes.extractive import cite, compose_answer, label, to_source
from nodes.lexicon import OS_LABELS, asks_status
from nodes.replies import (LLM_FALLBACK_NOTICE, NOT_FOUND, NOT_FOUND_CLOSEST, NOT_FOUND_NEXT,
                           SMALL_TALK_REPLIES)
from nodes.retrieve import confident_chunks

log = logging.getLogger(__name__)
_CITATION = re.compile(r"\[(\d{1,2})\]")
HISTORY_FOR_PROMPT = 6  # messages


def not_found_reply(state: SupportState) -> str:
    titles = list(dict.fromkeys(c["title"] for c in state.get("retrieved_chunks", [])))[:3]
    parts = [NOT_FOUND]
    if titles:
        parts.append(NOT_FOUND_CLOSEST.format(titles=", ".join(titles)))
    parts.append(NOT_FOUND_NEXT)
    return " ".join(parts)


def format_history(state: SupportState, limit: int = HISTORY_FOR_PROMPT) -> str:
    lines = []
    for message in state.get("messages", [])[-limit:]:
        who = "User" if isinstance(message, HumanMessage) else "Assistant" if isinstance(message, AIMessage) else None
        if who:
            lines.append(f"{who}: {message.content}")
    return "\n".join(lines) or "(this is the first message)"


def format_sources(chunks: list[RetrievedChunk]) -> str:
    """Numbered sources as delimited data: the LLM reads them, it does not take orders from them."""
    return "\n\n".join(
        f'<source id="{n}" title="{label(c)}" file="{c["source"]}">\n{c["text"]}\n</source>'
        for n, c in enumerate(chunks, start=1)
    )


def validate_citations(reply: str, given: int) -> list[int]:
    """Numbers cited in the reply; LLMError if one points at a source that was not given."""
    cited = sorted({int(n) for n in _CITATION.findall(reply)})
    bad = [n for n in cited if n < 1 or n > given]
    if bad:
        raise LLMError(f"reply cited source(s) {bad} but only {given} were given")
    return cited


def llm_answer(state: SupportState, ctx: SupportContext, chunks: list[RetrievedChunk]) -> tuple[str, list[Source]]:
    prompt = prompts.render(
        "answer",
        sources=format_sources(chunks),
        history=format_history(state),
        question=state["query"],
        user_os=OS_LABELS.get(state.get("user_os") or "", "unknown"),
    )
    reply = ctx.llm.complete([ChatMessage("system", prompts.render("system")), ChatMessage("user", prompt)],
                             max_tokens=ctx.llm_max_tokens).strip()
    if not reply:
        raise LLMError("empty answer")
    cited = validate_citations(reply, len(chunks))
    sources = [to_source(n, chunks[n - 1]) for n in (cited or range(1, len(chunks) + 1))]
    if "Sources:" not in reply:
        reply += "\n\nSources:\n" + "\n".join(cite(s["n"], s) for s in sources)
    return reply, sources


def knowledge_answer(state: SupportState, ctx: SupportContext, update: dict) -> tuple[str, list[Source]]:
    """The cited answer from the knowledge base (LLM-written when configured), or the honest not-found."""
    chunks = confident_chunks(state, ctx.min_score)
    if not chunks:
        return not_found_reply(state), []
    if ctx.llm is not None and not state.get("fallback_notice") and not update.get("fallback_notice"):
        try:
            return llm_answer(state, ctx, chunks)
        except LLMError as exc:
            log.warning("answer LLM failed, answering extractively: %s", exc)
            update["fallback_notice"] = LLM_FALLBACK_NOTICE
    return compose_answer(state.get("search_query") or state["query"], chunks, state.get("user_os"))


def with_status(state: SupportState, text: str) -> str:
    """Known incidents go first ("VPN is down" → the VPN incident); a failed status check is said plainly."""
    note = state.get("status_summary") if state.get("status_checked") else ""
    if not note:
        return text
    if state.get("incidents"):
        return f"{note}\n\nIT already knows about this and is working on it, so it may not be something you can " \
               f"fix yourself. In the meantime, here is what the knowledge base says:\n\n{text}"
    return f"{text}\n\n{note}"


def resume_hint(state: SupportState) -> str:
    flow = state.get("troubleshooting")
    if flow and flow["status"] == "paused":
        return f'\n\n(When you\'re ready, say "continue" to get back to: {flow["issue"]})'
    return ""


def answer(state: SupportState, runtime: Runtime[SupportContext]) -> dict:
    ctx = runtime.context
    update: dict = {"needs_input": False, "is_clarifying": False}
    if state.get("small_talk"):
        return update | {"answer": SMALL_TALK_REPLIES[state["small_talk"]], "sources": []}
    if asks_status(state["query"]) and state.get("status_checked"):
        return update | {"answer": state.get("status_summary", "") + resume_hint(state), "sources": []}
    text, sources = knowledge_answer(state, ctx, update)
    return update | {"answer": with_status(state, text) + resume_hint(state), "sources": sources}
