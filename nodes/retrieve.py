"""retrieve: top-k chunks for the current search, OS-aware, merged with earlier searches this turn."""

from __future__ import annotations

from langgraph.runtime import Runtime

from graphs.context import SupportContext
from graphs.records import RetrievedChunk
from graphs.state import SupportState

# Chunks a little below the answer threshold are kept: the decision and clarification steps
# use them ("did you mean …"), the answer step never quotes them.
CANDIDATE_FLOOR = 0.75


def fits_os(chunk: RetrievedChunk, user_os: str | None) -> bool:
    """A chunk written for another OS than the user's is not an answer for them."""
    return not user_os or not chunk["os"] or chunk["os"] == user_os


def retrieve(state: SupportState, runtime: Runtime[SupportContext]) -> dict:
    ctx = runtime.context
    hits = ctx.index.query(state["query_embedding"], k=ctx.candidate_k)
    user_os = state.get("user_os")
    best: dict[str, RetrievedChunk] = {c["chunk_id"]: c for c in state.get("retrieved_chunks", [])}
    for hit in hits:
        if not fits_os(hit, user_os) or hit["score"] < ctx.min_score * CANDIDATE_FLOOR:
            continue
        if hit["chunk_id"] not in best or hit["score"] > best[hit["chunk_id"]]["score"]:
            best[hit["chunk_id"]] = hit
    ranked = sorted(best.values(), key=lambda c: c["score"], reverse=True)[: ctx.top_k]
    return {"retrieved_chunks": ranked, "search_count": state.get("search_count", 0) + 1}


def confident_chunks(state: SupportState, min_score: float) -> list[RetrievedChunk]:
    return [c for c in state.get("retrieved_chunks", []) if c["score"] >= min_score]
