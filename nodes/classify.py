"""classify: informative vs troubleshooting, IT topics, the dialogue act, small talk, vagueness, stated OS, and
the message's language. Rule-based (and one local language model)."""

from __future__ import annotations

from langgraph.runtime import Runtime

from graphs.context import SupportContext
from graphs.state import SupportState
from nodes.dialogue_acts import dialogue_act
from nodes.language import message_language
from nodes.lexicon import content_words, detect_os, is_troubleshooting, it_topics, reply_kind

SMALL_TALK_ACTS = ("greeting", "thanks", "farewell", "resolved")


def classify(state: SupportState, runtime: Runtime[SupportContext] | None = None) -> dict:
    query = state["query"]
    topics = it_topics(query)
    act = dialogue_act(query)
    update: dict = {
        "intent": "troubleshooting" if is_troubleshooting(query) else "informative",
        "dialogue_act": act,
        "small_talk": act if act in SMALL_TALK_ACTS else "",
        "keywords": topics,
        # "it's not working": nothing names the system, so no search can help yet
        "is_vague": not topics and len(content_words(query)) <= 1,
        # read in context by decide: "yes" confirms a ticket offer, "still broken" fails a step
        "reply_kind": reply_kind(query),
    }
    # a message an LLM already put into English keeps the language it was written in (the reply goes back to it)
    if not state.get("translated"):
        detector = runtime.context.language if runtime is not None else None
        update["language"] = message_language(query, detector)
    stated_os = detect_os(query)
    if stated_os:
        update["user_os"] = stated_os
    return update
