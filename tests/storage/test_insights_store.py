"""The outcome table and the insights figures on both engines (SQLite file, scratch Postgres): rows written
turn by turn give exact figures, votes reach them, retention deletes old rows and clears old questions."""

from __future__ import annotations

from datetime import date

import pytest

from app.insights import figures
from app.insights.figures import Window
from app.insights.outcomes import OutcomeStore, outcome_row
from app.storage import Database

DAY = 86400.0
NOW = 20_000 * DAY + 10 * 3600  # 2024-10-04 10:00 UTC
VPN = {"doc_id": "vpn01", "title": "Connecting to the VPN", "section": "Windows"}
PRINTER = {"doc_id": "prn01", "title": "Printer setup", "section": "Drivers"}


def turn(**fields) -> dict:
    base = {"action": "answer", "dialogue_act": "", "search_count": 1, "sources": [], "query": "", "ticket_event": ""}
    return base | fields


def answered(doc: dict) -> dict:
    return turn(sources=[{"n": 1, "chunk_id": "c", "score": 0.9, "source": "kb", **doc}], confidence=0.8)


@pytest.fixture
def store(database_url):
    db = Database.open(database_url)
    clock = [NOW]
    yield OutcomeStore(db, retention_days=30, question_days=7, clock=lambda: clock[0]), clock
    db.close()


def record(store: OutcomeStore, result: dict, trace: str, session: str, *, ts: float = NOW, channel="web", user=None):
    assert store.record(
        outcome_row(result, trace_id=trace, session_id=session, user_id=user, channel=channel, latency_ms=120.0, ts=ts)
    )


def test_turns_with_known_outcomes_give_exact_figures(store):
    outcomes, _ = store
    # conversation a: answered, voted Helpful (deflected, resolved by the user)
    record(outcomes, answered(VPN), "t1", "a")
    outcomes.record_vote("t1", "up")
    # conversation b: a walkthrough step, then "still broken" … a ticket created: not deflected
    record(
        outcomes,
        turn(action="troubleshoot", troubleshooting={"status": "in_progress"}, sources=[]) | {"active_article": VPN},
        "t2",
        "b",
        ts=NOW + 60,
    )
    record(
        outcomes,
        turn(
            action="create_ticket",
            ticket_event="created",
            search_count=0,
            ticket={"id": "DM-1", "priority": "high", "kind": "incident"},
        ),
        "t3",
        "b",
        ts=NOW + 120,
    )
    # conversation c: unanswered, a ticket offered and left (a gap); then answered: ends answered
    record(
        outcomes,
        turn(action="create_ticket", ticket_event="offered", query="book a meeting room?"),
        "t4",
        "c",
        channel="cli",
    )
    record(outcomes, answered(PRINTER), "t5", "c", ts=NOW + 30, channel="cli")
    # conversation d: small talk only, yesterday at 23h: not a conversation that asked anything
    record(outcomes, turn(action="converse", dialogue_act="greeting", search_count=0), "t6", "d", ts=NOW - 11 * 3600)

    window = Window.of(date(2024, 10, 1), date(2024, 10, 4))
    with outcomes.db.connect() as conn:
        volume = figures.volume(conn, window)
        deflection = figures.deflection(conn, window)
        tickets = figures.tickets(conn, window)
        articles = figures.articles(conn, window, [{"doc_id": "vpn01"}, {"doc_id": "prn01"}, {"doc_id": "new01"}])
        gaps = figures.gap_questions(conn, window, 10)

    assert volume["turns"] == 6
    assert volume["by_day"] == [
        {"day": "2024-10-03", "channel": "web", "turns": 1},
        {"day": "2024-10-04", "channel": "cli", "turns": 2},
        {"day": "2024-10-04", "channel": "web", "turns": 3},
    ]
    assert {(r["hour"], r["channel"], r["turns"]) for r in volume["by_hour"]} == {
        (23, "web", 1),
        (10, "cli", 2),
        (10, "web", 3),
    }
    assert {k: v for k, v in volume["by_outcome"].items() if v} == {
        "answered": 2,
        "walkthrough_step": 1,
        "ticket_created": 1,
        "ticket_offered": 1,
        "conversation": 1,
    }
    assert deflection == {
        "conversations": 3,
        "deflected": 2,
        "deflection_rate": 0.6667,
        "resolved_by_user": 1,
        "resolved_by_user_rate": 0.3333,
        "with_ticket": 1,
    }
    assert tickets == {"created": 1, "by_category": {"incident": 1}, "by_priority": {"high": 1}}
    # the walkthrough step counts for the article it follows
    assert [(a["doc_id"], a["citations"]) for a in articles["most_cited"]] == [("vpn01", 2), ("prn01", 1)]
    assert articles["votes_by_article"] == [
        {"doc_id": "vpn01", "title": "Connecting to the VPN", "helpful": 1, "not_helpful": 0}
    ]
    assert articles["walkthroughs_ending_in_ticket"] == [
        {"doc_id": "vpn01", "title": "Connecting to the VPN", "walkthroughs": 1, "ended_in_ticket": 1, "rate": 1.0}
    ]
    assert articles["never_cited"] == [{"doc_id": "new01", "title": "new01"}]
    assert [g["question"] for g in gaps] == ["book a meeting room?"]
    # a window that names a collection sees only that collection's turns
    with outcomes.db.connect() as conn:
        assert figures.volume(conn, Window.of(date(2024, 10, 1), date(2024, 10, 4), "hr"))["turns"] == 0


def test_a_not_helpful_vote_makes_the_question_a_gap_and_retention_clears_questions_then_rows(store):
    outcomes, clock = store
    with outcomes.db.begin() as conn:  # the answer the vote is on, as the feedback store keeps it
        from app.storage.schema import answers

        conn.execute(
            answers.insert().values(
                message_id="t1", session_id="a", query="vpn drops on hotel wifi", created_at="2024-10-04T10:00:00Z"
            )
        )
    record(outcomes, answered(VPN), "t1", "a")
    record(
        outcomes, turn(action="create_ticket", ticket_event="offered", query="book a room"), "t2", "b", ts=NOW - 8 * DAY
    )
    outcomes.record_vote("t1", "down")
    window = Window.of(date(2024, 9, 1), date(2024, 10, 4))
    with outcomes.db.connect() as conn:
        assert sorted(g["question"] for g in figures.gap_questions(conn, window, 10)) == [
            "book a room",
            "vpn drops on hotel wifi",
        ]
    assert outcomes.prune() == 0  # 8 days old: past the question retention (7), within the rows' (30)
    with outcomes.db.connect() as conn:
        assert [g["question"] for g in figures.gap_questions(conn, window, 10)] == ["vpn drops on hotel wifi"]
        assert figures.volume(conn, window)["turns"] == 2
    clock[0] = NOW + 31 * DAY
    assert outcomes.prune() == 2


class _NamesOut:
    """A trace-policy redactor standing in for the names model: it removes one person's name."""

    def redact(self, text: str):
        from types import SimpleNamespace

        return SimpleNamespace(text=text.replace("Dana Whitfield", "[REDACTED:PERSON]"))


@pytest.mark.parametrize("vote_first", [False, True])
def test_a_not_helpful_vote_keeps_its_question_redacted_with_the_trace_policy(database_url, vote_first):
    # the answer keeps the question as the memory policy left it (a name in it); a gap question is a trace's
    db = Database.open(database_url)
    try:
        outcomes = OutcomeStore(db, retention_days=30, question_days=7, clock=lambda: NOW, redactor=_NamesOut())
        with db.begin() as conn:
            from app.storage.schema import answers

            conn.execute(
                answers.insert().values(
                    message_id="t1",
                    session_id="a",
                    query="Dana Whitfield cannot open the shared calendar",
                    created_at="2024-10-04T10:00:00Z",
                )
            )
        if vote_first:  # the vote can reach the store before the turn's row does
            with db.begin() as conn:
                from app.storage.schema import votes

                conn.execute(votes.insert().values(message_id="t1", rating="down", created_at="x", updated_at="x"))
        record(outcomes, answered(VPN), "t1", "a")
        if not vote_first:
            outcomes.record_vote("t1", "down")
        with db.connect() as conn:
            questions = [
                g["question"] for g in figures.gap_questions(conn, Window.of(date(2024, 9, 1), date(2024, 10, 4)), 10)
            ]
        assert questions == ["[REDACTED:PERSON] cannot open the shared calendar"]
    finally:
        db.close()
