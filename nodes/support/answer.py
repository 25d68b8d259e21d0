"""answer: a cited reply from the retrieved passages — extractive offline, grounded LLM when configured."""

from __future__ import annotations

import logging
import re
from dataclasses import replace
from typing import TYPE_CHECKING

from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

import prompts
from core.errors import LLMError
from core.filters import parse_filter
from core.injection import delimit_data
from core.lexicon import OS_LABELS, asks_status
from core.policy_config import DEFAULT_LLM, CollectionSpec, ResponseRule, default_policy
from core.ports import ChatMessage, ChatModel
from core.readers import is_admin
from core.records import RetrievedChunk, Source
from nodes.support.article_answer import (
    Reading,
    compose_reply,
    composed_context,
    found_articles,
    is_confident,
    not_found_text,
    points_into_article,
    reference_reply,
    runner_up_reply,
    tie,
    with_runner_up,
)
from nodes.support.compose import follow_up_reference
from nodes.support.directives import format_persona
from nodes.support.extractive import cite, compose_answer, label, to_source
from nodes.support.fact import fact_reply
from nodes.support.modes import (
    DEFAULT_FALLBACK_STRATEGY,
    DEFAULT_MIN_CONFIDENCE,
    DEFAULT_MODE,
    GENERAL_KNOWLEDGE_HEADING,
    AnswerPlan,
    plan_answer,
)
from nodes.support.policy import (
    CollectionResult,
    choose_rule,
    classify,
    collect,
    detect_intent,
    evaluate,
    expanded_documents,
    max_tokens_for,
    profile_summary,
    render_prompt,
)
from nodes.support.replies import LLM_FALLBACK_NOTICE, NOT_FOUND_NEXT, SMALL_TALK_REPLIES
from nodes.support.retrieval import search_chunks
from nodes.support.retrieve import caller_groups

if TYPE_CHECKING:
    from graphs.support import SupportContext, SupportState

log = logging.getLogger(__name__)
_CITATION = re.compile(r"\[(\d{1,2})\]")
HISTORY_FOR_PROMPT = 6  # messages


def not_found_reply(state: SupportState, ctx: SupportContext | None = None) -> str:
    """Nothing answers: say so, what was searched for, the closest articles, and what to do next."""
    return f"{not_found_text(state, ctx)} {NOT_FOUND_NEXT}"


def format_history(state: SupportState, limit: int = HISTORY_FOR_PROMPT) -> str:
    lines = []
    for message in state.get("messages", [])[-limit:]:
        who = "User" if isinstance(message, HumanMessage) else "Assistant" if isinstance(message, AIMessage) else None
        if who:
            lines.append(f"{who}: {message.content}")
    return "\n".join(lines) or "(this is the first message)"


def format_sources(chunks: list[RetrievedChunk]) -> str:
    """Numbered sources as delimited data: the LLM reads them, it does not take orders from them."""
    # a document holding "</source>" (or a forged opening tag) cannot end its block early and speak as us
    return "\n\n".join(
        delimit_data(
            "source",
            c["text"],
            id=str(n),
            title=label(c),  # the article's title path: title › section > subsection
            file=c["source"],
            role=c.get("role") or "passage",
            audience=SOURCE_AUDIENCE["admin" if is_admin(c) else "user"],
        )
        for n, c in enumerate(chunks, start=1)
    )


# whom a source addresses (core/readers.py), as the model is told it
SOURCE_AUDIENCE = {"user": "employee", "admin": "IT team only"}


def validate_citations(reply: str, given: int) -> list[int]:
    """Numbers cited in the reply; LLMError if one points at a source that was not given."""
    cited = sorted({int(n) for n in _CITATION.findall(reply)})
    bad = [n for n in cited if n < 1 or n > given]
    if bad:
        raise LLMError(f"reply cited source(s) {bad} but only {given} were given")
    return cited


def llm_answer(
    state: SupportState,
    ctx: SupportContext,
    chunks: list[RetrievedChunk],
    *,
    llm: ChatModel | None = None,
    max_tokens: int | None = None,
) -> tuple[str, list[Source]]:
    prompt = prompts.render(
        "answer",
        sources=format_sources(chunks),
        history=format_history(state),
        question=state["turn"]["query"],
        user_os=OS_LABELS.get(state.get("user_os") or "", "unknown"),
    )
    llm = llm or ctx.llm
    if llm is None:
        raise LLMError("no LLM is configured")
    reply = llm.complete(
        [ChatMessage("system", prompts.render("system")), ChatMessage("user", prompt)],
        max_tokens=max_tokens or ctx.llm_max_tokens,
    ).strip()
    if not reply:
        raise LLMError("empty answer")
    cited = validate_citations(reply, len(chunks))
    sources = [to_source(n, chunks[n - 1]) for n in (cited or range(1, len(chunks) + 1))]
    if "Sources:" not in reply:
        reply += "\n\nSources:\n" + "\n".join(cite(s["n"], s) for s in sources)
    return reply, sources


def _collection_search(state: SupportState, ctx: SupportContext, config: RunnableConfig | None):
    """How phase 1 queries a collection: the main one's chunks were retrieved already (with the caller's
    access filter); another collection runs the same pipeline on its own index."""

    def search(spec: CollectionSpec) -> list[RetrievedChunk]:
        if spec.name == ctx.main_collection:
            return list(state["turn"].get("retrieved_chunks", []))
        index = ctx.collections.get(spec.name)
        if index is None or not state["turn"].get("query_embedding"):
            return []
        scoped = replace(ctx, index=index, lexical=index, feedback=None)
        return search_chunks(
            scoped,
            state["turn"].get("search_query") or state["turn"]["query"],
            state["turn"]["query_embedding"],
            k=ctx.top_k,
            groups=caller_groups(config),
            search_filter=parse_filter(state["turn"].get("search_filters")),
            user_os=state.get("user_os"),
        )

    return search


def _collect(
    state: SupportState,
    ctx: SupportContext,
    selected: list[CollectionSpec],
    config: RunnableConfig | None,
    read: Reading | None = None,
) -> list[CollectionResult]:
    """Phase 1 of the answer policy. With calibrated confidence, the main collection's result is the article
    gate's verdict (a match when the best article answers, nothing otherwise), not a cut-off on one chunk's score;
    other collections are classified by their own thresholds."""
    search = _collection_search(state, ctx, config)
    if ctx.confidence_model is None or "articles" not in state["turn"]:
        return collect(selected, search, ctx.top_k)
    results: list[CollectionResult] = []
    for spec in selected:
        if spec.name == ctx.main_collection:
            if not is_confident(state, ctx):
                continue
            best = found_articles(state, ctx)[0]
            documents = composed_context(
                state, ctx, list(state["turn"].get("retrieved_chunks", [])), groups=caller_groups(config), read=read
            )
            results.append(CollectionResult(spec, "match", round(1 - best["answerable"], 4), documents[: ctx.top_k]))
            break
        result = classify(spec, search(spec), ctx.top_k)
        if result is not None:
            results.append(result)
            if result.result_type == "match":
                break
    return results


def rule_llm(ctx: SupportContext, rule: ResponseRule) -> ChatModel | None:
    """The LLM a rule names (`default`: the agent's own); None when it is `type: none` or not configured."""
    if rule.llm == DEFAULT_LLM and not rule.model:
        return ctx.llm
    return ctx.llms.get(f"{rule.llm}:{rule.model}" if rule.model else rule.llm)


def rule_answer(
    state: SupportState, ctx: SupportContext, rule: ResponseRule, profile: dict, llm: ChatModel
) -> tuple[str, list[Source]]:
    """A configured rule's prompt, filled from the profile, answered by the rule's LLM."""
    instructions, documents = render_prompt(rule, profile)
    question = prompts.render(
        "rule_question",
        history=format_history(state),
        question=state["turn"]["query"],
        user_os=OS_LABELS.get(state.get("user_os") or "", "unknown"),
    )
    reply = llm.complete(
        [ChatMessage("system", prompts.render("system") + "\n\n" + instructions), ChatMessage("user", question)],
        max_tokens=max_tokens_for(rule, profile, ctx.llm_max_tokens),
    ).strip()
    if not reply:
        raise LLMError("empty answer")
    cited = validate_citations(reply, len(documents))
    sources = [to_source(n, documents[n - 1]) for n in cited]
    if sources and "Sources:" not in reply:
        reply += "\n\nSources:\n" + "\n".join(cite(s["n"], s) for s in sources)
    return reply, sources


def mode_answer(
    state: SupportState,
    ctx: SupportContext,
    plan: AnswerPlan,
    chunks: list[RetrievedChunk],
    llm: ChatModel,
    max_tokens: int,
) -> tuple[str, list[Source]]:
    """deskmate's own prompts for the modes that add general knowledge: hybrid (cited sources, then marked
    general knowledge for the gaps) or LLM-only (no sources, no citations)."""
    common = dict(
        persona=format_persona((state["turn"].get("directives") or {}).get("persona") or ""),
        history=format_history(state),
        question=state["turn"]["query"],
        user_os=OS_LABELS.get(state.get("user_os") or "", "unknown"),
    )
    if plan.source == "llm":
        prompt = prompts.render("answer_llm_only", **common)
    else:
        prompt = prompts.render("answer_hybrid", sources=format_sources(chunks), **common)
    reply = llm.complete(
        [ChatMessage("system", prompts.render("system")), ChatMessage("user", prompt)], max_tokens=max_tokens
    ).strip()
    if not reply:
        raise LLMError("empty answer")
    if plan.source == "llm":
        return _CITATION.sub("", reply), []  # nothing was given to cite
    cited = validate_citations(reply, len(chunks))
    sources = [to_source(n, chunks[n - 1]) for n in (cited or range(1, len(chunks) + 1))]
    if "Sources:" not in reply:
        reply += "\n\nSources:\n" + "\n".join(cite(s["n"], s) for s in sources)
    return reply, sources


def knowledge_answer(
    state: SupportState, ctx: SupportContext, update: dict, config: RunnableConfig | None = None
) -> tuple[str, list[Source]]:
    """The answer the response rules and the response mode call for: the rule picks the
    prompt, LLM and budget; the mode decides whether documents, general knowledge or both may be used."""
    policy = ctx.policy or default_policy(chroma_collection="", min_score=ctx.min_score)
    wanted = state["turn"].get("collections") or [c.name for c in policy.collections]
    selected = [c for c in policy.collections if c.name in wanted]
    read = Reading(state, ctx, caller_groups(config))  # the best article, read once for the steps below
    results = _collect(state, ctx, selected, config, read)
    directives = state["turn"].get("directives") or {}
    mode = state["turn"].get("response_mode") or policy.response_mode
    profile = evaluate(
        results,
        user_message=state["turn"]["query"],
        selected=selected,
        response_mode=mode,
        user=str(((config or {}).get("configurable") or {}).get("user_id") or ""),
    )
    if state["turn"].get("confidence") is not None and ctx.main_collection in [c.name for c in selected]:
        profile["confidence"] = state["turn"]["confidence"]  # the calibrated article confidence, not one chunk's score
    intent_llm = None
    if policy.intent_detection is not None:
        intent_llm = (
            ctx.llm if policy.intent_detection.llm == DEFAULT_LLM else ctx.llms.get(policy.intent_detection.llm)
        )
    rule = choose_rule(policy.responses, profile, lambda: detect_intent(policy, profile, intent_llm))
    llm = rule_llm(ctx, rule)
    failed = bool(state["turn"].get("fallback_notice") or update.get("fallback_notice"))
    plan = plan_answer(
        mode,
        confidence=profile["confidence"],
        has_documents=bool(expanded_documents(profile)),
        llm_available=llm is not None and not failed,
        min_confidence=directives.get("min_confidence", DEFAULT_MIN_CONFIDENCE),
        fallback_strategy=directives.get("fallback_strategy", DEFAULT_FALLBACK_STRATEGY),
    )
    update["answer_policy"] = {
        "rule": rule.describe(),
        "profile": profile_summary(profile),
        "llm": getattr(llm, "name", None),
        "plan": {"source": plan.source, "reason": plan.reason},
    }
    # a notice the user needs: always when general knowledge is used or the documents refused; a degraded
    # plan only when someone chose the mode (the offline default is not news on every answer)
    explicit = bool(state["turn"].get("response_mode")) or policy.response_mode != DEFAULT_MODE.value
    if plan.notice and (not plan.degraded or explicit) and plan.source != "documents+llm":
        update["mode_notice"] = plan.notice  # documents+llm: only once the reply really adds general knowledge
    chunks = list(profile["context"])
    if plan.source in ("refuse", "needs_llm"):
        return not_found_reply(state, ctx), []
    if plan.source == "documents" and not chunks and not plan.degraded:
        chunks = expanded_documents(profile)[: ctx.top_k]  # RAG_PRIORITY, RAG_ONLY: partial documents answer too
    budget = max_tokens_for(rule, profile, ctx.llm_max_tokens)
    if is_confident(state, ctx):  # the LLM writes from the part of the article the offline answer would quote
        chunks = composed_context(
            state,
            ctx,
            chunks or list(state["turn"].get("retrieved_chunks", [])),
            groups=caller_groups(config),
            read=read,
        )
    if llm is not None and not failed:
        try:
            if rule.prompt is not None:
                if plan.source == "llm":
                    profile = {**profile, "context": [], "rag_results": []}  # documents not wanted
                return rule_answer(state, ctx, rule, profile, llm)
            if plan.source in ("llm", "documents+llm"):
                text, sources = mode_answer(
                    state, ctx, plan, chunks or expanded_documents(profile)[: ctx.top_k], llm, budget
                )
                if plan.source == "documents+llm" and GENERAL_KNOWLEDGE_HEADING in text:
                    update["mode_notice"] = plan.notice
                return text, sources
            if chunks:
                return llm_answer(state, ctx, chunks, llm=llm, max_tokens=budget)
        except LLMError as exc:
            log.warning("answer LLM failed (rule %r), answering extractively: %s", rule.name, exc)
            update["fallback_notice"] = LLM_FALLBACK_NOTICE
    return offline_answer(state, ctx, chunks, groups=caller_groups(config), read=read)


def offline_answer(
    state: SupportState,
    ctx: SupportContext,
    chunks: list[RetrievedChunk],
    *,
    groups: frozenset[str] = frozenset(),
    read: Reading | None = None,
) -> tuple[str, list[Source]]:
    """Without an LLM: the part of the best article that answers (two equal fits are both offered), or an
    honest "not found" when no article is confident enough. `read`: the step's reading of the best article, when
    the step has one (read with the same `groups`)."""
    if found_articles(state, ctx):
        if not is_confident(state, ctx):
            return not_found_reply(state, ctx), []
        if (reading := (read or Reading(state, ctx, groups)).confident()) is not None:
            text, sources = compose_reply(state, ctx, reading)
            if tied := tie(state, ctx):  # two articles fit equally: the first answered, the other offered
                return with_runner_up(text, sources, state, ctx, tied[1], groups=groups)
            return text, sources
    if not chunks:
        return not_found_reply(state, ctx), []
    return compose_answer(state["turn"].get("search_query") or state["turn"]["query"], chunks, state.get("user_os"))


def with_status(state: SupportState, text: str) -> str:
    """Known incidents go first ("VPN is down" → the VPN incident); a failed status check is said plainly."""
    note = state["turn"].get("status_summary") if state["turn"].get("status_checked") else ""
    if not note:
        return text
    if state["turn"].get("incidents"):
        return (
            f"{note}\n\nIT already knows about this and is working on it, so it may not be something you can "
            f"fix yourself. In the meantime, here is what the knowledge base says:\n\n{text}"
        )
    return f"{text}\n\n{note}"


def resume_hint(state: SupportState) -> str:
    flow = state.get("troubleshooting")
    if flow and flow["status"] == "paused":
        return f'\n\n(When you\'re ready, say "continue" to get back to: {flow["issue"]})'
    return ""


def answer(state: SupportState, runtime: Runtime[SupportContext], config: RunnableConfig) -> dict:
    return {"turn": _answered(state, runtime.context, config)}


def _answered(state: SupportState, ctx: SupportContext, config: RunnableConfig) -> dict:
    """This turn's reply (and how it was chosen) from the knowledge base, the status page or small talk."""
    # --- fact path: one short cited sentence for a fact question ---
    if (fact := fact_reply(state, ctx)) is not None:  # a short cited span; None: the normal path below
        return {
            "needs_input": False,
            "is_clarifying": False,
            **fact,
            "answer": with_status(state, fact["answer"]) + resume_hint(state),
        }
    # --- end fact path ---
    update: dict = {"needs_input": False, "is_clarifying": False}
    if state["turn"].get("small_talk"):
        return update | {"answer": SMALL_TALK_REPLIES[state["turn"]["small_talk"]], "sources": []}
    if asks_status(state["turn"]["query"]) and state["turn"].get("status_checked"):
        return update | {"answer": state["turn"].get("status_summary", "") + resume_hint(state), "sources": []}
    pointed = None
    if points_into_article(state):  # "what about step 3?", "the other one": the article in play, not a new search
        other = follow_up_reference(state["turn"]["query"]) == ("article", 2)
        groups = caller_groups(config)
        pointed = runner_up_reply(state, ctx, groups) if other else reference_reply(state, ctx, groups)
    if pointed is not None:
        text, sources = pointed
    else:
        text, sources = knowledge_answer(state, ctx, update, config)
    if update.get("mode_notice"):
        text = f"_{update['mode_notice']}_\n\n{text}"
    return update | {"answer": with_status(state, text) + resume_hint(state), "sources": sources}
