"""Trace records in a binary column: `runs.packed` holds the record zlib-compressed (no base85 text around it),
without the fields the row's own columns hold and what its node list gives back (app/adapters/traces.py).

Rows written before keep their whole record in the text column `record` and are read as before; new rows
leave it empty. Nothing is rewritten, so the upgrade is instant on any size of trace table.
Downgrading drops the column and the runs written in the binary form (an older deskmate cannot read them;
traces are diagnostics, and the retention prunes them anyway).

Revision ID: 0009
Revises: 0006
"""

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("runs", sa.Column("packed", sa.LargeBinary, nullable=True))


def downgrade() -> None:
    op.execute("DELETE FROM run_feedback WHERE trace_id IN (SELECT trace_id FROM runs WHERE packed IS NOT NULL)")
    op.execute("DELETE FROM runs WHERE packed IS NOT NULL")
    with op.batch_alter_table("runs") as batch:
        batch.drop_column("packed")
