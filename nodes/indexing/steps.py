"""The five indexing nodes. Each reads what it needs and returns only its own keys."""

from __future__ import annotations

import hashlib
import logging
from concurrent.futures import Future, ThreadPoolExecutor, wait
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, cast

from langgraph.runtime import Runtime

from core.document_screen import unsafe_instructions
from core.errors import DocumentRejected
from core.filters import AUDIENCE_FIELD, CHUNK_LIST_FIELDS, RESTRICTED_FIELD
from core.ports import StagingIndex
from core.records import ChunkRecord, DocumentInfo
from nodes.indexing.chunking import chunk_document

if TYPE_CHECKING:
    from graphs.indexing import IndexingContext, IndexingState

log = logging.getLogger(__name__)


def document_id(source: str) -> str:
    """A document is its source name: uploading the same name again replaces it."""
    return hashlib.sha256(source.encode("utf-8")).hexdigest()[:16]


# Bumped when parsing or chunking changes what the same bytes become (markup cleaning, section roles), so that
# unchanged files are indexed again once after an upgrade instead of keeping chunks of the older format.
INDEX_FORMAT = b"deskmate-index-3\x00"


def content_version(data: bytes) -> str:
    """The version of a document: a hash of its bytes (and of the index format they are read with)."""
    return hashlib.sha256(INDEX_FORMAT + data).hexdigest()[:16]


def load(state: IndexingState, runtime: Runtime[IndexingContext]) -> dict:
    """Identify the document and its version; unchanged content is skipped (content-hash IDs)."""
    doc_id, version = document_id(state["source"]), content_version(state["data"])
    existing = runtime.context.index.get_document(doc_id)
    if existing and is_unchanged(existing, version, state.get("document_context", {})):
        return {"doc_id": doc_id, "version": version, "status": "unchanged", "document_info": existing}
    return {"doc_id": doc_id, "version": version, "status": "replaced" if existing else "new"}


def is_unchanged(existing: DocumentInfo, version: str, document_context: dict) -> bool:
    """The indexed document `existing` already is this content (`version`) with this document context."""
    return existing["version"] == version and _context_of(existing) == document_context


def _context_of(info: DocumentInfo) -> dict:
    """The document context stored with an indexed document ({} when it has none)."""
    return {k: value for k, value in info.items() if k in (*CHUNK_LIST_FIELDS, "description") and value}


def parse(state: IndexingState, runtime: Runtime[IndexingContext]) -> dict:
    document = runtime.context.parser.parse(state.get("filename") or state["source"], state["data"])
    if not document.blocks or document.text_length() == 0:
        raise DocumentRejected(
            f"No text could be extracted from {state['source'].rsplit('/', 1)[-1]} "
            "(a scanned PDF or an empty file?). Upload a file with selectable text.",
            kind="empty",
        )
    return {"document": document}


def chunk(state: IndexingState, runtime: Runtime[IndexingContext]) -> dict:
    ctx = runtime.context
    chunks = chunk_document(
        state["document"],
        doc_id=state["doc_id"],
        version=state["version"],
        source=state["source"],
        max_tokens=ctx.chunk_max_tokens,
        count=ctx.embedder.count_tokens,
    )
    if not chunks:
        raise DocumentRejected(f"{state['source'].rsplit('/', 1)[-1]} has no indexable text.", kind="empty")
    context = state.get("document_context") or {}
    for chunk_record in chunks:  # every chunk carries its document's context and audience, so filters can match it
        # the list fields of ChunkRecord, named by a tuple mypy cannot read as keys
        cast(dict[str, Any], chunk_record).update({k: list(context[k]) for k in CHUNK_LIST_FIELDS if context.get(k)})
        chunk_record[RESTRICTED_FIELD] = bool(context.get(AUDIENCE_FIELD))
    return {"chunks": chunks}


def embed_chunks(ctx: IndexingContext, chunks: list[ChunkRecord]) -> list[list[float]]:
    """The chunks' embeddings, in encoder batches of `embed_batch_size` (chunks of one or of many documents)."""
    texts = [c["embed_text"] for c in chunks]
    embeddings: list[list[float]] = []
    if ctx.progress is not None:
        ctx.progress(0, len(texts))
    for start in range(0, len(texts), ctx.embed_batch_size):
        embeddings.extend(ctx.embedder.embed_documents(texts[start : start + ctx.embed_batch_size]))
        if ctx.progress is not None:
            ctx.progress(len(embeddings), len(texts))
    return embeddings


# a document with at least this many chunks is written while it is embedded (one writer thread beside the
# encoder), in writes of STAGE_CHUNKS; a smaller one is written whole by the store step
STAGE_MIN_CHUNKS = 256
STAGE_CHUNKS = 256


def embed(state: IndexingState, runtime: Runtime[IndexingContext]) -> dict:
    """Embed the chunks. A large document's embedded batches are also written to the index as they come, under
    its new version, which stays invisible until the store step switches to it; that write overlaps the
    encoder instead of following it. A run stopped meanwhile (a cancelled job) removes what it wrote."""
    ctx, chunks = runtime.context, state["chunks"]
    if not isinstance(ctx.index, StagingIndex) or len(chunks) < STAGE_MIN_CHUNKS:
        return {"embeddings": embed_chunks(ctx, chunks)}
    active = ctx.index.get_document(state["doc_id"])
    if active is not None and active["version"] == state["version"]:  # same bytes, new context: written whole
        return {"embeddings": embed_chunks(ctx, chunks)}
    return {"embeddings": _embed_and_stage(ctx, ctx.index, state["doc_id"], state["version"], chunks), "staged": True}


def _embed_and_stage(
    ctx: IndexingContext, index: StagingIndex, doc_id: str, version: str, chunks: list[ChunkRecord]
) -> list[list[float]]:
    """`embed_chunks`, with every STAGE_CHUNKS embedded handed to a writer thread (`index.stage_chunks`)."""
    texts = [c["embed_text"] for c in chunks]
    embeddings: list[list[float]] = []
    writes: list[Future] = []
    written = 0
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="index-writer") as writer:
        try:
            if ctx.progress is not None:
                ctx.progress(0, len(texts))
            for start in range(0, len(texts), ctx.embed_batch_size):
                embeddings.extend(ctx.embedder.embed_documents(texts[start : start + ctx.embed_batch_size]))
                for future in writes:
                    if future.done():
                        future.result()  # a failed write stops the run now, not after the last batch
                if len(embeddings) - written >= STAGE_CHUNKS or len(embeddings) == len(texts):
                    writes.append(
                        writer.submit(index.stage_chunks, chunks[written : len(embeddings)], embeddings[written:])
                    )
                    written = len(embeddings)
                if ctx.progress is not None:
                    ctx.progress(len(embeddings), len(texts))
            for future in writes:
                future.result()
        except BaseException:
            for future in writes:
                future.cancel()
            wait(writes)
            try:
                index.discard_staged(doc_id, version)
            except Exception:  # noqa: BLE001 — left to the start-up sweep; the run's own error is what counts
                log.warning("could not remove the staged chunks of %s version %s", doc_id, version, exc_info=True)
            raise
    return embeddings


def document_info(state: IndexingState) -> DocumentInfo:
    """What the manifest records of a chunked document (listed by GET /documents)."""
    document = state["document"]
    info = DocumentInfo(
        doc_id=state["doc_id"],
        version=state["version"],
        title=document.title,
        source=state["source"],
        content_type=document.content_type,
        chunk_count=len(state["chunks"]),
        size_bytes=len(state["data"]),
        indexed_at=datetime.now(UTC).isoformat(timespec="seconds"),
    )
    info.update(cast(DocumentInfo, state.get("document_context") or {}))  # listed by GET /documents
    flagged = flagged_sections(state["chunks"])
    if flagged:
        log.warning(
            "%s: sections that ask readers for credentials, payments or to turn off security: %s",
            state["source"],
            "; ".join(flagged),
        )
        info["flagged_sections"] = flagged
    return info


def flagged_sections(chunks: list[ChunkRecord]) -> list[str]:
    """The sections (by heading path; "(introduction)" for the lead) whose text breaks a document-screen rule."""
    flagged: dict[str, None] = {}
    for chunk_record in chunks:
        if unsafe_instructions(chunk_record["text"]):
            flagged[chunk_record["section"] or "(introduction)"] = None
    return list(flagged)[:50]


def store(state: IndexingState, runtime: Runtime[IndexingContext]) -> dict:
    """Switch the document to its new version in one step: readers never see a mix."""
    info = document_info(state)
    index = runtime.context.index
    if state.get("staged") and isinstance(index, StagingIndex):  # its chunks were written while embedded: switch
        try:
            index.switch_document(info, state["chunks"], state["embeddings"])
        except Exception:
            try:
                index.discard_staged(state["doc_id"], state["version"])
            except Exception:  # noqa: BLE001 — left to the start-up sweep; the switch's error is what counts
                log.warning("could not remove the staged chunks of %s", state["doc_id"], exc_info=True)
            raise
    else:
        runtime.context.index.replace_document(info, state["chunks"], state["embeddings"])
    return {"document_info": info}
