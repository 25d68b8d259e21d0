"""classify: informative vs troubleshooting, IT topics, the dialogue act, small talk, vagueness, stated OS, and
the message's language. Rule-based (and one local language model)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from langgraph.runtime import Runtime

from core.lexicon import content_words, detect_os, is_troubleshooting, it_topics, reply_kind
from nodes.support.dialogue_acts import act_spec, dialogue_act
from nodes.support.language import message_language

if TYPE_CHECKING:
    from graphs.support import SupportContext, SupportState


def classify(state: SupportState, runtime: Runtime[SupportContext] | None = None) -> dict:
    turn = state["turn"]
    query = turn["query"]
    topics = it_topics(query)
    act = dialogue_act(query)
    spec = act_spec(act)
    record: dict = {
        "intent": "troubleshooting" if is_troubleshooting(query) else "informative",
        "dialogue_act": act,
        "small_talk": act if spec is not None and spec.small_talk else "",
        "keywords": topics,
        # "it's not working": nothing names the system, so no search can help yet
        "is_vague": not topics and len(content_words(query)) <= 1,
        # read in context by decide: "yes" confirms a ticket offer, "still broken" fails a step
        "reply_kind": reply_kind(query),
    }
    # a message an LLM already put into English keeps the language it was written in (the reply goes back to it)
    if not turn.get("translated"):
        detector = runtime.context.language if runtime is not None else None
        record["language"] = message_language(query, detector)
    update: dict = {"turn": record}
    stated_os = detect_os(query)
    if stated_os:
        update["user_os"] = stated_os
    return update
