"""Chat platforms: `channel_cards` (a posted card a button press redraws, for platforms that do not send the card
back with the press, such as Teams).

Revision ID: 0012
Revises: 0011
"""

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "channel_cards",
        sa.Column("key", sa.String(200), primary_key=True),
        sa.Column("card", sa.Text, nullable=False),
        sa.Column("at", sa.Float, nullable=False),
    )
    op.create_index("channel_cards_by_age", "channel_cards", ["at"])


def downgrade() -> None:
    op.drop_table("channel_cards")
