"""Synced knowledge sources and the documents each one indexed, in the relational store.

Revision ID: 0006
Revises: 0002
"""

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "sources",
        sa.Column("id", sa.String(16), primary_key=True),
        sa.Column("type", sa.String(32), nullable=False),
        sa.Column("name", sa.Text, nullable=False),
        sa.Column("base_url", sa.Text, nullable=False),
        sa.Column("scope", sa.Text, nullable=False),
        sa.Column("credential_env", sa.Text, nullable=False),
        sa.Column("group_map", sa.Text, nullable=False),
        sa.Column("schedule", sa.Text, nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("cursor", sa.Text),
        sa.Column("last_sync_at", sa.String(32)),
        sa.Column("last_error", sa.Text),
        sa.Column("last_counts", sa.Text, nullable=False),
        sa.Column("created_at", sa.String(32), nullable=False),
    )
    op.create_table(
        "source_documents",
        sa.Column("source_id", sa.String(16), sa.ForeignKey("sources.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("external_id", sa.Text, primary_key=True),
        sa.Column("doc_id", sa.String(32), nullable=False),
        sa.Column("url", sa.Text, nullable=False),
        sa.Column("version", sa.Text, nullable=False),
        sa.Column("audience", sa.Text, nullable=False),
        sa.Column("title", sa.Text, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("source_documents")
    op.drop_table("sources")
