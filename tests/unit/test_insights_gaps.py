"""Knowledge-gap clustering with the real embedding model, and how a finished turn is read as an outcome."""

from __future__ import annotations

import pytest

from app.insights.gaps import article_draft, knowledge_gaps, trend_of
from app.insights.outcomes import asker_of, is_gap, turn_outcome

# paraphrases of three missing topics, and questions on their own
PARKING = (
    "Is there a parking space I can book?",
    "how do I get a permit for the car park",
    "where can staff park their cars?",
)
ROOMS = (
    "How do I book a meeting room?",
    "Where can I reserve a conference room for 12 people?",
    "can I book the boardroom for a client meeting",
    "what's the process to reserve a room for a team meeting",
)
MONITOR = (
    "How do I order a second monitor?",
    "I need another screen for my desk",
    "can I get an extra display for my laptop",
)
LONE = ("my printer on floor 2 keeps jamming", "How do I claim travel expenses?", "VPN keeps disconnecting at home")


def rows(questions, *, askers=None, day=100):
    return [{"question": q, "asker": (askers or {}).get(q, f"p{i}"), "day": day} for i, q in enumerate(questions)]


@pytest.mark.slow
def test_paraphrases_of_one_missing_topic_fall_together_and_unrelated_questions_stay_apart(real_embedder):
    questions = [q for group in zip(ROOMS, PARKING + ("",), MONITOR + ("",), LONE + ("",)) for q in group if q]
    clusters = knowledge_gaps(rows(questions), real_embedder, first_day=90, last_day=100)
    assert [c["size"] for c in clusters] == [4, 3, 3]
    by_size = {c["size"]: c for c in clusters}
    assert set(by_size[4]["examples"]) <= set(ROOMS)
    assert {frozenset(c["examples"]) for c in clusters if c["size"] == 3} == {frozenset(PARKING), frozenset(MONITOR)}
    assert {"book", "room"} <= set(by_size[4]["label"].split())
    assert not any(q in c["examples"] for c in clusters for q in LONE)


@pytest.mark.slow
def test_a_cluster_from_one_person_is_never_shown(real_embedder):
    one_person = rows(ROOMS, askers=dict.fromkeys(ROOMS, "ana"))
    assert knowledge_gaps(one_person, real_embedder, first_day=90, last_day=100) == []
    two_people = rows(ROOMS, askers=dict.fromkeys(ROOMS[:3], "ana") | {ROOMS[3]: "ben"})
    [cluster] = knowledge_gaps(two_people, real_embedder, first_day=90, last_day=100)
    assert cluster["askers"] == 2 and cluster["size"] == 4 and len(cluster["examples"]) == 3


def test_the_trend_compares_the_window_halves():
    assert trend_of([1, 9, 9, 10], 1, 10) == {"earlier": 1, "later": 3, "direction": "rising"}
    assert trend_of([1, 1, 2, 2, 9], 1, 10) == {"earlier": 4, "later": 1, "direction": "falling"}
    assert trend_of([1, 9], 1, 10)["direction"] == "steady"


def test_the_article_draft_is_a_markdown_skeleton_of_the_questions():
    draft = article_draft({"label": "book meeting room", "size": 4, "askers": 3, "examples": list(ROOMS[:3])})
    assert draft.startswith("# Book meeting room\n") and "## Steps" in draft
    assert all(f"- {q}" in draft for q in ROOMS[:3])


@pytest.mark.parametrize(
    "result, outcome, gap",
    [
        ({"action": "answer", "sources": [{"doc_id": "d"}], "search_count": 1}, "answered", False),
        ({"action": "answer", "sources": [], "search_count": 1}, "abstained", True),
        ({"action": "create_ticket", "ticket_event": "offered", "search_count": 1}, "ticket_offered", True),
        (
            {
                "action": "create_ticket",
                "ticket_event": "offered",
                "dialogue_act": "service_request",
                "search_count": 1,
            },
            "ticket_offered",
            False,
        ),
        ({"action": "create_ticket", "ticket_event": "created"}, "ticket_created", False),
        ({"action": "create_ticket", "ticket_event": "offered", "dialogue_act": "handoff"}, "handoff", False),
        ({"action": "converse", "dialogue_act": "out_of_scope"}, "out_of_scope", True),
        (
            {"action": "troubleshoot", "troubleshooting": {"status": "in_progress"}, "sources": [{"doc_id": "d"}]},
            "walkthrough_step",
            False,
        ),
        (
            {"action": "troubleshoot", "troubleshooting": {"status": "resolved"}, "reply_kind": "resolved"},
            "resolved",
            False,
        ),
        ({"action": "clarify", "is_clarifying": True, "search_count": 1}, "clarified", False),
        ({"action": "converse", "dialogue_act": "thanks"}, "conversation", False),
    ],
)
def test_a_finished_turn_reads_as_one_outcome(result, outcome, gap):
    assert turn_outcome(result) == outcome
    assert is_gap(result, outcome) is gap


def test_the_asker_is_a_hash_of_the_user_or_with_sign_in_off_of_the_conversation():
    assert asker_of("ana@example.com", "s1") == asker_of("ana@example.com", "s2")
    assert asker_of(None, "s1") != asker_of(None, "s2") and asker_of("anonymous", "s1") == asker_of(None, "s1")
    assert "ana" not in asker_of("ana@example.com", "s1")
