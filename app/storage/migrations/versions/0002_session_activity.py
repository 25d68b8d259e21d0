"""When each session last had a turn, for idle-session expiry.

Revision ID: 0002
Revises: 0001
"""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "session_activity",
        sa.Column("thread_id", sa.String(128), primary_key=True),
        sa.Column("last_ts", sa.Float, nullable=False),
    )
    op.create_index("session_activity_by_time", "session_activity", ["last_ts"])


def downgrade() -> None:
    op.drop_index("session_activity_by_time", table_name="session_activity")
    op.drop_table("session_activity")
