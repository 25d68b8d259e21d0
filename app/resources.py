"""Builds every adapter once (models, stores, graphs) for the API lifespan and the CLI."""

from __future__ import annotations

import logging
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from app.adapters.encoders import build_embedder
from app.adapters.feedback import FeedbackStore
from app.adapters.integrations import HttpIntegration
from app.adapters.language import Py3LangidDetector
from app.adapters.lexical_index import HybridIndex
from app.adapters.lexical_postgres import PostgresBM25Index
from app.adapters.llm import RedactingChatModel, build_chat_model, build_named_chat_model
from app.adapters.memory import SessionStore
from app.adapters.parse_sandbox import SandboxedParser
from app.adapters.parsers import FileParser
from app.adapters.redactor import redactors_from_settings, start_background_loads
from app.adapters.source_store import SourceStore
from app.adapters.status_page import build_status_checker
from app.adapters.tickets import TicketService, build_ticket_desk
from app.adapters.traces import RecordingTracer, TraceStore
from app.adapters.tracing import build_tracer
from app.adapters.vector_index import ChromaVectorIndex, make_client
from app.chat_service import ChatService
from app.config_file import load_config
from app.data_dir_lock import DataDirLock, hold_data_dir
from app.disk_guard import DiskGuard
from app.encoder_switch import match_encoder
from app.indexing_service import IndexingService
from app.insights.outcomes import OutcomeStore
from app.insights.writer import OutcomeWriter
from app.job_worker import end_source_sync
from app.logging_setup import install_log_redaction
from app.settings import Settings
from app.storage import Database, database_url_for
from app.storage.database import SessionBusy
from app.storage.jobs import JobQueue
from app.storage.originals import OriginalStore
from core.errors import IndexUnavailable
from core.policy_config import DEFAULT_LLM, AnswerPolicy, default_policy
from core.ports import ChatModel, DocumentParser, Embedder, Redactor, Reranker, StatusChecker
from graphs.indexing import IndexingContext, build_indexing_graph
from graphs.support import RetrievalConfig, SupportContext, build_support_graph
from nodes.support.actions import BUILTIN_ACTIONS
from nodes.support.calibration import CollectionCalibrator
from nodes.support.catalogue import ActionCatalogue, integration_action
from nodes.support.confidence import default_model

log = logging.getLogger(__name__)


@dataclass
class Resources:
    settings: Settings
    embedder: Embedder
    index: HybridIndex  # implements VectorIndex and LexicalIndex
    redactor: Redactor
    llm: ChatModel | None
    sessions: SessionStore
    tracer: RecordingTracer  # Langfuse's (or none) and the local trace store's
    chat: ChatService
    indexer: IndexingService  # the main collection's (uploads without `collection`, the bundled KB)
    status: StatusChecker  # the company status page, cached; never raises
    tickets: TicketService  # implements core.ports.TicketDesk
    sources: SourceStore  # synced knowledge sources (POST /sources)
    jobs: JobQueue  # ingestion jobs (uploads, source syncs, the KB sync) on the relational store
    originals: OriginalStore  # uploaded files, readable by every replica and worker
    database: Database  # the relational store every store writes to (app/storage)
    parser: DocumentParser | None = None  # the sandboxed parser: uploads, the CLI and the KB sync all use it
    feedback: FeedbackStore | None = None  # votes on answers (POST /feedback); adjusts retrieval when enabled
    retrieval_context: SupportContext | None = None  # what /search runs the retrieval pipeline with
    # one redactor per destination (memory, llm, ticket, trace, log, documents); `redactor` is memory's
    redactors: dict[str, Redactor] = field(default_factory=dict)
    traces: TraceStore | None = None  # the local trace store (GET /traces); None when DESKMATE_LOCAL_TRACES=false
    policy: AnswerPolicy | None = None  # response rules, collections, named LLMs (DESKMATE_CONFIG or defaults)
    indexers: dict[str, IndexingService] = field(default_factory=dict)  # collection name → its indexer
    disk: DiskGuard | None = None  # free space of the data directory's disk (None: DESKMATE_MIN_FREE_MB=0)
    data_lock: DataDirLock | None = None  # this process's hold on an embedded data directory
    outcomes: OutcomeStore | None = None  # the outcome record of every chat turn (GET /admin/insights)
    outcome_writer: OutcomeWriter | None = None  # writes those records off the reply path (one thread)

    def indexer_for(self, collection: str | None) -> IndexingService | None:
        """The indexer of a named collection (None: the main one); None when there is no such collection."""
        if not collection:
            return self.indexer
        return self.indexers.get(collection)

    def redactor_for(self, destination: str) -> Redactor:
        """The redactor whose policy fits `destination`: ticket and feedback text, for instance."""
        if destination not in self.redactors:
            raise ValueError(f"unknown redaction destination {destination!r}; known: {', '.join(self.redactors)}")
        return self.redactors[destination]

    def start_background_loads(self) -> None:
        """Start what `build_resources(..., defer_background_loads=True)` left for later: the names model's load
        (until then, and until it is loaded, a text that needs it waits for it: none is passed on unchecked) and
        the parse sandbox's workers (the first parse waits for them)."""
        start_background_loads(self.redactors)
        if self.parser is not None and hasattr(self.parser, "start"):
            self.parser.start()

    def close(self) -> None:
        try:
            if self.outcome_writer is not None:  # the turns answered last, before the database closes
                self.outcome_writer.close()
            self.tracer.shutdown()
            self.sessions.close()
            self.tickets.shutdown()
            if self.parser is not None and hasattr(self.parser, "close"):
                self.parser.close()  # stops the parse worker processes
            if self.feedback is not None:
                self.feedback.close()
            if self.sources is not None:
                self.sources.close()
            if self.database is not None:
                self.database.close()
        finally:
            if self.data_lock is not None:
                self.data_lock.release()
                self.data_lock = None


def answer_confidence(settings: Settings) -> dict:
    """The SupportContext fields for how deskmate decides it has an answer (DESKMATE_ANSWER_CONFIDENCE)."""
    return {
        "confidence_model": default_model() if settings.retrieval.answer_confidence == "calibrated" else None,
        "answer_threshold": settings.retrieval.answer_min_confidence,
        # the model's threshold moved by where this knowledge base's own unanswered probes score
        "calibrator": CollectionCalibrator() if settings.retrieval.answer_confidence == "calibrated" else None,
    }


def retrieval_config(settings: Settings) -> RetrievalConfig:
    """The retrieval pipeline's knobs from the settings (the benchmark builds the same)."""
    return RetrievalConfig(
        lexical=settings.retrieval.lexical_enabled,
        fusion=settings.retrieval.fusion,
        dense_weight=settings.retrieval.dense_weight,
        rrf_k=settings.retrieval.rrf_k,
        aggregate_sections=settings.retrieval.section_aggregation,
        max_chunks_per_section=settings.retrieval.max_chunks_per_section,
        neighbour_radius=settings.retrieval.neighbour_radius,
        rerank_top_n=settings.retrieval.rerank_top_n,
        feedback=settings.feedback.feedback_adjustment,
        secondary_boost=settings.retrieval.filter_secondary_boost,
    )


def index_write_guard(database: Database, collection: str, settings: Settings):
    """The cross-process lock around a collection's writes and its start-up sweep (a no-op beyond this process
    on SQLite, where the data-dir lock already makes this process the only writer)."""
    wait_s = max(settings.storage.vector_write_timeout_s or 0.0, 120.0)

    @contextmanager
    def guard():
        try:
            with database.named_lock(f"deskmate:index-write:{collection}", wait_s=wait_s):
                yield
        except SessionBusy:
            raise IndexUnavailable(
                f"another process kept writing to the collection {collection!r} for more than {wait_s:g} s"
            ) from None

    return guard


def build_reranker(settings: Settings) -> Reranker | None:
    if not settings.retrieval.reranker_model:
        return None
    from app.adapters.reranker import CrossEncoderReranker

    return CrossEncoderReranker(settings.retrieval.reranker_model)


def load_answer_policy(settings: Settings) -> AnswerPolicy:
    """DESKMATE_CONFIG's policy, validated (ConfigError lists every problem), or the built-in defaults."""
    builtin = default_policy(
        chroma_collection=settings.storage.chroma_collection, min_score=settings.retrieval.min_score
    )
    if settings.conversation.config_file is None:
        return builtin
    return load_config(settings.conversation.config_file, default_collection=builtin.collections[0])


def named_llms(policy: AnswerPolicy, settings: Settings) -> dict[str, ChatModel | None]:
    """Every LLM the policy names, and every (LLM, model) pair its rules ask for: "name" / "name:model"."""
    specs = {spec.name: spec for spec in policy.llms}
    models: dict[str, ChatModel | None] = {name: build_named_chat_model(spec) for name, spec in specs.items()}
    for rule in policy.responses:
        if rule.model and f"{rule.llm}:{rule.model}" not in models:
            if rule.llm == DEFAULT_LLM:
                models[f"{rule.llm}:{rule.model}"] = build_chat_model(
                    settings.model_copy(update={"llm_model": rule.model, "groq_model": rule.model})
                )
            else:
                models[f"{rule.llm}:{rule.model}"] = build_named_chat_model(specs[rule.llm], rule.model)
    return models


def hybrid_index(settings: Settings, client, collection: str, database: Database) -> HybridIndex:
    """Chroma's collection with the configured lexical index beside it (DESKMATE_LEXICAL_BACKEND)."""
    vector = ChromaVectorIndex(
        client,
        collection,
        write_timeout_s=settings.storage.vector_write_timeout_s,
        write_guard=index_write_guard(database, collection, settings),
    )
    if settings.retrieval.lexical_backend == "postgres":
        return HybridIndex(vector, PostgresBM25Index(database, collection))
    return HybridIndex(vector)


def build_resources(settings: Settings, *, defer_background_loads: bool = False, **overrides) -> Resources:
    """Everything the service needs. Keyword overrides (embedder=, llm=, redactor=, parser=) let tests swap
    one adapter for a double. An embedded data directory is taken for this process first (DataDirInUse when
    another process has it), before any store opens it. `defer_background_loads`: the names model and the
    parse sandbox's workers, which otherwise start loading on threads of their own here, wait for
    `Resources.start_background_loads()` (the API's lifespan calls it once the rest is ready: they would slow
    the rest down), or for the first text or file that needs them."""
    lock = hold_data_dir(settings.storage.data_dir) if settings.storage.chroma_mode == "persistent" else None
    try:
        resources = _build_resources(settings, start_background_loads_now=not defer_background_loads, **overrides)
    except BaseException:
        if lock is not None:
            lock.release()
        raise
    resources.data_lock = lock
    resources.disk = (
        DiskGuard(settings.storage.data_dir, settings.storage.min_free_mb * 1024 * 1024)
        if settings.storage.min_free_mb
        else None
    )
    return resources


def _build_embedder(settings: Settings) -> Embedder:
    return build_embedder(
        settings.embeddings.embedding_backend,
        settings.embeddings.embedding_model_path,
        threads=settings.embeddings.torch_threads,
        batch_threads=settings.embeddings.index_torch_threads,
        cache_dir=settings.storage.data_dir / "models" / "onnx",
        onnx_variant=settings.embeddings.embedding_onnx_variant,
    )


def _build_resources(
    settings: Settings,
    *,
    embedder: Embedder | None = None,
    llm: ChatModel | None = None,
    redactor: Redactor | None = None,
    parser: DocumentParser | None = None,
    start_background_loads_now: bool = True,
) -> Resources:
    settings.storage.data_dir.mkdir(parents=True, exist_ok=True)
    policy = load_answer_policy(settings)  # first: a broken configuration file stops the start here
    # secrets always, personal data per destination (DESKMATE_REDACT_*); memory is what the redact node
    # applies, so it is the base every other destination starts from
    llm = llm if llm is not None else build_chat_model(settings)
    llms = named_llms(policy, settings)
    if policy.agent_llm != DEFAULT_LLM:
        llm = llms.get(policy.agent_llm)
    in_use = (
        ("memory", "ticket", "log")
        + (("llm",) if llm is not None or any(llms.values()) else ())
        + (("trace",) if settings.tracing.langfuse_enabled or settings.tracing.local_traces else ())
    )  # Langfuse, the local store
    if embedder is None and settings.embeddings.embedding_backend == "torch":
        # torch is imported before the redactors' imports hide it from spaCy (app/adapters/torch_free.py hides it
        # from every thread while they run): the two never overlap
        embedder = _build_embedder(settings)
    # the embedder, Chroma and the redactors do not depend on each other: each loads on a thread of its own
    # while this one opens the relational store and then brings the indexes in step (ONNX Runtime, Chroma's Rust
    # core, SQLite and file reads leave the GIL to the others); each is loaded before anything below uses it
    with ThreadPoolExecutor(max_workers=3, thread_name_prefix="start") as pool:
        embedding = pool.submit(_build_embedder, settings) if embedder is None else None
        chroma = pool.submit(
            make_client,
            settings.storage.chroma_mode,
            path=str(settings.storage.chroma_dir),
            host=settings.storage.chroma_host,
            port=settings.storage.chroma_port,
            ssl=settings.storage.chroma_ssl,
        )
        redaction = pool.submit(
            redactors_from_settings,
            settings,
            override=redactor,
            in_use=in_use,
            start_names_load=start_background_loads_now,
        )
        # the relational store (tickets, votes, traces, session owners, jobs): its migrations run here, at start-up
        database = Database.open(database_url_for(settings))
        try:
            if not database.is_postgres:
                _import_legacy_stores(settings, database)
                _import_legacy_sources(settings, database)
            client = chroma.result()
            # Chroma holds the vectors and the documents; BM25 beside it is brought in step with Chroma here
            # (start-up) and on every write (app/adapters/lexical_index.py); the first collection is the main one:
            # the graph retrieves from it; the others join at the answer step
            index = hybrid_index(settings, client, policy.collections[0].collection, database)
            index.reconcile()
            extra_indexes = {
                spec.name: hybrid_index(settings, client, spec.collection, database) for spec in policy.collections[1:]
            }
            for extra in extra_indexes.values():
                extra.reconcile()
            if embedding is not None:
                embedder = embedding.result()
            assert embedder is not None
            match_encoder(index.vector, embedder, policy.collections[0].collection)
            for spec in policy.collections[1:]:
                match_encoder(extra_indexes[spec.name].vector, embedder, spec.collection)
            redactors = redaction.result()
        except BaseException:  # (a store or model that failed to load: the database opened here closes again)
            database.close()
            raise
    feedback = FeedbackStore(
        database,
        embed=embedder.embed_query,
        min_votes=settings.feedback.feedback_min_votes,
        max_multiplier=settings.feedback.feedback_max_multiplier,
        similarity=settings.feedback.feedback_similarity,
        cache_s=settings.feedback.feedback_cache_s,
        vote_window_s=settings.feedback.feedback_vote_window_hours * 3600,
    )
    redactor = redactors["memory"]
    install_log_redaction(redactors["log"])
    if llm is not None:
        llm = RedactingChatModel(llm, redactors["llm"])  # every outgoing message, whoever builds the prompt
    llms = {
        name: RedactingChatModel(model, redactors["llm"]) if model is not None else None for name, model in llms.items()
    }
    sessions = SessionStore(
        database, checkpoints=settings.storage.sessions_db, lock_wait_s=settings.storage.session_lock_wait_s
    )
    remote_tracer = build_tracer(settings, redactors["trace"])
    # every graph run is also recorded locally; its writer thread redacts with the trace policy
    traces = (
        TraceStore(
            database,
            redactor=redactors["trace"],
            document_redactor=redactors["documents"],
            upstream_redactor=redactor,  # the redact node's (memory's): what the trace need not redact again
            # an answer's quoted sections, as evidence that its names are the documents' (never stored)
            document_texts=lambda doc_id: [c["text"] for c in index.document_chunks(doc_id, None)],
            retention_days=settings.retention.trace_retention_days,
            max_runs=settings.retention.trace_max_runs,
            max_bytes=int(settings.retention.trace_max_mb * 1024 * 1024),
        )
        if settings.tracing.local_traces
        else None
    )
    tracer = RecordingTracer(remote_tracer, traces)
    status = build_status_checker(settings, tracer)
    tickets = build_ticket_desk(settings, database)
    support_context = SupportContext(
        embedder=embedder,
        index=index,
        redactor=redactor,
        llm=llm,
        top_k=settings.retrieval.top_k,
        candidate_k=settings.retrieval.candidate_k,
        min_score=settings.retrieval.min_score,
        max_searches=settings.retrieval.max_searches,
        # the graph checks the status page only when there is one; "is there an outage?" is answered either way
        status=status if settings.integrations.status_page_url else None,
        tickets=tickets,
        history_turns=settings.conversation.history_turns,
        llm_max_tokens=settings.llm.llm_max_tokens,
        lexical=index,
        reranker=build_reranker(settings),
        retrieval=retrieval_config(settings),
        feedback=feedback if settings.feedback.feedback_adjustment else None,
        fact_path=settings.retrieval.fact_path,
        fact_min_confidence=settings.retrieval.fact_min_confidence,
        # the decision LLM is offered the actions that fit the message; their examples are embedded here, once
        # (configured integrations join them, and then the catalogue is needed even without an LLM)
        actions=ActionCatalogue.build(
            embedder,
            BUILTIN_ACTIONS
            + tuple(integration_action(spec.name, spec.description, spec.examples) for spec in policy.integrations),
            core=settings.conversation.core_action_names,
            top_k=settings.conversation.action_top_k,
        )
        if llm is not None or policy.integrations
        else None,
        integrations={spec.name: HttpIntegration(spec) for spec in policy.integrations},
        integration_min_score=settings.conversation.integration_min_score,
        language=Py3LangidDetector() if settings.conversation.language_detection else None,
        handoff_contact=settings.conversation.handoff_contact,
        policy=policy,
        main_collection=policy.collections[0].name,
        collections=extra_indexes,
        llms=llms,
        **answer_confidence(settings),
    )
    # parsing untrusted files happens in time- and memory-limited worker processes (app/adapters/parse_sandbox.py)
    parser = parser or SandboxedParser(
        FileParser,
        timeout_s=settings.ingestion.parse_timeout_s,
        memory_mb=settings.ingestion.parse_memory_mb,
        workers=settings.ingestion.parse_workers,
        start=start_background_loads_now,
    )
    indexing_context = IndexingContext(
        embedder=embedder, index=index, parser=parser, chunk_max_tokens=settings.ingestion.chunk_max_tokens
    )
    outcomes = OutcomeStore(
        database,
        redactor=redactors["trace"],
        retention_days=settings.retention.insights_retention_days,
        question_days=settings.retention.trace_retention_days,
    )
    outcome_writer = OutcomeWriter(outcomes)
    chat = ChatService(
        build_support_graph(sessions.checkpointer),
        support_context,
        sessions,
        tracer,
        feedback=feedback,
        outcomes=outcome_writer,
        max_message_chars=settings.conversation.max_message_chars,
    )
    indexing_graph = build_indexing_graph()
    indexer = IndexingService(indexing_graph, indexing_context, tracer)
    indexers = {policy.collections[0].name: indexer} | {
        name: IndexingService(
            indexing_graph,
            IndexingContext(
                embedder=embedder, index=extra, parser=parser, chunk_max_tokens=settings.ingestion.chunk_max_tokens
            ),
            tracer,
        )
        for name, extra in extra_indexes.items()
    }
    resources = Resources(
        settings=settings,
        embedder=embedder,
        index=index,
        redactor=redactor,
        llm=llm,
        sessions=sessions,
        tracer=tracer,
        chat=chat,
        indexer=indexer,
        status=status,
        tickets=tickets,
        parser=parser,
        feedback=feedback,
        retrieval_context=support_context,
        redactors=redactors,
        traces=traces,
        policy=policy,
        indexers=indexers,
        sources=_source_store(database),
        database=database,
        jobs=JobQueue(database, lease_s=settings.jobs.job_lease_s, max_attempts=settings.jobs.job_max_attempts),
        originals=OriginalStore(database),
        outcomes=outcomes,
        outcome_writer=outcome_writer,
    )
    # a sync whose worker died for the last time ends in the lease sweep, whichever process runs it
    resources.jobs.on_given_up = lambda job: end_source_sync(resources, job)
    # (the parse sandbox's workers start on a thread of their own, now or at start_background_loads: no chat
    # needs them, the first parse waits)
    return resources


LEGACY_IMPORTED = "legacy-stores-imported"


def _import_legacy_stores(settings: Settings, database: Database) -> None:
    """A data dir from before the single database kept tickets, votes, traces and session owners in one file
    per store: their rows are copied into it once, at the first start, so an upgrade loses nothing."""
    from app.storage.import_sqlite import import_legacy_files

    data_dir = Path(settings.storage.data_dir)
    marker = data_dir / LEGACY_IMPORTED
    if marker.exists():
        return
    report = import_legacy_files(data_dir, database)
    copied = {name: n for name, (_, n) in report.tables.items() if n}
    if copied:
        log.info(
            "copied the older per-store files into the database: %s",
            ", ".join(f"{name} {n}" for name, n in copied.items()),
        )
    data_dir.mkdir(parents=True, exist_ok=True)
    marker.write_text(
        "rows of tickets.sqlite, feedback.sqlite, traces.sqlite and the owner tables of "
        "sessions.sqlite were copied into deskmate.sqlite\n"
    )


def _source_store(database: Database) -> SourceStore:
    store = SourceStore(database)
    if not database.is_postgres and (interrupted := store.reset_interrupted()):
        log.warning("%d source sync(s) were interrupted when deskmate last stopped; marked failed", interrupted)
    return store


LEGACY_SOURCES_IMPORTED = "legacy-sources-imported"


def _import_legacy_sources(settings: Settings, database: Database) -> None:
    """Synced sources were kept in sources.sqlite before they joined the database: copied in once, at the
    first start after the upgrade (the file stays, unread, as it was)."""
    from app.storage.import_sqlite import SOURCE_TABLES, import_legacy_files

    data_dir = Path(settings.storage.data_dir)
    marker = data_dir / LEGACY_SOURCES_IMPORTED
    if marker.exists():
        return
    report = import_legacy_files(data_dir, database, tables=SOURCE_TABLES)
    copied = {name: n for name, (_, n) in report.tables.items() if n}
    if copied:
        log.info("copied sources.sqlite into the database: %s", ", ".join(f"{name} {n}" for name, n in copied.items()))
    data_dir.mkdir(parents=True, exist_ok=True)
    marker.write_text("the sources and source_documents rows of sources.sqlite were copied into deskmate.sqlite\n")


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def ready_summary(resources: Resources) -> str:
    """What is on and off, in the words of the docs: the line an operator reads when the service is up."""
    settings, policy = resources.settings, resources.policy
    llm = resources.llm.name if resources.llm is not None else "none (answers quote the documents)"
    chroma = (
        "embedded"
        if settings.storage.chroma_mode == "persistent"
        else f"server {settings.storage.chroma_host}:{settings.storage.chroma_port}"
    )
    parts = [
        f"{_plural(len(resources.index.list_documents()), 'document')} "
        f"({_plural(resources.index.count(), 'chunk')}) in chroma={chroma}",
        *([f"database={resources.database.describe()}"] if resources.database is not None else []),
        f"llm={llm}",
        "jobs=" + ("in-process worker" if settings.runs_inprocess_worker else "no worker here (run `deskmate worker`)"),
        f"langfuse={'on' if getattr(resources.tracer, 'enabled', False) else 'off'}",
        f"local traces={'on' if resources.traces is not None else 'off'}",
        f"status page={'on' if settings.integrations.status_page_url else 'off'}",
        f"jira={'on' if settings.integrations.jira_enabled else 'off (tickets stay local)'}",
        f"sign-in={'on' if settings.security.user_token_secret else 'off'}",
    ]
    if policy is not None:
        parts.append(
            f"answer policy={policy.source} ({_plural(len(policy.collections), 'collection')}, "
            f"{_plural(len(policy.responses), 'rule')})"
        )
    return "deskmate ready: " + ", ".join(parts)
