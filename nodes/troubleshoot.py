"""troubleshoot: guide the user one step at a time, across turns, and read each reply.

Steps come from the retrieved documentation (the numbered steps of the best passage offline;
LLM-written from the same passages when one is configured), in the order the docs give them
(simplest first). Each reply advances, closes, exits or escalates the workflow; escalation hands
over to the ticket node.
"""

from __future__ import annotations

import json
import logging
import re

from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

import prompts
from graphs.context import SupportContext
from graphs.errors import LLMError
from graphs.filters import AUDIENCE_FIELD, may_read
from graphs.ports import ChatMessage
from graphs.records import RetrievedChunk
from graphs.state import SupportState, Troubleshooting
from nodes.extractive import label, numbered_steps, same_section_run, to_source
from nodes.lexicon import OS_LABELS, content_words, it_topics
from nodes.replies import LLM_FALLBACK_NOTICE
from nodes.article_answer import composed_context, is_confident, read_target
from nodes.compose import target_steps
from nodes.retrieve import caller_groups, confident_chunks
from nodes.ticket_ops import close_session_ticket

log = logging.getLogger(__name__)
MAX_STEPS = 6
MAX_STEP_CHARS = 400
REPLY_HINT = 'Did that fix it? Reply "it works", "still broken", or "stop".'


def steps_source(chunks: list[RetrievedChunk], user_os: str | None = None) -> tuple[list[str], RetrievedChunk | None]:
    """The numbered steps of the best step-bearing passage (its section's continuation included).

    With the user's OS unknown, steps written for one OS are skipped: "after a change on Linux" is no
    first step for someone on a Mac. (Retrieval already dropped other-OS chunks when the OS is known.)
    """
    usable = [c for c in chunks if user_os or not c["os"]]
    for chunk in usable[:3]:
        steps = [s for c in same_section_run(chunk, chunks) for s in numbered_steps(c["text"])]
        if len(steps) >= 2:
            return steps[:MAX_STEPS], chunk
    return [], None


def candidate_steps(chunks: list[RetrievedChunk], user_os: str | None = None) -> list[str]:
    return steps_source(chunks, user_os)[0]


def walkthrough(state: SupportState, ctx: SupportContext) -> tuple[list[str], RetrievedChunk | None, str]:
    """The steps to walk through, the chunk they are cited from, and a "This matches: …" line: the resolution
    (or procedure) of the best article from its first step, each step with the code or list under it; the
    numbered steps of the best passage when no article can be read whole."""
    reading = read_target(state, ctx) if is_confident(state, ctx) else None
    if reading is not None:
        steps = target_steps(reading.target)
        if len(steps) >= 2:
            anchor = dict(reading.target.anchor or reading.target.sections[0].chunks[0])
            anchor["section"] = reading.target.sections[0].name
            return steps[:MAX_STEPS], anchor, reading.target.matches  # type: ignore[return-value]
    steps, chunk = steps_source(confident_chunks(state, ctx.min_score), state.get("user_os"))
    return steps, chunk, ""


def walkthrough_steps(state: SupportState, ctx: SupportContext) -> list[str]:
    return walkthrough(state, ctx)[0]


def workflow_reply(state: SupportState) -> str:
    """The reply read in the context of a step: resolved, failed, exit, resume or ask (unclear)."""
    kind = state.get("reply_kind", "")
    return {"resolved": "resolved", "affirm": "resolved", "failed": "failed", "deny": "failed",
            "exit": "exit", "resume": "resume"}.get(kind, "ask")


def _llm_steps(state: SupportState, ctx: SupportContext, chunks: list[RetrievedChunk]) -> list[str]:
    from nodes.answer import format_sources

    prompt = prompts.render("troubleshoot", sources=format_sources(chunks[:3]), issue=state["query"],
                            user_os=OS_LABELS.get(state.get("user_os") or "", "unknown"))
    reply = ctx.llm.complete([ChatMessage("system", prompts.render("system")), ChatMessage("user", prompt)],
                             max_tokens=600)
    match = re.search(r"\{.*\}", reply, re.S)
    try:
        steps = json.loads(match.group(0))["steps"] if match else None
    except (json.JSONDecodeError, KeyError, TypeError) as exc:
        raise LLMError(f"troubleshooting steps were not valid JSON: {exc}") from exc
    if not isinstance(steps, list) or not 2 <= len(steps) <= 8 or not all(
            isinstance(s, str) and 0 < len(s.strip()) <= MAX_STEP_CHARS for s in steps):
        raise LLMError("troubleshooting steps must be a list of 2-8 short strings")
    return [re.sub(r"^\s*(step\s*)?\d+[.):]\s*", "", s.strip(), flags=re.I) for s in steps][:MAX_STEPS]


def _step_text(flow: Troubleshooting) -> str:
    index = flow["current"]
    return f"**Step {index + 1} of {len(flow['steps'])}:** {flow['steps'][index]['step']}\n\n{REPLY_HINT}"


def _progress(flow: Troubleshooting) -> dict:
    return {"troubleshooting": flow}


def start(state: SupportState, ctx: SupportContext) -> dict:
    chunks = confident_chunks(state, ctx.min_score) or list(state.get("retrieved_chunks", []))
    steps, source_chunk, matches = walkthrough(state, ctx)
    update: dict = {}
    if ctx.llm is not None and not state.get("fallback_notice"):
        try:
            steps = _llm_steps(state, ctx, composed_context(state, ctx, chunks))
        except LLMError as exc:
            log.warning("troubleshooting LLM failed, using the documented steps: %s", exc)
            update["fallback_notice"] = LLM_FALLBACK_NOTICE
    source_chunk = source_chunk or chunks[0]
    flow = Troubleshooting(
        issue=state["query"], topic=", ".join(it_topics(state["query"]) or content_words(state["query"])[:3]),
        steps=[{"step": s, "outcome": "pending"} for s in steps], current=0, failed=0, asked_outcome=False,
        status="in_progress", os=state.get("user_os") or "",
        source={"title": source_chunk["title"], "source": source_chunk["source"], "chunk_id": source_chunk["chunk_id"],
                **({AUDIENCE_FIELD: list(source_chunk[AUDIENCE_FIELD])} if source_chunk.get(AUDIENCE_FIELD) else {})},
    )
    os_note = f" for {OS_LABELS[flow['os']]}" if flow["os"] else ""
    intro = (f"Let's work through this together. I'll take you through {len(steps)} steps{os_note} from "
             f"**{label(source_chunk)}** [1], in the order it gives them.")
    if matches:
        intro = f"This matches: {matches}\n\n{intro}"
    text = f"{intro}\n\n{_step_text(flow)}\n\nSources:\n[1] {label(source_chunk)} — {source_chunk['source']}"
    return update | _progress(flow) | {"answer": text, "sources": [to_source(1, source_chunk)], "needs_input": True}


def _mark(flow: Troubleshooting, outcome: str) -> list:
    steps = [dict(s) for s in flow["steps"]]
    steps[flow["current"]]["outcome"] = outcome
    return steps


LOST_ACCESS = ("I've stopped this walkthrough: its steps come from a document you no longer have access to. "
               'If you still need help, ask again or say "open a ticket".')


def advance(state: SupportState, ctx: SupportContext, config: RunnableConfig) -> dict:
    flow: Troubleshooting = dict(state["troubleshooting"])  # type: ignore[assignment]
    if not may_read(flow.get("source") or {}, caller_groups(config)):
        # the steps were read from a restricted document, and the caller has since left its audience
        flow.update(status="exited", steps=[], current=0, source={})  # nor kept in the session any longer
        return _progress(flow) | {"answer": LOST_ACCESS, "sources": [], "needs_input": False}
    reply = workflow_reply(state)
    if reply == "resume":
        flow["status"] = "in_progress"
        return _progress(flow) | {"answer": f"Back to your issue: {flow['issue']}\n\n{_step_text(flow)}",
                                  "needs_input": True}
    if reply == "resolved":
        flow.update(steps=_mark(flow, "resolved"), status="resolved")
        closed = close_session_ticket(state, ctx, config, reason=f"Resolved by step {flow['current'] + 1}: "
                                                                 f"{flow['steps'][flow['current']]['step']}")
        text = "Great, I'm glad that fixed it!"
        if closed:
            text += f" I've closed ticket **{closed['ticket']['id']}** since it's working now."
        return _progress(flow) | closed | {"answer": text + " Anything else I can help with?", "needs_input": False}
    if reply == "exit":
        flow["status"] = "exited"
        return _progress(flow) | {"needs_input": False, "answer": (
            "OK, I've stopped the troubleshooting. If the problem comes back or you'd like a technician to look at "
            'it, just say "open a ticket".')}
    if reply == "ask" and not flow["asked_outcome"]:
        flow["asked_outcome"] = True
        return _progress(flow) | {"answer": f"Thanks. {REPLY_HINT}", "needs_input": True}
    # failed (or still unclear after asking once): mark it and move on
    flow.update(steps=_mark(flow, "failed"), failed=flow["failed"] + 1, asked_outcome=False)
    if flow["failed"] >= ctx.max_failed_steps or flow["current"] + 1 >= len(flow["steps"]):
        flow["status"] = "escalated"
        return _progress(flow) | {"needs_input": True, "answer": (
            f"I'm sorry, that didn't fix it either. We've tried {flow['failed']} of the documented steps without "
            "success, so this needs a technician.")}
    flow["current"] += 1
    return _progress(flow) | {"answer": f"OK, let's try the next one.\n\n{_step_text(flow)}", "needs_input": True}


def troubleshoot(state: SupportState, runtime: Runtime[SupportContext], config: RunnableConfig) -> dict:
    ctx = runtime.context
    flow = state.get("troubleshooting")
    update: dict = {"is_clarifying": False}
    if flow and (flow["status"] == "in_progress" or (flow["status"] == "paused" and state.get("reply_kind") == "resume")):
        return update | advance(state, ctx, config)
    return update | start(state, ctx)
