"""Chat platforms: `channel_deliveries` (an event or button press handled once, whatever the platform retries)
and `channel_ticket_threads` (the thread a ticket was created from, told when its status changes).

Revision ID: 0011
Revises: 0010
"""

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "channel_deliveries",
        sa.Column("key", sa.String(200), primary_key=True),
        sa.Column("at", sa.Float, nullable=False),
    )
    op.create_index("channel_deliveries_by_age", "channel_deliveries", ["at"])
    op.create_table(
        "channel_ticket_threads",
        sa.Column("ticket_id", sa.String(16), sa.ForeignKey("tickets.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("platform", sa.String(16), nullable=False),
        sa.Column("thread", sa.Text, nullable=False),
        sa.Column("last_status", sa.Text, nullable=False),
        sa.Column("open", sa.Integer, nullable=False, server_default="1"),
        sa.Column("created_at", sa.Float, nullable=False),
    )
    op.create_index("channel_ticket_threads_open", "channel_ticket_threads", ["open"])


def downgrade() -> None:
    op.drop_table("channel_ticket_threads")
    op.drop_table("channel_deliveries")
