"""The turns' outcome rows written off the reply path (app/insights/writer.py), on both engines: a turn reaches
the insights once the writer has written it, a vote cast before its turn's row is written still counts, the
shutdown writes what is waiting, and a write the database refuses or a full queue costs the chat nothing but a
log line."""

from __future__ import annotations

import logging
import random
import threading
import time
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace

import pytest
import sqlalchemy as sa

from app.adapters.feedback import FeedbackStore
from app.adapters.memory import SessionStore
from app.adapters.traces import RecordingTracer
from app.adapters.tracing import NullTracer
from app.chat_service import ChatService
from app.feedback_service import record_vote
from app.insights import figures
from app.insights.figures import Window
from app.insights.outcomes import OutcomeStore
from app.insights.writer import OutcomeWriter
from app.storage import Database
from app.storage.schema import answers, turn_outcomes, votes
from graphs.support import build_support_graph
from tests.fakes import HashingEmbedder
from tests.storage.test_insights_rollup import assert_rollups_equal_the_rows, random_turns

VPN_QUESTION = "how do I connect to the vpn on linux"


class HeldStore(OutcomeStore):
    """An outcome store whose writes wait until the test lets them go: a writer that is behind."""

    def __init__(self, db: Database) -> None:
        super().__init__(db)
        self.busy = threading.Event()  # the writer has taken rows from its queue
        self.go = threading.Event()

    def record_many(self, rows: list[dict]) -> int:
        self.busy.set()
        assert self.go.wait(30), "the test never let the writer go"
        return super().record_many(rows)


@pytest.fixture
def db(database_url):
    database = Database.open(database_url)
    yield database
    database.close()


@pytest.fixture
def service(db, tmp_path, fake_kb_context):
    """`service(store)`: a ChatService over the fixture KB whose outcome rows go through a writer to `store`,
    with the feedback store on the same database; and the resources a vote goes through."""
    made = []

    def build(store: OutcomeStore):
        sessions = SessionStore(tmp_path / f"sessions{len(made)}.sqlite")
        feedback = FeedbackStore(db, embed=HashingEmbedder().embed_query)
        writer = OutcomeWriter(store)
        chat = ChatService(
            build_support_graph(sessions.checkpointer),
            fake_kb_context(),
            sessions,
            RecordingTracer(NullTracer(), None),
            feedback=feedback,
            outcomes=writer,
        )
        made.append((sessions, writer))
        return chat, writer, SimpleNamespace(chat=chat, feedback=feedback, outcomes=store, tracer=None)

    yield build
    for sessions, writer in made:
        writer.close()
        sessions.close()


def today() -> Window:
    day = datetime.now(UTC).date()
    return Window.of(day - timedelta(days=1), day + timedelta(days=1))


def test_a_turns_outcome_reaches_the_insights_once_the_writer_has_written_it(db, service):
    store = HeldStore(db)
    chat, writer, _ = service(store)
    turn = chat.ask(VPN_QUESTION, user_id="ana")
    assert turn.output["sources"], "the fixture KB answers this"
    with db.connect() as conn:  # answered, and nothing written yet: the reply did not wait for the row
        assert figures.volume(conn, today())["turns"] == 0
    store.go.set()
    assert writer.flush(10)
    with db.connect() as conn:
        volume = figures.volume(conn, today())
        assert volume["turns"] == volume["by_outcome"]["answered"] == 1
        assert figures.articles(conn, today())["most_cited"][0]["citations"] == 1


def test_a_vote_cast_before_its_turn_is_written_counts(db, service):
    store = HeldStore(db)
    chat, writer, resources = service(store)
    helpful = chat.ask(VPN_QUESTION, user_id="ana")
    not_helpful = chat.ask(VPN_QUESTION, user_id="ben")
    for turn, user, rating in ((helpful, "ana", "up"), (not_helpful, "ben", "down")):
        result = record_vote(
            resources, user_id=user, message_id=turn.trace_id, session_id=turn.session_id, rating=rating
        )
        assert result.rating == rating
    store.go.set()
    assert writer.flush(10)
    with db.connect() as conn:
        [article] = figures.articles(conn, today())["votes_by_article"]
        assert (article["helpful"], article["not_helpful"]) == (1, 1)
        assert figures.deflection(conn, today())["resolved_by_user"] == 1
        gaps = figures.gap_questions(conn, today(), 10)
    assert [g["question"] for g in gaps] == [VPN_QUESTION]  # the Not helpful answer's question is a gap candidate
    assert_rollups_equal_the_rows(db)


def test_votes_cast_while_their_turns_are_being_written_all_count(db):
    """Turns written by the writer while votes on them arrive from other threads (as from other requests or
    replicas): every vote ends on its turn's row and in the rollups, whichever was written first."""
    rows = random_turns(random.Random(11), 60)
    feedback = FeedbackStore(db, embed=lambda text: [0.0, 1.0])
    with db.begin() as conn:  # each answer's row, as the reply path writes it before the reply
        conn.execute(
            answers.insert(),
            [
                {"message_id": r["trace_id"], "session_id": r["session_id"], "query": "q", "created_at": "2024"}
                for r in rows
            ],
        )
    store = OutcomeStore(db)
    writer = OutcomeWriter(store)
    rng = random.Random(5)
    ratings = {r["trace_id"]: rng.choice(("up", "down")) for r in rng.sample(rows, 80)}
    voters = [dict(list(ratings.items())[i::3]) for i in range(3)]

    def vote(mine: dict[str, str]) -> None:
        for trace_id, rating in mine.items():
            session = next(r["session_id"] for r in rows if r["trace_id"] == trace_id)
            feedback.vote(trace_id, session, rating)  # then the outcome row, as app/feedback_service.py does
            store.record_vote(trace_id, rating)

    threads = [threading.Thread(target=vote, args=(mine,)) for mine in voters]
    for thread in threads:
        thread.start()
    for row in rows:
        writer.submit(row)
    for thread in threads:
        thread.join(60)
    writer.close()
    with db.connect() as conn:
        stored = dict(conn.execute(sa.select(turn_outcomes.c.trace_id, turn_outcomes.c.vote)).all())
        cast = dict(conn.execute(sa.select(votes.c.message_id, votes.c.rating)).all())
    assert cast == ratings
    assert len(stored) == len(rows) and {t: v for t, v in stored.items() if v} == ratings
    assert_rollups_equal_the_rows(db)


def test_the_shutdown_writes_the_outcomes_still_waiting(db):
    store = HeldStore(db)
    writer = OutcomeWriter(store)
    rows = random_turns(random.Random(3), 5)
    for row in rows:
        writer.submit(row)
    threading.Timer(0.3, store.go.set).start()  # the writer is still busy when the app shuts down
    writer.close(timeout=10)
    with db.connect() as conn:
        assert conn.execute(sa.select(sa.func.count()).select_from(turn_outcomes)).scalar() == len(rows)
    writer.submit(rows[0] | {"trace_id": "after"})  # a turn after the shutdown is dropped, not waited for
    assert writer.dropped == 1


def test_a_turn_whose_outcome_cannot_be_written_is_answered_and_the_failure_logged(db, service, caplog):
    with db.begin() as conn:
        conn.execute(sa.text("DROP TABLE turn_outcomes"))
    chat, writer, _ = service(OutcomeStore(db))
    with caplog.at_level(logging.WARNING, logger="app.insights.outcomes"):
        turn = chat.ask(VPN_QUESTION, user_id="ana")
        assert turn.output["sources"] and turn.output["answer"]
        assert writer.flush(10)
    assert writer.failed == 1
    # what the operator reads (the server redacts every log line): which turn, and the database's reason — never
    # the statement with its parameters (the row's session and question), which once hid the turn's id as well
    logged = caplog.text
    assert f"could not record the outcome of turn {turn.trace_id}: " in logged
    assert "no such table: turn_outcomes" in logged or 'relation "turn_outcomes" does not exist' in logged
    assert "INSERT INTO" not in logged and "[parameters:" not in logged


def test_a_full_queue_drops_the_outcome_logs_it_and_never_blocks_the_chat(db, caplog):
    store = HeldStore(db)
    writer = OutcomeWriter(store, max_pending=2)
    rows = random_turns(random.Random(4), 6)[:5]
    writer.submit(rows[0])
    assert store.busy.wait(10)  # the writer holds the first row
    with caplog.at_level(logging.WARNING, logger="app.insights.writer"):
        started = time.monotonic()
        for row in rows[1:]:
            writer.submit(row)
        assert time.monotonic() - started < 10.0  # (a blocked submit would wait for the held row for ever)
    # two wait in the queue; the last two had no room
    assert writer.dropped == 2 and "outcome writer is behind" in caplog.text
    store.go.set()
    writer.close(timeout=10)
    with db.connect() as conn:
        written = conn.execute(sa.select(turn_outcomes.c.trace_id)).scalars().all()
    assert sorted(written) == sorted(r["trace_id"] for r in rows[:3])


def test_a_question_that_cannot_be_redacted_is_not_kept_but_its_turn_counts(db, caplog):
    class BrokenRedactor:
        def redact(self, text):
            raise RuntimeError("the names model could not be loaded")

    writer = OutcomeWriter(OutcomeStore(db, redactor=BrokenRedactor()))
    rows = random_turns(random.Random(6), 3)
    gap = rows[0] | {"outcome": "abstained", "gap": 1, "question": "Ana Lopez cannot log in"}
    with caplog.at_level(logging.WARNING, logger="app.insights.outcomes"):
        for row in [gap, *rows[1:]]:
            writer.submit(row)
        writer.close(timeout=10)
    with db.connect() as conn:
        stored = dict(conn.execute(sa.select(turn_outcomes.c.trace_id, turn_outcomes.c.question)).all())
    assert len(stored) == len(rows) and stored[gap["trace_id"]] is None
    assert writer.failed == 0 and f"the question of turn {gap['trace_id']} is not kept" in caplog.text
