"""Per-day rollups of the outcome rows (app/insights/rollup.py): what the insights figures read, so a 30-day
window costs its days' summary rows instead of its turns (a conversation of one day only is counted in its
day's `insight_deflection` and its walkthroughs in `insight_walkthrough_days`; `alone` = 0 marks the rows of
the few that span days or collections). New tables only, filled here from the outcome rows
already written (one grouped INSERT … SELECT each, the same as app/insights/rollup.py `rebuild`); from then on
the outcome store keeps them up to date as turns and votes are written. Downgrading drops them (the figures of
the older code count the outcome rows).

Revision ID: 0013
Revises: 0012
"""

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None

ANSWERED = "('answered', 'resolved', 'walkthrough_step')"
UNANSWERED = "('abstained', 'ticket_offered', 'handoff', 'out_of_scope')"
# the rollups of the rows already written, as app/insights/rollup.py `rebuild` computes them
BACKFILL = (
    """INSERT INTO insight_hours (day, collection, channel, hour, turns)
    SELECT day, collection, channel, hour, COUNT(*) FROM turn_outcomes GROUP BY day, collection, channel, hour""",
    """INSERT INTO insight_outcomes (day, collection, channel, outcome, ticket_category, ticket_priority, turns)
    SELECT day, collection, channel, outcome,
        COALESCE(CASE WHEN outcome = 'ticket_created' THEN ticket_category END, ''),
        COALESCE(CASE WHEN outcome = 'ticket_created' THEN ticket_priority END, ''), COUNT(*)
    FROM turn_outcomes
    GROUP BY day, collection, channel, outcome,
        COALESCE(CASE WHEN outcome = 'ticket_created' THEN ticket_category END, ''),
        COALESCE(CASE WHEN outcome = 'ticket_created' THEN ticket_priority END, '')""",
    f"""INSERT INTO insight_articles (day, collection, doc_id, citations, helpful, not_helpful)
    SELECT day, collection, COALESCE(doc_id, ''),
        SUM(CASE WHEN outcome IN {ANSWERED} THEN 1 ELSE 0 END),
        SUM(CASE WHEN vote = 'up' THEN 1 ELSE 0 END), SUM(CASE WHEN vote = 'down' THEN 1 ELSE 0 END)
    FROM turn_outcomes WHERE outcome IN {ANSWERED} OR vote IN ('up', 'down')
    GROUP BY day, collection, COALESCE(doc_id, '')""",
    """INSERT INTO insight_sections (day, collection, doc_id, section, helpful, not_helpful)
    SELECT day, collection, COALESCE(doc_id, ''), COALESCE(section, ''),
        SUM(CASE WHEN vote = 'up' THEN 1 ELSE 0 END), SUM(CASE WHEN vote = 'down' THEN 1 ELSE 0 END)
    FROM turn_outcomes WHERE vote IN ('up', 'down')
    GROUP BY day, collection, COALESCE(doc_id, ''), COALESCE(section, '')""",
    f"""INSERT INTO insight_conversations
        (day, collection, session_id, tickets, confirmations, answered_at, unanswered_at, last_ticket)
    SELECT day, collection, session_id,
        SUM(CASE WHEN outcome = 'ticket_created' THEN 1 ELSE 0 END),
        SUM(CASE WHEN outcome = 'resolved' THEN 1 WHEN vote = 'up' THEN 1 ELSE 0 END),
        MAX(CASE WHEN outcome IN {ANSWERED} THEN ts END), MAX(CASE WHEN outcome IN {UNANSWERED} THEN ts END),
        MAX(CASE WHEN outcome = 'ticket_created' THEN ts END)
    FROM turn_outcomes WHERE outcome <> 'conversation'
    GROUP BY day, collection, session_id""",
    """UPDATE insight_conversations SET alone = CASE WHEN session_id IN
        (SELECT session_id FROM insight_conversations GROUP BY session_id HAVING COUNT(*) > 1) THEN 0 ELSE 1 END""",
    """INSERT INTO insight_deflection (day, collection, conversations, deflected, confirmed, ticketed)
    SELECT day, collection, COUNT(*),
        SUM(CASE WHEN answered_at IS NOT NULL AND (unanswered_at IS NULL OR answered_at > unanswered_at)
            AND tickets = 0 THEN 1 ELSE 0 END),
        SUM(CASE WHEN confirmations > 0 AND tickets = 0 THEN 1 ELSE 0 END),
        SUM(CASE WHEN tickets > 0 THEN 1 ELSE 0 END)
    FROM insight_conversations WHERE alone = 1
    GROUP BY day, collection""",
    """INSERT INTO insight_walkthroughs (day, collection, session_id, doc_id, first_step)
    SELECT day, collection, session_id, COALESCE(doc_id, ''), MIN(ts)
    FROM turn_outcomes WHERE outcome = 'walkthrough_step'
    GROUP BY day, collection, session_id, COALESCE(doc_id, '')""",
    """UPDATE insight_walkthroughs SET alone = CASE WHEN session_id IN
        (SELECT session_id FROM insight_conversations WHERE alone = 1) THEN 1 ELSE 0 END""",
    """INSERT INTO insight_walkthrough_days (day, collection, doc_id, walkthroughs, ended_in_ticket)
    SELECT w.day, w.collection, w.doc_id, COUNT(*), SUM(CASE WHEN c.last_ticket > w.first_step THEN 1 ELSE 0 END)
    FROM insight_walkthroughs w JOIN insight_conversations c
        ON c.day = w.day AND c.collection = w.collection AND c.session_id = w.session_id
    WHERE w.alone = 1
    GROUP BY w.day, w.collection, w.doc_id""",
)


def upgrade() -> None:
    op.create_table(
        "insight_hours",
        sa.Column("day", sa.Integer, primary_key=True),
        sa.Column("collection", sa.String(128), primary_key=True),
        sa.Column("channel", sa.String(16), primary_key=True),
        sa.Column("hour", sa.Integer, primary_key=True),
        sa.Column("turns", sa.Integer, nullable=False),
    )
    op.create_table(
        "insight_outcomes",
        sa.Column("day", sa.Integer, primary_key=True),
        sa.Column("collection", sa.String(128), primary_key=True),
        sa.Column("channel", sa.String(16), primary_key=True),
        sa.Column("outcome", sa.String(24), primary_key=True),
        sa.Column("ticket_category", sa.String(16), primary_key=True),
        sa.Column("ticket_priority", sa.String(16), primary_key=True),
        sa.Column("turns", sa.Integer, nullable=False),
    )
    op.create_table(
        "insight_articles",
        sa.Column("day", sa.Integer, primary_key=True),
        sa.Column("collection", sa.String(128), primary_key=True),
        sa.Column("doc_id", sa.String(64), primary_key=True),
        sa.Column("citations", sa.Integer, nullable=False),
        sa.Column("helpful", sa.Integer, nullable=False),
        sa.Column("not_helpful", sa.Integer, nullable=False),
    )
    op.create_table(
        "insight_sections",
        sa.Column("day", sa.Integer, primary_key=True),
        sa.Column("collection", sa.String(128), primary_key=True),
        sa.Column("doc_id", sa.String(64), primary_key=True),
        sa.Column("section", sa.Text, primary_key=True),
        sa.Column("helpful", sa.Integer, nullable=False),
        sa.Column("not_helpful", sa.Integer, nullable=False),
    )
    op.create_table(
        "insight_conversations",
        sa.Column("day", sa.Integer, primary_key=True),
        sa.Column("collection", sa.String(128), primary_key=True),
        sa.Column("session_id", sa.String(128), primary_key=True),
        sa.Column("tickets", sa.Integer, nullable=False),
        sa.Column("confirmations", sa.Integer, nullable=False),
        sa.Column("answered_at", sa.Float),
        sa.Column("unanswered_at", sa.Float),
        sa.Column("last_ticket", sa.Float),
        sa.Column("alone", sa.Integer, nullable=False, server_default="1"),
    )
    op.create_index("insight_conversations_by_session", "insight_conversations", ["session_id"])
    op.create_index(
        "insight_conversations_spanning",
        "insight_conversations",
        ["day", "session_id", "collection", "tickets", "confirmations", "answered_at", "unanswered_at"],
        sqlite_where=sa.text("alone = 0"),
        postgresql_where=sa.text("alone = 0"),
    )
    op.create_index(
        "insight_conversations_tickets",
        "insight_conversations",
        ["day", "session_id", "last_ticket"],
        sqlite_where=sa.text("last_ticket IS NOT NULL"),
        postgresql_where=sa.text("last_ticket IS NOT NULL"),
    )
    op.create_table(
        "insight_deflection",
        sa.Column("day", sa.Integer, primary_key=True),
        sa.Column("collection", sa.String(128), primary_key=True),
        sa.Column("conversations", sa.Integer, nullable=False),
        sa.Column("deflected", sa.Integer, nullable=False),
        sa.Column("confirmed", sa.Integer, nullable=False),
        sa.Column("ticketed", sa.Integer, nullable=False),
    )
    op.create_table(
        "insight_walkthroughs",
        sa.Column("day", sa.Integer, primary_key=True),
        sa.Column("collection", sa.String(128), primary_key=True),
        sa.Column("session_id", sa.String(128), primary_key=True),
        sa.Column("doc_id", sa.String(64), primary_key=True),
        sa.Column("first_step", sa.Float, nullable=False),
        sa.Column("alone", sa.Integer, nullable=False, server_default="1"),
    )
    op.create_index("insight_walkthroughs_by_session", "insight_walkthroughs", ["session_id"])
    op.create_index(
        "insight_walkthroughs_spanning",
        "insight_walkthroughs",
        ["day", "doc_id", "session_id", "collection", "first_step"],
        sqlite_where=sa.text("alone = 0"),
        postgresql_where=sa.text("alone = 0"),
    )
    op.create_table(
        "insight_walkthrough_days",
        sa.Column("day", sa.Integer, primary_key=True),
        sa.Column("collection", sa.String(128), primary_key=True),
        sa.Column("doc_id", sa.String(64), primary_key=True),
        sa.Column("walkthroughs", sa.Integer, nullable=False),
        sa.Column("ended_in_ticket", sa.Integer, nullable=False),
    )
    for statement in BACKFILL:
        op.execute(sa.text(statement))


def downgrade() -> None:
    op.drop_table("insight_walkthrough_days")
    for table in ("insight_walkthroughs", "insight_deflection", "insight_conversations", "insight_sections"):
        op.drop_table(table)
    for table in ("insight_articles", "insight_outcomes", "insight_hours"):
        op.drop_table(table)
