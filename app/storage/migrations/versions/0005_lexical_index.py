"""The shared lexical index: BM25 postings of the active chunks, for replicas on one Postgres.

Revision ID: 0005
Revises: 0002
"""

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "lexical_documents",
        sa.Column("collection", sa.String(128), primary_key=True),
        sa.Column("doc_id", sa.Text, primary_key=True),
        sa.Column("version", sa.Text, nullable=False),
    )
    op.create_table(
        "lexical_chunks",
        sa.Column("row_id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("collection", sa.String(128), nullable=False),
        sa.Column("chunk_id", sa.Text, nullable=False),
        sa.Column("doc_id", sa.Text, nullable=False),
        sa.Column("version", sa.Text, nullable=False),
        sa.Column("chunk_index", sa.Integer, nullable=False),
        sa.Column("length", sa.Integer, nullable=False),
        sa.Column("restricted", sa.Boolean, nullable=False),
        sa.Column("record", sa.Text, nullable=False),
        sa.UniqueConstraint("collection", "chunk_id", name="lexical_chunks_id"),
    )
    op.create_index("lexical_chunks_by_doc", "lexical_chunks", ["collection", "doc_id", "chunk_index"])
    op.create_table(
        "lexical_values",
        sa.Column("row_id", sa.Integer, sa.ForeignKey("lexical_chunks.row_id", ondelete="CASCADE"), primary_key=True),
        sa.Column("field", sa.String(32), primary_key=True),
        sa.Column("value", sa.String(128), primary_key=True),
    )
    op.create_index("lexical_values_by_value", "lexical_values", ["field", "value"])
    op.create_table(
        "lexical_postings",
        sa.Column("collection", sa.String(128), primary_key=True),
        sa.Column("term", sa.Text, primary_key=True),
        sa.Column("row_id", sa.Integer, sa.ForeignKey("lexical_chunks.row_id", ondelete="CASCADE"), primary_key=True),
        sa.Column("tf", sa.Integer, nullable=False),
        sa.Column("length", sa.Integer, nullable=False),
        sa.Column("restricted", sa.Boolean, nullable=False),
    )
    op.create_index("lexical_postings_by_row", "lexical_postings", ["row_id"])
    op.create_table(
        "lexical_terms",
        sa.Column("collection", sa.String(128), primary_key=True),
        sa.Column("term", sa.Text, primary_key=True),
        sa.Column("df", sa.Integer, nullable=False),
    )
    op.create_table(
        "lexical_stats",
        sa.Column("collection", sa.String(128), primary_key=True),
        sa.Column("chunks", sa.Integer, nullable=False),
        sa.Column("total_length", sa.BigInteger, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("lexical_stats")
    op.drop_table("lexical_terms")
    op.drop_index("lexical_postings_by_row", table_name="lexical_postings")
    op.drop_table("lexical_postings")
    op.drop_index("lexical_values_by_value", table_name="lexical_values")
    op.drop_table("lexical_values")
    op.drop_index("lexical_chunks_by_doc", table_name="lexical_chunks")
    op.drop_table("lexical_chunks")
    op.drop_table("lexical_documents")
