"""Ingestion jobs and the uploaded originals every replica and worker reads.

Revision ID: 0003
Revises: 0002
"""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "jobs",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("payload", sa.Text, nullable=False),
        sa.Column("progress_done", sa.Integer, nullable=False, server_default="0"),
        sa.Column("progress_total", sa.Integer, nullable=False, server_default="0"),
        sa.Column("error", sa.Text),
        sa.Column("error_kind", sa.String(32)),
        sa.Column("result", sa.Text),
        sa.Column("attempts", sa.Integer, nullable=False, server_default="0"),
        sa.Column("cancel_requested", sa.Integer, nullable=False, server_default="0"),
        sa.Column("worker", sa.Text),
        sa.Column("lease_until", sa.Float),
        sa.Column("heartbeat_at", sa.Float),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("started_at", sa.Float),
        sa.Column("finished_at", sa.Float),
        sa.CheckConstraint("state IN ('queued', 'running', 'done', 'failed', 'cancelled')", name="jobs_state"),
        sa.CheckConstraint("kind IN ('index_upload', 'sync_source', 'sync_kb')", name="jobs_kind"),
    )
    op.create_index("jobs_by_state", "jobs", ["state", "created_at"])
    op.create_index("jobs_by_age", "jobs", ["created_at"])
    op.create_table(
        "document_originals",
        sa.Column("doc_id", sa.String(16), primary_key=True),
        sa.Column("version", sa.String(16), primary_key=True),
        sa.Column("filename", sa.Text, nullable=False),
        sa.Column("data", sa.LargeBinary, nullable=False),
        sa.Column("size_bytes", sa.Integer, nullable=False),
        sa.Column("created_at", sa.Float, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("document_originals")
    op.drop_index("jobs_by_age", table_name="jobs")
    op.drop_index("jobs_by_state", table_name="jobs")
    op.drop_table("jobs")
