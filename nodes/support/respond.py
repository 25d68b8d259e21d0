"""respond: final envelope text, and the turn saved to bounded session memory."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping

from langchain_core.messages import AIMessage, HumanMessage, RemoveMessage
from langgraph.runtime import Runtime

if TYPE_CHECKING:
    from graphs.support import SupportContext, SupportState


# what the finished turn keeps of its search: enough for the reply's readers (feedback credits the cited chunks
# by doc_id and content_hash; the trace lists the ids), not the chunk bodies and document context, which the
# checkpoint would otherwise carry until the next message resets them
KEPT_CHUNK_KEYS = ("chunk_id", "doc_id", "title", "section", "score", "content_hash")
KEPT_ARTICLE_KEYS = ("doc_id", "title", "source", "score", "answerable", "confidence")


def _compact(items, keys: tuple[str, ...]) -> list[dict]:
    return [{k: item[k] for k in keys if k in item} for item in items or []]


def respond(state: SupportState, runtime: Runtime[SupportContext]) -> dict:
    turn = state["turn"]
    text = turn.get("answer", "")
    notices = [n for n in (turn.get("redaction_notice"), turn.get("fallback_notice")) if n]
    if notices:
        text = "\n".join(f"⚠️ {n}" for n in notices) + "\n\n" + text
    history = list(state.get("messages", []))
    keep = 2 * runtime.context.history_turns - 2  # room for this turn's two messages
    removals = [RemoveMessage(id=m.id) for m in history[: max(0, len(history) - keep)] if m.id]
    answered = turn.get("action") == "answer" and bool(turn.get("sources"))
    sources = turn.get("sources")
    cited: Mapping[str, Any] = sources[0] if sources else {}
    from_article = turn.get("action") in ("answer", "troubleshoot") and cited.get("doc_id")
    return {
        # the article and section a follow-up ("and on windows?", "what about step 3?") stays in
        "active_article": {
            **{k: cited.get(k, "") for k in ("doc_id", "title", "source", "section")},
            "question_type": turn.get("question_type", ""),
            # a second article offered beside the answer ("the other one" takes it)
            "runner_up": next(
                (
                    {k: s.get(k, "") for k in ("doc_id", "title", "source")}
                    for s in turn.get("sources") or []
                    if s.get("n") == 2 and s.get("doc_id") != cited.get("doc_id")
                ),
                None,
            ),
        }
        if from_article
        else state.get("active_article"),
        "messages": removals + [HumanMessage(content=turn["query"]), AIMessage(content=text)],
        # the topic a short follow-up ("im on linux", "and on my mac?") refers to: what was last answered from the KB,
        # as an answer or as a walkthrough
        "active_topic": turn["query"]
        if (answered or from_article) and not turn.get("is_follow_up")
        else state.get("active_topic"),
        "clarify_streak": state.get("clarify_streak", 0) + 1 if turn.get("is_clarifying") else 0,
        "turn_count": state.get("turn_count", 0) + 1,
        "turn": {
            "answer": text,
            "query_embedding": [],  # not worth keeping in the checkpoint
            "retrieved_chunks": _compact(turn.get("retrieved_chunks"), KEPT_CHUNK_KEYS),
            "articles": _compact(turn.get("articles"), KEPT_ARTICLE_KEYS),
        },
    }
