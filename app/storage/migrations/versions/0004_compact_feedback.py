"""Compact feedback: a cited passage stored once, an answer keeps only the ids of the passages it cited.

`answer_chunks` held a row per citation (key, chunk id, label, source: about 8 KB a turn). Its rows move to
`cited_chunks` (one per passage, its id a 64-bit content hash of the key) and to `answers.cited` (those ids,
8 bytes each, big-endian). Every answer and vote is kept, so recent answers can still be voted on and
earlier votes still credit the same passages.

Revision ID: 0004
Revises: 0002
"""

import hashlib
import struct

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

BATCH = 1000

answers = sa.table("answers", sa.column("message_id", sa.String), sa.column("cited", sa.LargeBinary))
answer_chunks = sa.table(
    "answer_chunks",
    sa.column("message_id", sa.String),
    sa.column("key", sa.Text),
    sa.column("chunk_id", sa.Text),
    sa.column("label", sa.Text),
    sa.column("source", sa.Text),
)
cited_chunks = sa.table(
    "cited_chunks",
    sa.column("id", sa.BigInteger),
    sa.column("key", sa.Text),
    sa.column("chunk_id", sa.Text),
    sa.column("label", sa.Text),
    sa.column("source", sa.Text),
)


def _ref(key: str) -> int:
    # the same as app.adapters.feedback.chunk_ref, written out so this revision never changes with the app
    return int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big", signed=True)


def upgrade() -> None:
    op.create_table(
        "cited_chunks",
        sa.Column("id", sa.BigInteger, primary_key=True, autoincrement=False),
        sa.Column("key", sa.Text, nullable=False),
        sa.Column("chunk_id", sa.Text, nullable=False),
        sa.Column("label", sa.Text, nullable=False),
        sa.Column("source", sa.Text, nullable=False),
    )
    op.add_column("answers", sa.Column("cited", sa.LargeBinary))
    op.create_index("answers_by_age", "answers", ["created_at"])

    bind = op.get_bind()
    passages: dict[str, dict] = {}
    refs_of: dict[str, list[int]] = {}
    rows = bind.execute(
        sa.select(
            answer_chunks.c.message_id,
            answer_chunks.c.key,
            answer_chunks.c.chunk_id,
            answer_chunks.c.label,
            answer_chunks.c.source,
        ).order_by(answer_chunks.c.message_id, answer_chunks.c.key)
    )
    for message_id, key, chunk_id, label, source in rows:
        ref = _ref(key)
        passages.setdefault(key, {"id": ref, "key": key, "chunk_id": chunk_id, "label": label, "source": source})
        refs_of.setdefault(message_id, []).append(ref)
    values = list(passages.values())
    for start in range(0, len(values), BATCH):
        bind.execute(cited_chunks.insert(), values[start : start + BATCH])
    updates = [
        {"m": message_id, "packed": struct.pack(f">{len(refs)}q", *refs)} for message_id, refs in refs_of.items()
    ]
    statement = answers.update().where(answers.c.message_id == sa.bindparam("m")).values(cited=sa.bindparam("packed"))
    for start in range(0, len(updates), BATCH):
        bind.execute(statement, updates[start : start + BATCH])

    op.drop_index("answer_chunks_key", table_name="answer_chunks")
    op.drop_table("answer_chunks")


def downgrade() -> None:
    op.create_table(
        "answer_chunks",
        sa.Column(
            "message_id", sa.String(64), sa.ForeignKey("answers.message_id", ondelete="CASCADE"), primary_key=True
        ),
        sa.Column("key", sa.Text, primary_key=True),
        sa.Column("chunk_id", sa.Text, nullable=False),
        sa.Column("label", sa.Text, nullable=False),
        sa.Column("source", sa.Text, nullable=False),
    )
    op.create_index("answer_chunks_key", "answer_chunks", ["key"])
    bind = op.get_bind()
    passages = {row.id: row for row in bind.execute(sa.select(cited_chunks))}
    restored = []
    for message_id, packed in bind.execute(sa.select(answers.c.message_id, answers.c.cited)):
        packed = bytes(packed or b"")
        for ref in struct.unpack(f">{len(packed) // 8}q", packed):
            if ref in passages:
                p = passages[ref]
                restored.append(
                    {
                        "message_id": message_id,
                        "key": p.key,
                        "chunk_id": p.chunk_id,
                        "label": p.label,
                        "source": p.source,
                    }
                )
    for start in range(0, len(restored), BATCH):
        bind.execute(answer_chunks.insert(), restored[start : start + BATCH])
    op.drop_index("answers_by_age", table_name="answers")
    with op.batch_alter_table("answers", recreate="never") as batch:  # SQLite ≥ 3.35 drops a column in place
        batch.drop_column("cited")
    op.drop_table("cited_chunks")
