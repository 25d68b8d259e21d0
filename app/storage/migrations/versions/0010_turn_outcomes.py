"""The outcome record of every chat turn (app/insights): what GET /admin/insights and `deskmate report` count.

A new table only; nothing existing is rewritten. Downgrading drops it (the figures start again from empty).

Revision ID: 0010
Revises: 0009
"""

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None

OUTCOMES = (
    "answered",
    "walkthrough_step",
    "resolved",
    "abstained",
    "ticket_offered",
    "ticket_created",
    "handoff",
    "out_of_scope",
    "clarified",
    "conversation",
)


def upgrade() -> None:
    op.create_table(
        "turn_outcomes",
        sa.Column("trace_id", sa.String(64), primary_key=True),
        sa.Column("ts", sa.Float, nullable=False),
        sa.Column("day", sa.Integer, nullable=False),
        sa.Column("hour", sa.Integer, nullable=False),
        sa.Column("channel", sa.String(16), nullable=False),
        sa.Column("collection", sa.String(128), nullable=False, server_default=""),
        sa.Column("session_id", sa.String(128), nullable=False),
        sa.Column("asker", sa.String(32), nullable=False),
        sa.Column("action", sa.String(32), nullable=False),
        sa.Column("outcome", sa.String(24), nullable=False),
        sa.Column("doc_id", sa.String(64)),
        sa.Column("doc_title", sa.Text),
        sa.Column("section", sa.Text),
        sa.Column("cited", sa.Text, nullable=False, server_default="[]"),
        sa.Column("confidence", sa.Float),
        sa.Column("vote", sa.String(8)),
        sa.Column("ticket_id", sa.String(16)),
        sa.Column("ticket_priority", sa.String(16)),
        sa.Column("ticket_category", sa.String(16)),
        sa.Column("language", sa.String(8), nullable=False, server_default=""),
        sa.Column("latency_ms", sa.Float),
        sa.Column("gap", sa.Integer, nullable=False, server_default="0"),
        sa.Column("question", sa.Text),
        sa.CheckConstraint(f"outcome IN ({', '.join(repr(o) for o in OUTCOMES)})", name="turn_outcomes_outcome"),
    )
    op.create_index("turn_outcomes_by_day", "turn_outcomes", ["day", "channel", "hour", "outcome", "collection"])
    op.create_index(
        "turn_outcomes_by_conversation", "turn_outcomes", ["day", "session_id", "outcome", "ts", "vote", "collection"]
    )
    op.create_index(
        "turn_outcomes_by_outcome",
        "turn_outcomes",
        ["outcome", "day", "doc_id", "session_id", "ts", "ticket_category", "ticket_priority", "collection"],
    )
    op.create_index(
        "turn_outcomes_by_doc", "turn_outcomes", ["doc_id", "day", "outcome", "vote", "section", "collection"]
    )
    op.create_index("turn_outcomes_by_session", "turn_outcomes", ["session_id", "outcome", "ts"])
    op.create_index(
        "turn_outcomes_questions",
        "turn_outcomes",
        ["day", "ts"],
        sqlite_where=sa.text("question IS NOT NULL"),
        postgresql_where=sa.text("question IS NOT NULL"),
    )


def downgrade() -> None:
    op.drop_table("turn_outcomes")
