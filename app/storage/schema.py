"""Every table deskmate keeps outside the vector store, as SQLAlchemy Core metadata.

The migrations in app/storage/migrations create exactly these; a change here needs a new revision there
(tests/unit/test_storage.py compares the two). Types are the portable subset: text, integers, floats,
bytes; timestamps are what the stores wrote before (ISO text for tickets and votes, epoch seconds for
traces and sessions), so a data dir copied from the per-file SQLite layout keeps its values unchanged.
"""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    Column,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
    text,
)

metadata = MetaData()

# --- tickets (app/adapters/ticket_store.py) ---------------------------------------------------------------
tickets = Table(
    "tickets",
    metadata,
    Column("id", String(16), primary_key=True),
    Column("status", String(8), nullable=False),
    Column("session_id", Text, nullable=False),
    Column("user_id", Text, nullable=False),
    Column("summary", Text, nullable=False),
    Column("description", Text, nullable=False),
    Column("priority", Text, nullable=False),
    Column("topic", Text, nullable=False),
    Column("os", Text, nullable=False),
    Column("steps_tried", Text, nullable=False),  # JSON list of {step, outcome}
    Column("conversation", Text, nullable=False),  # JSON list of {role, content}, redacted
    Column("jira_key", Text),
    Column("jira_url", Text),
    Column("jira_error", Text),
    Column("jira_status", Text),
    Column("created_at", String(32), nullable=False),  # UTC ISO 8601
    Column("updated_at", String(32), nullable=False),
    CheckConstraint("status IN ('open', 'closed')", name="tickets_status"),
    Index("tickets_by_session", "session_id", "status"),
    Index("tickets_by_user", "user_id", "status"),
)
ticket_comments = Table(
    "ticket_comments",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("ticket_id", String(16), ForeignKey("tickets.id", ondelete="CASCADE"), nullable=False),
    Column("body", Text, nullable=False),
    Column("created_at", String(32), nullable=False),
    Index("comments_by_ticket", "ticket_id", "id"),
)

# --- feedback (app/adapters/feedback.py) ------------------------------------------------------------------
answers = Table(
    "answers",
    metadata,
    Column("message_id", String(64), primary_key=True),
    Column("session_id", Text, nullable=False),
    Column("query", Text, nullable=False),  # the redacted question, embedded when the answer gets a vote
    Column("created_at", String(32), nullable=False),
    Column("cited", LargeBinary),  # the cited passages' ids (cited_chunks.id), 8 bytes each, big-endian
    Index("answers_by_age", "created_at"),
)
# every passage an answer cited, once: what a vote credits and what the stats page names
cited_chunks = Table(
    "cited_chunks",
    metadata,
    Column("id", BigInteger, primary_key=True, autoincrement=False),  # a 64-bit content hash of `key`
    Column("key", Text, nullable=False),  # nodes.support.retrieval.feedback_key: doc_id:content_hash
    Column("chunk_id", Text, nullable=False),
    Column("label", Text, nullable=False),
    Column("source", Text, nullable=False),
)
votes = Table(
    "votes",
    metadata,
    Column("message_id", String(64), ForeignKey("answers.message_id", ondelete="CASCADE"), primary_key=True),
    Column("rating", String(8), nullable=False),
    Column("reason", Text),
    Column("embedding", LargeBinary),  # float32 embedding of the answer's question
    Column("created_at", String(32), nullable=False),
    Column("updated_at", String(32), nullable=False),
    CheckConstraint("rating IN ('up', 'down')", name="votes_rating"),
)

# --- traces (app/adapters/traces.py) ----------------------------------------------------------------------
runs = Table(
    "runs",
    metadata,
    Column("trace_id", String(64), primary_key=True),
    Column("graph", Text, nullable=False),
    Column("session_id", Text),
    Column("user_id", Text),
    Column("action", Text),
    Column("intent", Text),
    Column("status", Text, nullable=False),
    Column("started_at", Float, nullable=False),
    Column("duration_ms", Float),
    Column("summary", Text, nullable=False),  # the redacted message (or source) in a line, for lists
    Column("path", Text, nullable=False, server_default="[]"),  # the node path, JSON, for lists
    Column("record", Text, nullable=False),  # rows written before `packed`: the whole redacted record ("" after)
    Column("packed", LargeBinary),  # the redacted record, slim and compressed (app/adapters/traces.py pack_record)
    Index("runs_started", "started_at"),
    Index("runs_session", "session_id", "started_at"),
    Index("runs_user", "user_id", "started_at"),
    Index("runs_action", "action", "started_at"),
)
run_feedback = Table(
    "run_feedback",
    metadata,
    Column("trace_id", String(64), primary_key=True),
    Column("rating", Text, nullable=False),
    Column("reason", Text),
    Column("at", Float, nullable=False),
)

# --- sessions (app/adapters/memory.py; the checkpoints themselves are the LangGraph saver's tables) -------
session_owners = Table(
    "session_owners",
    metadata,
    Column("thread_id", String(128), primary_key=True),
    Column("user_id", Text, nullable=False),
    Column("created_ts", Float, nullable=False),
)
# OpenAI-style clients resend the whole conversation each turn: its fingerprint → the session
conversation_aliases = Table(
    "conversation_aliases",
    metadata,
    Column("fingerprint", String(128), primary_key=True),
    Column("thread_id", String(128), nullable=False),
    Column("created_ts", Float, nullable=False),
    Index("aliases_by_age", "created_ts"),
    Index("aliases_by_thread", "thread_id"),
)
# when each session last had a turn: what idle expiry reads (LangGraph's tables carry no time)
session_activity = Table(
    "session_activity",
    metadata,
    Column("thread_id", String(128), primary_key=True),
    Column("last_ts", Float, nullable=False),
    Index("session_activity_by_time", "last_ts"),
)

# --- synced knowledge sources (app/adapters/source_store.py) ---------------------------------------------
sources = Table(
    "sources",
    metadata,
    Column("id", String(16), primary_key=True),  # content hash of (type, base_url, scope)
    Column("type", String(32), nullable=False),
    Column("name", Text, nullable=False),
    Column("base_url", Text, nullable=False),
    Column("scope", Text, nullable=False),  # JSON: space_keys, start_urls, kb ids … (per type)
    Column("credential_env", Text, nullable=False),  # JSON: role → environment variable NAME (never a value)
    Column("group_map", Text, nullable=False),  # JSON: source group → deskmate audience group
    Column("schedule", Text, nullable=False),  # "manual" or "every <n>m|h"
    Column("status", String(16), nullable=False),  # never | queued | syncing | ok | error
    Column("cursor", Text),
    Column("last_sync_at", String(32)),  # UTC ISO 8601
    Column("last_error", Text),
    Column("last_counts", Text, nullable=False),  # JSON: added, updated, unchanged, deleted, failed …
    Column("created_at", String(32), nullable=False),
)
source_documents = Table(
    "source_documents",
    metadata,
    Column("source_id", String(16), ForeignKey("sources.id", ondelete="CASCADE"), primary_key=True),
    Column("external_id", Text, primary_key=True),  # a page id, a file id, a URL
    Column("doc_id", String(32), nullable=False),
    Column("url", Text, nullable=False),
    Column("version", Text, nullable=False),
    Column("audience", Text, nullable=False),  # JSON list; [] = everyone
    Column("title", Text, nullable=False),
)

# --- the shared lexical index (app/adapters/lexical_postgres.py): BM25 postings of the active chunks ------
# Derived from the vector store (re-synced from it at start-up), so never copied by migrate-from-sqlite.
# `collection` is the Chroma collection the chunks belong to; `row_id` keys a chunk in the postings.
lexical_documents = Table(
    "lexical_documents",
    metadata,
    Column("collection", String(128), primary_key=True),
    Column("doc_id", Text, primary_key=True),
    Column("version", Text, nullable=False),  # the version held: written after the vector store's switch
)
lexical_chunks = Table(
    "lexical_chunks",
    metadata,
    Column("row_id", Integer, primary_key=True, autoincrement=True),
    Column("collection", String(128), nullable=False),
    Column("chunk_id", Text, nullable=False),
    Column("doc_id", Text, nullable=False),
    Column("version", Text, nullable=False),
    Column("chunk_index", Integer, nullable=False),
    Column("length", Integer, nullable=False),  # tokens, for BM25's length normalisation
    Column("restricted", Boolean, nullable=False),  # the document has an audience (access_where)
    Column("record", Text, nullable=False),  # the chunk's fields as JSON, what a hit carries
    UniqueConstraint("collection", "chunk_id", name="lexical_chunks_id"),
    Index("lexical_chunks_by_doc", "collection", "doc_id", "chunk_index"),
)
lexical_values = Table(  # context and audience list values, for `$contains` filters
    "lexical_values",
    metadata,
    Column("row_id", Integer, ForeignKey("lexical_chunks.row_id", ondelete="CASCADE"), primary_key=True),
    Column("field", String(32), primary_key=True),
    Column("value", String(128), primary_key=True),
    Index("lexical_values_by_value", "field", "value"),
)
lexical_postings = Table(
    "lexical_postings",
    metadata,
    Column("collection", String(128), primary_key=True),
    Column("term", Text, primary_key=True),
    Column("row_id", Integer, ForeignKey("lexical_chunks.row_id", ondelete="CASCADE"), primary_key=True),
    Column("tf", Integer, nullable=False),
    # the chunk's length and audience flag again: a query then scores from the postings alone
    Column("length", Integer, nullable=False),
    Column("restricted", Boolean, nullable=False),
    Index("lexical_postings_by_row", "row_id"),
)
lexical_terms = Table(  # document frequency per term, kept in step with the postings in the same transaction
    "lexical_terms",
    metadata,
    Column("collection", String(128), primary_key=True),
    Column("term", Text, primary_key=True),
    Column("df", Integer, nullable=False),
)
lexical_stats = Table(  # chunk count and total length per collection (N and avgdl), kept in step likewise
    "lexical_stats",
    metadata,
    Column("collection", String(128), primary_key=True),
    Column("chunks", Integer, nullable=False),
    Column("total_length", BigInteger, nullable=False),
)

# --- ingestion jobs (app/storage/jobs.py): uploads, source syncs and the bundled KB sync, run by workers ---
JOB_KINDS = ("index_upload", "sync_source", "sync_kb")
JOB_STATES = ("queued", "running", "done", "failed", "cancelled")
jobs = Table(
    "jobs",
    metadata,
    Column("id", String(32), primary_key=True),
    Column("kind", String(16), nullable=False),
    Column("state", String(16), nullable=False),
    Column("payload", Text, nullable=False),  # JSON: what to run (an upload references document_originals)
    Column("progress_done", Integer, nullable=False, server_default="0"),  # chunks embedded …
    Column("progress_total", Integer, nullable=False, server_default="0"),  # … of this many
    Column("error", Text),  # why it failed, in words a person can act on
    Column("error_kind", String(32)),  # the rejection kind (too_large, unparseable …) or "unavailable"
    Column("result", Text),  # JSON: the document indexed, the sync's counts
    Column("attempts", Integer, nullable=False, server_default="0"),
    Column("cancel_requested", Integer, nullable=False, server_default="0"),
    Column("worker", Text),  # who runs it (host:pid:thread)
    Column("lease_until", Float),  # epoch seconds; a running job past it lost its worker and is run again
    Column("heartbeat_at", Float),
    Column("created_at", Float, nullable=False),
    Column("started_at", Float),
    Column("finished_at", Float),
    CheckConstraint("state IN ('queued', 'running', 'done', 'failed', 'cancelled')", name="jobs_state"),
    CheckConstraint("kind IN ('index_upload', 'sync_source', 'sync_kb')", name="jobs_kind"),
    Index("jobs_by_state", "state", "created_at"),
    Index("jobs_by_age", "created_at"),
)
# the uploaded files themselves, so any replica serves the download and any worker indexes them; a version is
# stored before its job runs and the older versions go once the new one is the document's active version
document_originals = Table(
    "document_originals",
    metadata,
    Column("doc_id", String(16), primary_key=True),
    Column("version", String(16), primary_key=True),  # the content version the index will record
    Column("filename", Text, nullable=False),
    Column("data", LargeBinary, nullable=False),
    Column("size_bytes", Integer, nullable=False),
    Column("created_at", Float, nullable=False),
)

# --- insights (app/insights): one compact outcome record per chat turn, kept for its own retention ---------
# Written beside the turn's trace (app/chat_service.py); what GET /admin/insights and `deskmate report` count.
# No message text except `question`: the redacted question of an unanswered (or down-voted) turn, for the
# knowledge-gap clusters, cleared after the trace retention. `day` and `hour` (UTC) are stored so the figures
# group on plain integer columns, the same SQL on both engines.
OUTCOMES = (
    "answered",  # a cited answer
    "walkthrough_step",  # a step of a walkthrough from an article
    "resolved",  # the user said it works (a walkthrough ended resolved)
    "abstained",  # searched, nothing good enough, no ticket offered
    "ticket_offered",
    "ticket_created",
    "handoff",  # asked for a person
    "out_of_scope",
    "clarified",  # asked the user a question back
    "conversation",  # greetings, thanks, ticket status, capabilities …
)
CHANNELS = ("web", "api", "cli", "slack", "teams")
turn_outcomes = Table(
    "turn_outcomes",
    metadata,
    Column("trace_id", String(64), primary_key=True),  # the turn's trace id (= the answer's message id)
    Column("ts", Float, nullable=False),  # epoch seconds
    Column("day", Integer, nullable=False),  # UTC days since 1970-01-01
    Column("hour", Integer, nullable=False),  # UTC hour 0..23
    Column("channel", String(16), nullable=False),
    Column("collection", String(128), nullable=False, server_default=""),  # "" = the configured default
    Column("session_id", String(128), nullable=False),  # the conversation
    Column("asker", String(32), nullable=False),  # a hash of the signed-in user, or of the conversation
    Column("action", String(32), nullable=False),
    Column("outcome", String(24), nullable=False),
    Column("doc_id", String(64)),  # the first cited article (or the walkthrough's)
    Column("doc_title", Text),
    Column("section", Text),
    Column("cited", Text, nullable=False, server_default="[]"),  # JSON [[doc_id, section], …] every citation
    Column("confidence", Float),
    Column("vote", String(8)),  # up | down, when the answer got a vote
    Column("ticket_id", String(16)),
    Column("ticket_priority", String(16)),
    Column("ticket_category", String(16)),  # incident | request | handoff
    Column("language", String(8), nullable=False, server_default=""),  # "" = English
    Column("latency_ms", Float),
    Column("gap", Integer, nullable=False, server_default="0"),  # 1: unanswered or down-voted (gap candidate)
    Column("question", Text),  # redacted, only when gap = 1, cleared after the trace retention
    CheckConstraint(f"outcome IN ({', '.join(repr(o) for o in OUTCOMES)})", name="turn_outcomes_outcome"),
    Index("turn_outcomes_by_day", "day", "channel", "hour", "outcome", "collection"),
    # covering indexes: every figure of a window reads one of these and never the rows themselves
    Index("turn_outcomes_by_conversation", "day", "session_id", "outcome", "ts", "vote", "collection"),
    Index(
        "turn_outcomes_by_outcome",
        "outcome",
        "day",
        "doc_id",
        "session_id",
        "ts",
        "ticket_category",
        "ticket_priority",
        "collection",
    ),
    Index("turn_outcomes_by_doc", "doc_id", "day", "outcome", "vote", "section", "collection"),
    Index("turn_outcomes_by_session", "session_id", "outcome", "ts"),
    # the questions still kept (the trace retention's last days): a partial index, as small as they are few
    Index(
        "turn_outcomes_questions",
        "day",
        "ts",
        sqlite_where=text("question IS NOT NULL"),
        postgresql_where=text("question IS NOT NULL"),
    ),
)

# the per-day rollups of the outcome rows (app/insights/rollup.py): what the figures read, kept up to date as
# each turn is written and each vote arrives, rebuilt in bulk from `turn_outcomes` for a range of days (the
# migration that adds them, `deskmate db vacuum`'s check, a bulk load) and pruned with it. Keys are never
# NULL: a missing article, section or ticket field is "" (the outcome rows never store "" for those).
insight_hours = Table(  # turns per day, hour and channel
    "insight_hours",
    metadata,
    Column("day", Integer, primary_key=True),
    Column("collection", String(128), primary_key=True),
    Column("channel", String(16), primary_key=True),
    Column("hour", Integer, primary_key=True),
    Column("turns", Integer, nullable=False),
)
insight_outcomes = Table(  # turns per day, channel and outcome (and a created ticket's category and priority)
    "insight_outcomes",
    metadata,
    Column("day", Integer, primary_key=True),
    Column("collection", String(128), primary_key=True),
    Column("channel", String(16), primary_key=True),
    Column("outcome", String(24), primary_key=True),
    Column("ticket_category", String(16), primary_key=True),
    Column("ticket_priority", String(16), primary_key=True),
    Column("turns", Integer, nullable=False),
)
insight_articles = Table(  # per day and article: answers citing it (walkthrough steps included) and votes
    "insight_articles",
    metadata,
    Column("day", Integer, primary_key=True),
    Column("collection", String(128), primary_key=True),
    Column("doc_id", String(64), primary_key=True),
    Column("citations", Integer, nullable=False),
    Column("helpful", Integer, nullable=False),
    Column("not_helpful", Integer, nullable=False),
)
insight_sections = Table(  # per day, article and section: the votes (only sections that got one)
    "insight_sections",
    metadata,
    Column("day", Integer, primary_key=True),
    Column("collection", String(128), primary_key=True),
    Column("doc_id", String(64), primary_key=True),
    Column("section", Text, primary_key=True),
    Column("helpful", Integer, nullable=False),
    Column("not_helpful", Integer, nullable=False),
)
insight_conversations = Table(  # per day and conversation (turns other than small talk): how it went that day
    "insight_conversations",
    metadata,
    Column("day", Integer, primary_key=True),
    Column("collection", String(128), primary_key=True),
    Column("session_id", String(128), primary_key=True),
    Column("tickets", Integer, nullable=False),  # tickets created
    Column("confirmations", Integer, nullable=False),  # turns resolved ("it works") or voted Helpful
    Column("answered_at", Float),  # the last answered turn's time
    Column("unanswered_at", Float),  # the last unanswered turn's time
    Column("last_ticket", Float),  # the last ticket's time
    # 1: the conversation's only row (one day, one collection), counted in `insight_deflection`; 0: it spans
    # days or collections, and a window merges its rows
    Column("alone", Integer, nullable=False, server_default="1"),
    Index("insight_conversations_by_session", "session_id"),
    Index(  # the conversations that span days or collections, as the deflection of a window merges them
        "insight_conversations_spanning",
        "day",
        "session_id",
        "collection",
        "tickets",
        "confirmations",
        "answered_at",
        "unanswered_at",
        sqlite_where=text("alone = 0"),
        postgresql_where=text("alone = 0"),
    ),
    Index(  # the conversations that created a ticket: for the walkthroughs that ended in one
        "insight_conversations_tickets",
        "day",
        "session_id",
        "last_ticket",
        sqlite_where=text("last_ticket IS NOT NULL"),
        postgresql_where=text("last_ticket IS NOT NULL"),
    ),
)
insight_deflection = Table(  # per day: how the conversations that lived that day only (`alone`) ended
    "insight_deflection",
    metadata,
    Column("day", Integer, primary_key=True),
    Column("collection", String(128), primary_key=True),
    Column("conversations", Integer, nullable=False),
    Column("deflected", Integer, nullable=False),  # ended answered or resolved, no ticket
    Column("confirmed", Integer, nullable=False),  # resolved by the user, no ticket
    Column("ticketed", Integer, nullable=False),
)
insight_walkthroughs = Table(  # per day, conversation and article: its first walkthrough step that day
    "insight_walkthroughs",
    metadata,
    Column("day", Integer, primary_key=True),
    Column("collection", String(128), primary_key=True),
    Column("session_id", String(128), primary_key=True),
    Column("doc_id", String(64), primary_key=True),
    Column("first_step", Float, nullable=False),
    Column("alone", Integer, nullable=False, server_default="1"),  # as the conversation's `insight_conversations`
    Index("insight_walkthroughs_by_session", "session_id"),
    Index(  # the walkthroughs of the conversations that span days or collections, merged per window
        "insight_walkthroughs_spanning",
        "day",
        "doc_id",
        "session_id",
        "collection",
        "first_step",
        sqlite_where=text("alone = 0"),
        postgresql_where=text("alone = 0"),
    ),
)
insight_walkthrough_days = Table(  # per day and article: the walkthroughs of conversations of that day only
    "insight_walkthrough_days",
    metadata,
    Column("day", Integer, primary_key=True),
    Column("collection", String(128), primary_key=True),
    Column("doc_id", String(64), primary_key=True),
    Column("walkthroughs", Integer, nullable=False),  # conversations that walked through the article
    Column("ended_in_ticket", Integer, nullable=False),  # … and created a ticket after its first step
)
INSIGHT_ROLLUPS = (
    insight_hours,
    insight_outcomes,
    insight_articles,
    insight_sections,
    insight_conversations,
    insight_deflection,
    insight_walkthroughs,
    insight_walkthrough_days,
)

# --- chat platforms (app/channels): deliveries seen once, and the threads tickets were created from ---------
# a platform event or button press already handled (Slack retries a delivery it thinks was lost): its key once
channel_deliveries = Table(
    "channel_deliveries",
    metadata,
    Column("key", String(200), primary_key=True),  # platform:kind:id, e.g. slack:event:Ev123
    Column("at", Float, nullable=False),
    Index("channel_deliveries_by_age", "at"),
)
# a card a platform cannot hand back with a button press (Teams): what to redraw when one of its buttons is used
channel_cards = Table(
    "channel_cards",
    metadata,
    Column("key", String(200), primary_key=True),  # platform:conversation:activity id
    Column("card", Text, nullable=False),  # JSON: the card as posted
    Column("at", Float, nullable=False),
    Index("channel_cards_by_age", "at"),
)
# a ticket created from a platform thread: where to tell its requester when its status changes
channel_ticket_threads = Table(
    "channel_ticket_threads",
    metadata,
    Column("ticket_id", String(16), ForeignKey("tickets.id", ondelete="CASCADE"), primary_key=True),
    Column("platform", String(16), nullable=False),
    Column("thread", Text, nullable=False),  # JSON: what the platform needs to post in the thread
    Column("last_status", Text, nullable=False),  # the status the requester was last told (status/jira status)
    Column("open", Integer, nullable=False, server_default="1"),  # 0 once the requester was told it is closed
    Column("created_at", Float, nullable=False),
    Index("channel_ticket_threads_open", "open"),
)
