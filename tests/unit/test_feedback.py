"""The feedback store: votes per message, bounded per-chunk multipliers, caching."""

from __future__ import annotations

from datetime import UTC

import pytest

from app.adapters.feedback import CitedChunk, FeedbackStore, cited_chunks
from core.errors import UnknownMessage
from tests.fakes import HashingEmbedder

EMBED = HashingEmbedder().embed_query
QUESTION = "how do I connect to the vpn"


def cited(*keys: str) -> list[CitedChunk]:
    return [CitedChunk(key=k, chunk_id=f"id-{k}", label=f"Doc › {k}", source="kb/doc.md") for k in keys]


@pytest.fixture
def store(tmp_path):
    s = FeedbackStore(
        tmp_path / "feedback.sqlite", embed=EMBED, min_votes=3, max_multiplier=2.0, similarity=0.8, cache_s=60
    )
    yield s
    s.close()


def vote_on(store: FeedbackStore, n: int, rating: str, *keys: str, start: int = 0, question: str = QUESTION) -> None:
    for i in range(start, start + n):
        store.record_answer(f"m{i}", "s1", question, cited(*keys))
        store.vote(f"m{i}", "s1", rating)


def test_no_adjustment_until_a_chunk_has_the_minimum_number_of_votes(store):
    vote_on(store, 2, "down", "a")
    assert store.multipliers(["a"]) == {}
    vote_on(store, 1, "down", "a", start=2)
    assert 0.5 < store.multipliers(["a"])["a"] < 1


@pytest.mark.parametrize("rating", ["up", "down"])
def test_the_multiplier_stays_within_the_configured_bounds_however_many_votes(store, rating):
    vote_on(store, 200, rating, "a")
    m = store.multipliers(["a"])["a"]
    assert (1.9 < m <= 2.0) if rating == "up" else (0.5 <= m < 0.53)


def test_mixed_votes_partly_cancel_out(store):
    vote_on(store, 4, "up", "a")
    vote_on(store, 2, "down", "a", start=4)
    assert 1.0 < store.multipliers(["a"])["a"] < store.multiplier(4, 0)


def test_a_vote_credits_every_chunk_the_answer_cited_and_only_those(store):
    vote_on(store, 3, "up", "a", "b")
    assert set(store.multipliers(["a", "b", "c"])) == {"a", "b"}


def test_voting_again_on_a_message_replaces_the_earlier_vote(store):
    store.record_answer("m1", "s1", QUESTION, cited("a"))
    assert store.vote("m1", "s1", "up").status == "recorded"
    result = store.vote("m1", "s1", "down", "it was the wrong printer")
    assert result.status == "updated" and result.chunks == 1
    stats = store.stats()
    assert stats["votes"] == {"up": 0, "down": 1, "total": 1}
    assert stats["recent_reasons"][0]["reason"] == "it was the wrong printer"


def test_feedback_on_a_message_the_session_never_received_is_refused(store):
    store.record_answer("m1", "s1", QUESTION, cited("a"))
    with pytest.raises(UnknownMessage):
        store.vote("m1", "another-session", "up")
    with pytest.raises(UnknownMessage):
        store.vote("never-sent", "s1", "up")
    with pytest.raises(ValueError):
        store.vote("m1", "s1", "sideways")


def test_multipliers_are_cached_and_a_local_vote_refreshes_them(tmp_path):
    path = tmp_path / "feedback.sqlite"
    reader = FeedbackStore(path, embed=EMBED, min_votes=1, cache_s=3600)
    writer = FeedbackStore(path, embed=EMBED, min_votes=1, cache_s=3600)
    assert reader.multipliers(["a"]) == {}
    writer.record_answer("m1", "s1", QUESTION, cited("a"))
    writer.vote("m1", "s1", "up")
    assert reader.multipliers(["a"]) == {}  # cached: another process's vote shows after the TTL
    assert writer.multipliers(["a"])["a"] > 1  # this process's own vote shows at once
    reader.close(), writer.close()


def test_votes_only_count_for_searches_with_a_similar_question(store):
    vote_on(store, 3, "down", "a", question="how do I connect to the vpn")
    vote_on(store, 3, "up", "a", start=3, question="printer toner replacement steps")
    assert store.multipliers(["a"], EMBED("connect to the vpn how"))["a"] < 1  # only the VPN votes count
    assert store.multipliers(["a"], EMBED("replacement steps for printer toner"))["a"] > 1
    assert store.multipliers(["a"], EMBED("what is the capital of France")) == {}
    assert store.multipliers(["a"]) == {}  # all six votes: three up, three down cancel out


def test_stats_list_the_adjusted_chunks_with_their_labels(store):
    vote_on(store, 3, "up", "good")
    vote_on(store, 3, "down", "bad", start=3)
    stats = store.stats()
    assert stats["chunks_adjusted"] == 2 and stats["multiplier_range"] == [0.5, 2.0]
    assert stats["top_boosted"][0]["label"] == "Doc › good" and stats["top_penalised"][0]["key"] == "bad"


def test_cited_chunks_take_their_keys_from_the_retrieved_chunks():
    sources = [{"n": 1, "title": "VPN", "section": "macOS", "source": "kb/vpn.md", "chunk_id": "c1", "score": 0.9}]
    retrieved = [{"chunk_id": "c1", "doc_id": "d", "content_hash": "h"}]
    [one] = cited_chunks(sources, retrieved, lambda c: f"{c['doc_id']}:{c['content_hash']}")
    assert (one.key, one.label, one.chunk_id) == ("d:h", "VPN › macOS", "c1")


def _age(store: FeedbackStore, message_id: str, hours: float) -> None:
    from datetime import datetime, timedelta

    from app.storage.schema import answers

    at = (datetime.now(UTC) - timedelta(hours=hours)).isoformat(timespec="seconds")
    with store.db.begin() as conn:
        conn.execute(answers.update().where(answers.c.message_id == message_id).values(created_at=at))


def test_an_unvoted_answer_is_forgotten_after_the_vote_window_and_a_voted_one_is_kept(tmp_path):
    store = FeedbackStore(tmp_path / "feedback.sqlite", embed=EMBED, min_votes=1, vote_window_s=24 * 3600)
    store.record_answer("old-voted", "s1", QUESTION, cited("a", "b"))
    store.vote("old-voted", "s1", "up")
    store.record_answer("old-unvoted", "s1", QUESTION, cited("c"))
    store.record_answer("recent", "s1", QUESTION, cited("a", "d"))
    for message_id in ("old-voted", "old-unvoted"):
        _age(store, message_id, 25)

    assert store.prune() == 1
    assert store.stats()["answers_recorded"] == 2
    with pytest.raises(UnknownMessage, match="24 hours"):
        store.vote("old-unvoted", "s1", "up")
    assert store.vote("recent", "s1", "down").chunks == 2  # still inside the window
    assert store.vote("old-voted", "s1", "down").status == "updated"  # a voted answer outlives the window
    from app.storage.schema import cited_chunks as passages

    with store.db.connect() as conn:  # the passage only the forgotten answer cited went with it
        assert {key for (key,) in conn.execute(passages.select().with_only_columns(passages.c.key))} == {"a", "b", "d"}
    store.close()


def test_a_passage_cited_by_many_answers_is_stored_once(store):
    from sqlalchemy import func, select

    from app.storage.schema import cited_chunks as passages

    for i in range(5):
        store.record_answer(f"m{i}", "s1", QUESTION, cited("a", "b"))
    with store.db.connect() as conn:
        assert conn.execute(select(func.count()).select_from(passages)).scalar() == 2
    assert store.vote("m4", "s1", "up").chunks == 2
