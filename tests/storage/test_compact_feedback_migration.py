"""The compact-feedback revision on both engines: a database written with a row per citation keeps every
answer and vote, earlier votes credit the same passages, recent answers can still be voted on, and going
back down restores the citation rows."""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np
import pytest
import sqlalchemy as sa
from alembic import command

from app.adapters.feedback import FeedbackStore
from app.storage import Database
from tests.fakes import HashingEmbedder

EMBED = HashingEmbedder().embed_query
QUESTION = "how do I connect to the vpn"
BEFORE = "0002"  # the revision whose answers kept a row per cited passage
# old layout: three answers citing overlapping passages; two of them voted on
CITED = {"m-1": ["doc:vpn", "doc:mfa"], "m-2": ["doc:vpn"], "m-3": ["doc:vpn", "doc:printer"]}


def _old_rows(db: Database) -> None:
    now = datetime.now(UTC).isoformat(timespec="seconds")
    embedding = np.asarray(EMBED(QUESTION), dtype=np.float32).tobytes()
    answers, chunks, votes = (
        sa.table(name, *[sa.column(c) for c in columns])
        for name, columns in (
            ("answers", ("message_id", "session_id", "query", "created_at")),
            ("answer_chunks", ("message_id", "key", "chunk_id", "label", "source")),
            ("votes", ("message_id", "rating", "reason", "embedding", "created_at", "updated_at")),
        )
    )
    with db.begin() as conn:
        conn.execute(
            answers.insert(),
            [{"message_id": m, "session_id": "s-1", "query": QUESTION, "created_at": now} for m in CITED],
        )
        conn.execute(
            chunks.insert(),
            [
                {"message_id": m, "key": key, "chunk_id": f"c-{key}", "label": f"KB › {key}", "source": "kb/it.md"}
                for m, keys in CITED.items()
                for key in keys
            ],
        )
        conn.execute(
            votes.insert(),
            [
                {
                    "message_id": m,
                    "rating": "up",
                    "reason": "clear",
                    "embedding": embedding,
                    "created_at": now,
                    "updated_at": now,
                }
                for m in ("m-1", "m-2")
            ],
        )


def test_the_compact_feedback_migration_keeps_every_answer_vote_and_citation(database_url):
    db = Database(database_url)
    try:
        assert db.upgrade(BEFORE) == BEFORE
        _old_rows(db)
        db.upgrade()
        store = FeedbackStore(db, embed=EMBED, min_votes=2, max_multiplier=2.0, similarity=0.0)
        stats = store.stats()
        assert stats["answers_recorded"] == 3 and stats["votes"] == {"up": 2, "down": 0, "total": 2}
        # the two votes still credit the passages their answers cited: vpn twice, mfa once
        assert store.multipliers(["doc:vpn", "doc:mfa", "doc:printer"]) == {"doc:vpn": pytest.approx(2 ** (2 / 3))}
        assert [(c["key"], c["label"]) for c in stats["top_boosted"]] == [("doc:vpn", "KB › doc:vpn")]
        # the unvoted answer can still be voted on, and credits what it cited
        assert store.vote("m-3", "s-1", "down").chunks == 2
        assert store.vote("m-1", "s-1", "down").status == "updated"

        with db.connect() as conn:  # and back: the citation rows return
            config = db._alembic_config(conn)
            command.downgrade(config, BEFORE)
            conn.commit()
            rows = conn.execute(sa.text("SELECT message_id, key FROM answer_chunks ORDER BY message_id, key")).all()
            assert {(m, k) for m, k in rows} == {(m, k) for m, keys in CITED.items() for k in keys}
            assert conn.execute(sa.text("SELECT COUNT(*) FROM votes")).scalar() == 3
    finally:
        db.close()
