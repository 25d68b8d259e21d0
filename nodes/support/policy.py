"""How to answer: collect what the knowledge collections found, evaluate it into a
profile, detect the intent only if a rule needs it, pick the first response rule that matches, and fill
its prompt. The decision agent already chose to answer; the rules choose the prompt, LLM and budget.

Phases, each only doing its one job:
1. collect — query the selected collections in order; classify each best result as match / partial by
   the collection's distance thresholds (distance = 1 − calibrated score); stop at the first match.
2. evaluate — the profile: rag_result, the matching collection, its distance, documents and metadata.
3. intent — lazily, when the first rule that tests `intent` is reached and no match set it.
4. rule — first match wins; an empty match is the fallback.
5. render — `${profile.*}`, `${context}`, `${expanded_rag_context}`, `${user}`.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import prompts
from core.injection import delimit_data
from core.policy_config import AnswerPolicy, CollectionSpec, ResponseRule
from core.ports import ChatMessage, ChatModel
from core.records import RetrievedChunk

log = logging.getLogger(__name__)
MAX_INTENT_CHARS = 80


@dataclass
class CollectionResult:
    spec: CollectionSpec
    result_type: str  # match | partial
    distance: float
    documents: list[RetrievedChunk] = field(default_factory=list)

    @property
    def identifier(self) -> str:
        return self.spec.name


def distance_of(chunk: RetrievedChunk) -> float:
    return round(1.0 - float(chunk["score"]), 4)


def classify(spec: CollectionSpec, chunks: Sequence[RetrievedChunk], top_k: int) -> CollectionResult | None:
    """A collection's result by its thresholds: match, partial, or None (not relevant enough)."""
    ranked = sorted(chunks, key=lambda c: c["score"], reverse=True)
    if not ranked:
        return None
    best = distance_of(ranked[0])
    if best <= spec.match_threshold:
        docs = [c for c in ranked if distance_of(c) <= spec.match_threshold][:top_k]
        return CollectionResult(spec, "match", best, docs)
    if spec.candidate_threshold is not None and best <= spec.candidate_threshold:
        docs = [c for c in ranked if distance_of(c) <= spec.candidate_threshold][:top_k]
        return CollectionResult(spec, "partial", best, docs)
    return None


def collect(
    selected: Sequence[CollectionSpec], search: Callable[[CollectionSpec], list[RetrievedChunk]], top_k: int
) -> list[CollectionResult]:
    """Phase 1: results of the selected collections, in order, stopping at the first match."""
    results = []
    for spec in selected:
        result = classify(spec, search(spec), top_k)
        if result is None:
            continue
        results.append(result)
        if result.result_type == "match":
            break
    return results


def evaluate(
    results: Sequence[CollectionResult],
    *,
    user_message: str,
    selected: Sequence[CollectionSpec],
    response_mode: str,
    user: str,
) -> dict[str, Any]:
    """Phase 1b: the profile. No LLM calls, no decisions."""
    profile: dict[str, Any] = {
        "user_message": user_message,
        "selected_collections": [s.name for s in selected],
        "response_mode": response_mode,
        "user": user,
        "rag_result": "none",
        "intent": None,
        "collection": None,
        "service": None,
        "distance": None,
        "service_prompt": "",
        "service_tokens": None,
        "context": [],
        "rag_results": list(results),
        "confidence": None,
    }
    match = next((r for r in results if r.result_type == "match"), None)
    if match is not None:
        spec = match.spec
        profile.update(
            rag_result="match",
            collection=spec.name,
            service="chroma",
            distance=match.distance,
            context=match.documents,
            service_prompt=spec.prompt,
            service_tokens=spec.max_tokens,
            intent=spec.intent_identifier and f"{spec.intent_identifier}/{spec.name}",
        )
    elif results:
        profile["rag_result"] = "partial"
    best = [r.distance for r in results]
    profile["confidence"] = round(1 - min(best), 4) if best else None
    return profile


def _matches(rule: ResponseRule, profile: dict[str, Any], detect_intent: Callable[[], str | None]) -> bool:
    for key, expected in rule.match:
        field_name = key[: -len("_regexp")] if key.endswith("_regexp") else key
        if field_name == "intent" and profile.get("intent") is None and not profile.get("intent_detected"):
            profile["intent"] = detect_intent()  # Phase 2, lazily: only a rule that tests intent pays for it
            profile["intent_detected"] = True
        value = profile.get(field_name)
        if key.endswith("_regexp"):
            if value is None or not expected.search(str(value)):
                return False
        elif field_name == "rag_result" and expected is True:
            if value not in ("match", "partial"):
                return False
        elif str(value if value is not None else "") != str(expected):
            return False
    return True


def choose_rule(
    rules: Sequence[ResponseRule], profile: dict[str, Any], detect_intent: Callable[[], str | None]
) -> ResponseRule:
    """Phase 3: the first rule whose match holds (validation guarantees a fallback exists)."""
    for rule in rules:
        if _matches(rule, profile, detect_intent):
            return rule
    raise LookupError("no response rule matched and there is no fallback rule")


def detect_intent(policy: AnswerPolicy, profile: dict[str, Any], llm: ChatModel | None) -> str | None:
    """Phase 2: one category name from the intent LLM (config categories + partial collections), or None."""
    detection = policy.intent_detection
    if detection is None or llm is None:
        return None
    categories = list(detection.categories) + [
        (r.identifier, r.spec.description or f"information about {r.spec.name}")
        for r in profile["rag_results"]
        if r.result_type == "partial"
    ]
    prompt = prompts.render(
        "intent",
        categories="\n".join(f'- "{name}": {text}' for name, text in categories),
        question=delimit_data("question", profile["user_message"]),
    )
    try:
        reply = llm.complete([ChatMessage("user", prompt)], max_tokens=20)
    except Exception as exc:  # the rules then see no intent; intent rules simply do not match
        log.warning("intent detection failed: %s", exc)
        return None
    names = {name for name, _ in categories}
    guess = reply.strip().splitlines()[0].strip().strip("\"'`.").strip() if reply.strip() else ""
    return guess if guess in names else None


def format_context(documents: Sequence[RetrievedChunk], first: int = 1) -> str:
    if not documents:
        return ""
    return "\n\n".join(
        delimit_data("source", c["text"], id=str(n), title=c["title"], file=c["source"])
        for n, c in enumerate(documents, start=first)
    )


def expanded_documents(profile: dict[str, Any]) -> list[RetrievedChunk]:
    """Every collected document, match and partial, in collection order (what ${expanded_rag_context} shows)."""
    return [doc for result in profile["rag_results"] for doc in result.documents]


def render_prompt(rule: ResponseRule, profile: dict[str, Any]) -> tuple[str, list[RetrievedChunk]]:
    """The rule's prompt filled in, and the documents it shows (numbered [1]… for citations).

    A match's documents are added at the end when the prompt does not place ${context} itself.
    """
    template = rule.prompt or ""
    expanded = expanded_documents(profile)
    uses_expanded = "${expanded_rag_context}" in template
    documents = expanded if uses_expanded else list(profile["context"])
    fields = {
        "context": format_context(profile["context"]) if not uses_expanded else "",
        "expanded_rag_context": "",
        "user": str(profile.get("user") or ""),
    }
    if uses_expanded:
        blocks, n = [], 1
        for result in profile["rag_results"]:
            if result.documents:
                blocks.append(
                    f"From {result.identifier} ({result.result_type}, distance {result.distance:.2f}):\n"
                    + format_context(result.documents, first=n)
                )
                n += len(result.documents)
        fields["expanded_rag_context"] = "\n\n".join(blocks)

    def substitute(match: re.Match) -> str:
        name = match.group(1)
        if name.startswith("profile."):
            value = profile.get(name[len("profile.") :])
            return "" if value is None else str(value)
        return fields[name]

    text = re.sub(r"\$\{(profile\.[a-z_]+|context|expanded_rag_context|user)\}", substitute, template)
    if documents and not uses_expanded and "${context}" not in template:
        text = f"{text}\n\nSources:\n{fields['context']}".strip()
    return text, documents


def max_tokens_for(rule: ResponseRule, profile: dict[str, Any], default: int) -> int:
    if isinstance(rule.max_tokens, int):
        return rule.max_tokens
    if rule.max_tokens == "${profile.service_tokens}" and profile.get("service_tokens"):
        return int(profile["service_tokens"])
    return default


def profile_summary(profile: dict[str, Any]) -> dict[str, Any]:
    """What the trace and debug mode show: the profile without document text."""
    return {
        "rag_result": profile["rag_result"],
        "collection": profile["collection"],
        "distance": profile["distance"],
        "intent": profile.get("intent"),
        "confidence": profile.get("confidence"),
        "selected_collections": profile["selected_collections"],
        "response_mode": profile["response_mode"],
        "intent_detected": bool(profile.get("intent_detected")),
        "results": [
            {
                "collection": r.identifier,
                "result_type": r.result_type,
                "distance": r.distance,
                "chunk_ids": [d["chunk_id"] for d in r.documents],
            }
            for r in profile["rag_results"]
        ],
    }
