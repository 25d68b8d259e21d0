"""Builds every adapter once (models, stores, graphs) for the API lifespan and the CLI."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from app.adapters.embeddings import SentenceTransformerEmbedder
from app.adapters.llm import build_chat_model
from app.adapters.memory import SessionStore
from app.adapters.parsers import FileParser
from app.adapters.redactor import PatternRedactor
from app.adapters.tracing import build_tracer
from app.adapters.vector_index import ChromaVectorIndex, make_client
from app.chat_service import ChatService
from app.indexing_service import IndexingService
from app.settings import Settings
from graphs.context import IndexingContext, SupportContext
from graphs.indexing import build_indexing_graph
from graphs.ports import ChatModel, Embedder, Redactor
from graphs.support import build_support_graph

log = logging.getLogger(__name__)


@dataclass
class Resources:
    settings: Settings
    embedder: Embedder
    index: ChromaVectorIndex
    redactor: Redactor
    llm: ChatModel | None
    sessions: SessionStore
    tracer: object
    chat: ChatService
    indexer: IndexingService

    def close(self) -> None:
        self.tracer.shutdown()
        self.sessions.close()


def build_resources(settings: Settings, *, embedder: Embedder | None = None, llm: ChatModel | None = None,
                    redactor: Redactor | None = None) -> Resources:
    """Everything the service needs. Keyword overrides let tests swap one adapter for a double."""
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    embedder = embedder or SentenceTransformerEmbedder(settings.embedding_model_path)
    client = make_client(settings.chroma_mode, path=str(settings.chroma_dir), host=settings.chroma_host,
                         port=settings.chroma_port, ssl=settings.chroma_ssl)
    index = ChromaVectorIndex(client, settings.chroma_collection)
    index.reconcile()
    redactor = redactor or PatternRedactor()
    llm = llm if llm is not None else build_chat_model(settings)
    sessions = SessionStore(settings.sessions_db)
    tracer = build_tracer(settings, redactor)
    support_context = SupportContext(
        embedder=embedder, index=index, redactor=redactor, llm=llm, top_k=settings.top_k,
        candidate_k=settings.candidate_k, min_score=settings.min_score, max_searches=settings.max_searches,
        history_turns=settings.history_turns, llm_max_tokens=settings.llm_max_tokens,
    )
    indexing_context = IndexingContext(embedder=embedder, index=index, parser=FileParser(),
                                       chunk_max_tokens=settings.chunk_max_tokens)
    chat = ChatService(build_support_graph(sessions.checkpointer), support_context, sessions, tracer)
    indexer = IndexingService(build_indexing_graph(), indexing_context, tracer)
    log.info("deskmate ready: llm=%s, chroma=%s, tracing=%s", llm.name if llm else "none (extractive answers)",
             settings.chroma_mode, "langfuse" if tracer.enabled else "off")
    return Resources(settings=settings, embedder=embedder, index=index, redactor=redactor, llm=llm,
                     sessions=sessions, tracer=tracer, chat=chat, indexer=indexer)


def sync_bundled_kb(resources: Resources) -> None:
    kb_dir = resources.settings.kb_dir
    if not kb_dir or not str(kb_dir).strip() or not kb_dir.is_dir():
        return
    results = resources.indexer.sync_directory(kb_dir, prefix="kb")
    counts: dict[str, int] = {}
    for result in results:
        counts[result.status] = counts.get(result.status, 0) + 1
    log.info("knowledge base %s: %s", kb_dir, ", ".join(f"{n} {s}" for s, n in sorted(counts.items())))
