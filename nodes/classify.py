"""classify: informative vs troubleshooting, IT topics, small talk, vagueness, stated OS. Rule-based."""

from __future__ import annotations

from graphs.state import SupportState
from nodes.lexicon import content_words, detect_os, is_troubleshooting, it_topics, reply_kind, small_talk_kind


def classify(state: SupportState) -> dict:
    query = state["query"]
    topics = it_topics(query)
    kind = reply_kind(query)
    update: dict = {
        "intent": "troubleshooting" if is_troubleshooting(query) else "informative",
        "small_talk": "" if topics else ("resolved" if kind == "resolved" else small_talk_kind(query)),
        "keywords": topics,
        # "it's not working": nothing names the system, so no search can help yet
        "is_vague": not topics and len(content_words(query)) <= 1,
        # read in context by decide: "yes" confirms a ticket offer, "still broken" fails a step
        "reply_kind": kind,
    }
    stated_os = detect_os(query)
    if stated_os:
        update["user_os"] = stated_os
    return update
