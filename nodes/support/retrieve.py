"""retrieve: top-k chunks for the current search through the retrieval pipeline (nodes/support/retrieval.py),
OS-aware and filtered by the request's document-context filters, merged with earlier searches this turn;
and the articles they come from, each with a calibrated confidence (nodes/support/article_answer.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

from core.filters import parse_filter
from core.records import ArticleRef, RetrievedChunk
from nodes.support.article_answer import assess
from nodes.support.compose import question_type
from nodes.support.retrieval import fits_os, search_chunks

if TYPE_CHECKING:
    from graphs.support import SupportContext, SupportState

__all__ = ["retrieve", "confident_chunks", "fits_os", "CANDIDATE_FLOOR"]

# Chunks a little below the answer threshold are kept: the decision and clarification steps
# use them ("did you mean …"), the answer step never quotes them.
CANDIDATE_FLOOR = 0.75


def caller_groups(config: RunnableConfig | None) -> frozenset[str]:
    """The signed-in caller's groups, from the run's config (set by the API from the verified user header);
    never from the message or the model. No groups: only unrestricted documents."""
    groups = ((config or {}).get("configurable") or {}).get("groups") or ()
    return frozenset(str(g) for g in groups)


def retrieve(state: SupportState, runtime: Runtime[SupportContext], config: RunnableConfig) -> dict:
    ctx = runtime.context
    query = state["turn"].get("search_query") or state["turn"].get("query", "")
    hits = search_chunks(
        ctx,
        query,
        state["turn"]["query_embedding"],
        k=ctx.candidate_k,
        groups=caller_groups(config),
        search_filter=parse_filter(state["turn"].get("search_filters")),
        user_os=state.get("user_os"),
    )
    active = state.get("active_article") if state["turn"].get("is_follow_up") else None
    articles = assess(
        ctx, query, hits, prefer_doc=(active or {}).get("doc_id"), message=state["turn"].get("query") or None
    )
    earlier = state["turn"].get("articles") or []
    update: dict = {
        "search_count": state["turn"].get("search_count", 0) + 1,
        # "and on windows?" asks what the previous question asked, for another case
        "question_type": (active or {}).get("question_type") or question_type(state["turn"].get("query", "")),
    }
    if articles and (not earlier or _confirms(articles[0], earlier[0])):  # this turn's best search
        update.update(articles=articles, confidence=articles[0]["confidence"])
    elif not earlier:
        update.update(articles=[], confidence=0.0)
    # the best article's chunks stay whatever their score: the article, not one chunk, decides whether it answers
    lead_articles = update.get("articles") or earlier
    lead = lead_articles[0]["doc_id"] if lead_articles else None
    best: dict[str, RetrievedChunk] = {c["chunk_id"]: c for c in state["turn"].get("retrieved_chunks", [])}
    for hit in hits:
        if hit["score"] < ctx.min_score * CANDIDATE_FLOOR and hit["doc_id"] != lead:
            continue
        if hit["chunk_id"] not in best or hit["score"] > best[hit["chunk_id"]]["score"]:
            best[hit["chunk_id"]] = hit
    update["retrieved_chunks"] = sorted(best.values(), key=lambda c: c["score"], reverse=True)[: ctx.top_k]
    return {"turn": update}


def _confirms(found: ArticleRef, first: ArticleRef) -> bool:
    """A search in other words this turn counts when it finds the article the message's own words ranked first
    (as GET /search ranks it) more answerable; another article it ranks first is not taken in its place: the
    rewording (fewer words, an earlier message added) is a second look at the same question, and an article only
    it finds first is one the question itself did not find."""
    return found["doc_id"] == first["doc_id"] and found["answerable"] > first["answerable"]


def confident_chunks(state: SupportState, min_score: float) -> list[RetrievedChunk]:
    return [c for c in state["turn"].get("retrieved_chunks", []) if c["score"] >= min_score]
