"""embed_query: pick this search's wording (follow-up enrichment, then reformulations) and embed it."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from langchain_core.messages import HumanMessage
from langgraph.runtime import Runtime

from core.errors import EmbeddingError
from core.lexicon import content_words, looks_like_follow_up, strip_placeholders

if TYPE_CHECKING:
    from graphs.support import SupportContext, SupportState

log = logging.getLogger(__name__)
EMBED_ATTEMPTS = 3


def _previous_user_text(state: SupportState) -> str:
    for message in reversed(state.get("messages", [])):
        if isinstance(message, HumanMessage):
            return str(message.content)
    return ""


def is_follow_up(state: SupportState) -> bool:
    topic = state.get("active_topic")
    return bool(topic) and looks_like_follow_up(
        state["turn"]["query"], has_topic_words=bool(state["turn"].get("keywords"))
    )


def search_variants(state: SupportState) -> list[str]:
    """The wordings this turn may search with, best first; each search takes the next untried one."""
    query = strip_placeholders(state["turn"]["query"]) or state["turn"]["query"].strip()
    topic = state.get("active_topic") or ""
    follow_up = is_follow_up(state)
    base = f"{topic} - {query}" if follow_up else query
    focus_words = list(dict.fromkeys(state["turn"].get("keywords", []) + content_words(query)))
    focused = " ".join(([topic] if follow_up else []) + focus_words)
    previous = _previous_user_text(state)
    with_history = f"{previous} {query}" if previous else ""
    variants = [v for v in (base, focused, with_history) if v.strip()]
    return list(dict.fromkeys(variants))


def embed_query(state: SupportState, runtime: Runtime[SupportContext]) -> dict:
    tried = list(state["turn"].get("tried_queries", []))
    variants = search_variants(state)
    untried = [v for v in variants if v not in tried]
    variant = untried[0] if untried else variants[0]
    # a typing slip ("pasword") is searched as the word the knowledge base holds, by meaning and by words alike
    lexical = runtime.context.lexical
    search_query = lexical.read_slips(variant) if lexical is not None else variant
    last_error: Exception | None = None
    for attempt in range(1, EMBED_ATTEMPTS + 1):
        try:
            embedding = runtime.context.embedder.embed_query(search_query)
            break
        except Exception as exc:  # the model is local; a failure is rare and usually transient
            last_error = exc
            log.warning("embedding attempt %d/%d failed: %s", attempt, EMBED_ATTEMPTS, exc)
    else:
        raise EmbeddingError(f"could not embed the query after {EMBED_ATTEMPTS} attempts") from last_error
    return {
        "turn": {
            "search_query": search_query,
            "is_follow_up": is_follow_up(state),
            "tried_queries": tried + [variant],
            "query_embedding": list(embedding),
        }
    }
