"""decide: choose the next action. The policy in code decides alone offline; with an LLM, the LLM
proposes and the same policy disposes (invalid, unavailable or unsafe choices are overridden)."""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass

from langgraph.runtime import Runtime

import prompts
from graphs.context import SupportContext
from graphs.errors import LLMError
from graphs.ports import ChatMessage
from graphs.state import SupportState
from nodes.embed_query import is_follow_up, search_variants
from nodes.replies import LLM_FALLBACK_NOTICE
from nodes.retrieve import confident_chunks

log = logging.getLogger(__name__)

# The actions this graph can route to; the agentic branches extend this tuple.
ACTIONS: tuple[str, ...] = ("answer", "clarify", "search_kb")
MAX_CLARIFY_STREAK = 2  # never ask more than two clarifying questions in a row


@dataclass(frozen=True)
class Decision:
    action: str
    reasoning: str
    decided_by: str = "policy"


def _untried_variants(state: SupportState) -> list[str]:
    tried = set(state.get("tried_queries", []))
    return [v for v in search_variants(state) if v not in tried]


def policy_decision(state: SupportState, ctx: SupportContext) -> Decision:
    """The rules, in order. Readable top to bottom; the first that holds decides."""
    if state.get("small_talk"):
        return Decision("answer", f"small talk ({state['small_talk']}): reply without the knowledge base")
    if state.get("is_vague") and not is_follow_up(state) and state.get("clarify_streak", 0) < MAX_CLARIFY_STREAK:
        return Decision("clarify", "the message names no system or symptom to search for")
    confident = confident_chunks(state, ctx.min_score)
    if confident:
        return Decision("answer", f"{len(confident)} passage(s) at or above the answer threshold "
                                  f"(best {confident[0]['score']:.2f})")
    searches = state.get("search_count", 0)
    if searches < ctx.max_searches and _untried_variants(state):
        return Decision("search_kb", f"no confident passage after {searches} search(es); trying another wording")
    return Decision("answer", f"no confident passage after {searches} search(es); answer honestly that the "
                              "knowledge base does not cover it")


def enforce_policy(proposed: Decision, state: SupportState, ctx: SupportContext) -> Decision:
    """Code disposes: keep the LLM's choice only when the policy allows it here and now."""
    fallback = policy_decision(state, ctx)
    if proposed.action not in ACTIONS:
        return Decision(fallback.action, f"LLM proposed '{proposed.action}', which is not available; "
                                         f"policy: {fallback.reasoning}")
    if proposed.action == "search_kb" and (
        state.get("search_count", 0) >= ctx.max_searches or not _untried_variants(state)
    ):
        return Decision(fallback.action, f"LLM asked to search again, but the search budget is spent; "
                                         f"policy: {fallback.reasoning}")
    if proposed.action == "clarify" and state.get("clarify_streak", 0) >= MAX_CLARIFY_STREAK:
        return Decision("answer", "LLM asked another clarifying question, but two were already asked")
    return proposed


_JSON_OBJECT = re.compile(r"\{.*\}", re.S)


def parse_decision(reply: str) -> Decision:
    """Read {"action": …, "reasoning": …} from an LLM reply; raise LLMError when there is none."""
    match = _JSON_OBJECT.search(reply)
    if not match:
        raise LLMError("decision reply had no JSON object")
    try:
        data = json.loads(match.group(0))
    except json.JSONDecodeError as exc:
        raise LLMError(f"decision reply was not valid JSON: {exc}") from exc
    action = str(data.get("action", "")).strip().lower()
    if not action:
        raise LLMError("decision reply named no action")
    return Decision(action, str(data.get("reasoning") or data.get("thinking") or "").strip(), "llm")


def _doc_summaries(state: SupportState) -> str:
    chunks = state.get("retrieved_chunks", [])
    if not chunks:
        return "(none found)"
    return "\n".join(f"- {c['title']} > {c['section'] or 'overview'} (score {c['score']:.2f})" for c in chunks)


def _ask_llm(state: SupportState, ctx: SupportContext) -> Decision:
    prompt = prompts.render(
        "decide",
        user_query=state["query"],
        intent=state.get("intent", "informative"),
        user_os=state.get("user_os") or "unknown",
        search_count=state.get("search_count", 0),
        max_searches=ctx.max_searches,
        doc_summaries=_doc_summaries(state),
        actions=", ".join(ACTIONS),
    )
    reply = ctx.llm.complete([ChatMessage("system", prompts.render("system")), ChatMessage("user", prompt)],
                             max_tokens=300)
    return parse_decision(reply)


def decide(state: SupportState, runtime: Runtime[SupportContext]) -> dict:
    ctx = runtime.context
    update: dict = {}
    if ctx.llm is None or state.get("small_talk") or state.get("fallback_notice"):
        decision = policy_decision(state, ctx)
    else:
        try:
            decision = enforce_policy(_ask_llm(state, ctx), state, ctx)
        except LLMError as exc:
            log.warning("decision LLM failed, using the policy: %s", exc)
            decision = policy_decision(state, ctx)
            decision = Decision(decision.action, f"LLM unavailable ({exc}); policy: {decision.reasoning}")
            update["fallback_notice"] = LLM_FALLBACK_NOTICE
    update.update(action=decision.action, decision_reasoning=decision.reasoning, decided_by=decision.decided_by)
    return update
