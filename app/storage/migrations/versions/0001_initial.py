"""Tickets, feedback votes, traces, session owners and conversation aliases in one database.

Revision ID: 0001
Revises:
"""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "tickets",
        sa.Column("id", sa.String(16), primary_key=True),
        sa.Column("status", sa.String(8), nullable=False),
        sa.Column("session_id", sa.Text, nullable=False),
        sa.Column("user_id", sa.Text, nullable=False),
        sa.Column("summary", sa.Text, nullable=False),
        sa.Column("description", sa.Text, nullable=False),
        sa.Column("priority", sa.Text, nullable=False),
        sa.Column("topic", sa.Text, nullable=False),
        sa.Column("os", sa.Text, nullable=False),
        sa.Column("steps_tried", sa.Text, nullable=False),
        sa.Column("conversation", sa.Text, nullable=False),
        sa.Column("jira_key", sa.Text),
        sa.Column("jira_url", sa.Text),
        sa.Column("jira_error", sa.Text),
        sa.Column("jira_status", sa.Text),
        sa.Column("created_at", sa.String(32), nullable=False),
        sa.Column("updated_at", sa.String(32), nullable=False),
        sa.CheckConstraint("status IN ('open', 'closed')", name="tickets_status"),
    )
    op.create_index("tickets_by_session", "tickets", ["session_id", "status"])
    op.create_index("tickets_by_user", "tickets", ["user_id", "status"])
    op.create_table(
        "ticket_comments",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("ticket_id", sa.String(16), sa.ForeignKey("tickets.id", ondelete="CASCADE"), nullable=False),
        sa.Column("body", sa.Text, nullable=False),
        sa.Column("created_at", sa.String(32), nullable=False),
    )
    op.create_index("comments_by_ticket", "ticket_comments", ["ticket_id", "id"])

    op.create_table(
        "answers",
        sa.Column("message_id", sa.String(64), primary_key=True),
        sa.Column("session_id", sa.Text, nullable=False),
        sa.Column("query", sa.Text, nullable=False),
        sa.Column("created_at", sa.String(32), nullable=False),
    )
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
    op.create_table(
        "votes",
        sa.Column(
            "message_id", sa.String(64), sa.ForeignKey("answers.message_id", ondelete="CASCADE"), primary_key=True
        ),
        sa.Column("rating", sa.String(8), nullable=False),
        sa.Column("reason", sa.Text),
        sa.Column("embedding", sa.LargeBinary),
        sa.Column("created_at", sa.String(32), nullable=False),
        sa.Column("updated_at", sa.String(32), nullable=False),
        sa.CheckConstraint("rating IN ('up', 'down')", name="votes_rating"),
    )

    op.create_table(
        "runs",
        sa.Column("trace_id", sa.String(64), primary_key=True),
        sa.Column("graph", sa.Text, nullable=False),
        sa.Column("session_id", sa.Text),
        sa.Column("user_id", sa.Text),
        sa.Column("action", sa.Text),
        sa.Column("intent", sa.Text),
        sa.Column("status", sa.Text, nullable=False),
        sa.Column("started_at", sa.Float, nullable=False),
        sa.Column("duration_ms", sa.Float),
        sa.Column("summary", sa.Text, nullable=False),
        sa.Column("path", sa.Text, nullable=False, server_default="[]"),
        sa.Column("record", sa.Text, nullable=False),
    )
    op.create_index("runs_started", "runs", ["started_at"])
    op.create_index("runs_session", "runs", ["session_id", "started_at"])
    op.create_index("runs_user", "runs", ["user_id", "started_at"])
    op.create_index("runs_action", "runs", ["action", "started_at"])
    op.create_table(
        "run_feedback",
        sa.Column("trace_id", sa.String(64), primary_key=True),
        sa.Column("rating", sa.Text, nullable=False),
        sa.Column("reason", sa.Text),
        sa.Column("at", sa.Float, nullable=False),
    )

    op.create_table(
        "session_owners",
        sa.Column("thread_id", sa.String(128), primary_key=True),
        sa.Column("user_id", sa.Text, nullable=False),
        sa.Column("created_ts", sa.Float, nullable=False),
    )
    op.create_table(
        "conversation_aliases",
        sa.Column("fingerprint", sa.String(128), primary_key=True),
        sa.Column("thread_id", sa.String(128), nullable=False),
        sa.Column("created_ts", sa.Float, nullable=False),
    )
    op.create_index("aliases_by_age", "conversation_aliases", ["created_ts"])
    op.create_index("aliases_by_thread", "conversation_aliases", ["thread_id"])


def downgrade() -> None:
    for index, table in (("aliases_by_thread", "conversation_aliases"), ("aliases_by_age", "conversation_aliases")):
        op.drop_index(index, table_name=table)
    for table in (
        "conversation_aliases",
        "session_owners",
        "run_feedback",
        "runs",
        "votes",
        "answer_chunks",
        "answers",
        "ticket_comments",
        "tickets",
    ):
        op.drop_table(table)
