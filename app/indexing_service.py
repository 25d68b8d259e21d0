"""Indexing entry points for uploads, the CLI and the start-up sync of the bundled knowledge base."""

from __future__ import annotations

import copy
import logging
import threading
import uuid
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, cast

from app.adapters.parsers import SUPPORTED_EXTENSIONS
from app.adapters.tracing import run_config
from app.includes import IncludeResolver
from core.errors import DocumentRejected
from core.ports import VectorIndex
from core.records import ChunkRecord, DocumentInfo
from graphs.indexing import IndexingContext, IndexingInput, IndexingState
from nodes.indexing.steps import content_version, document_id, document_info, embed_chunks, is_unchanged

if TYPE_CHECKING:
    from app.resources import Resources
    from app.settings import Settings

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class PendingDocument:
    """One document of a batch (`IndexingService.index_many`): what `index_bytes` takes."""

    source: str
    data: bytes
    document_context: dict | None = None
    filename: str | None = None


@dataclass
class IndexResult:
    source: str
    status: str  # new | replaced | unchanged | failed | removed | included (a fragment other files include)
    document: DocumentInfo | None = None
    error: str | None = None


def supported_files(root: Path) -> list[Path]:
    if root.is_file():
        return [root]
    return sorted(
        p
        for p in root.rglob("*")
        if p.is_file()
        and p.suffix.lower() in SUPPORTED_EXTENSIONS
        and not any(part.startswith(".") for part in p.relative_to(root).parts)
    )


class IndexingService:
    def __init__(self, graph, context: IndexingContext, tracer) -> None:
        self._graph = graph
        self._context = context
        self._tracer = tracer
        self._lock = threading.Lock()  # one writer at a time keeps version switches simple to reason about

    @property
    def graph(self):
        """The compiled indexing graph (GET /graphs draws it)."""
        return self._graph

    @property
    def index(self) -> VectorIndex:
        return self._context.index

    def observed(self, progress: Callable[[int, int], None]) -> IndexingService:
        """The same indexer (same lock, same index) telling `progress` (chunks embedded, of total) after every
        embedding batch; `progress` may raise to stop a document before anything of it is written."""
        view = copy.copy(self)
        view._context = replace(self._context, progress=progress)
        return view

    def index_bytes(
        self,
        source: str,
        data: bytes,
        document_context: dict | None = None,
        *,
        includes: IncludeResolver | None = None,
        filename: str | None = None,
    ) -> IndexResult:
        """Index one document; raises DocumentRejected (index untouched) when it cannot be used.

        Its includes are resolved within `includes` (the batch it came with); alone, it has nothing to
        include, and its include lines are left out (with a warning in the log). `filename` names the type
        when `source` is a link to where the document lives (a synced page)."""
        resolver = includes or IncludeResolver.from_bytes({source: data})
        data = resolver.expand(source, data)
        trace_id = uuid.uuid4().hex
        config = run_config(tracer=self._tracer, trace_id=trace_id, run_name="indexing", tags=["indexing"])
        with self._lock:
            run = {"source": source, "data": data, "document_context": document_context or {}}
            if filename:
                run["filename"] = filename
            out = self._graph.invoke(run, config, context=self._context)
        return IndexResult(source=source, status=out["status"], document=out.get("document_info"))

    def index_many(self, documents: list[PendingDocument]) -> list[IndexResult]:
        """Index a batch of documents (a source sync's pages): each is read and chunked on its own, all their
        chunks are embedded together in full encoder batches, and the index switches every document to its
        new version in a few writes. Each document stays atomic (old or new, never a mix) and unchanged
        content is still skipped; a document that cannot be used comes back `failed` with the reason (the
        others are indexed). Bound the batch: its bytes and chunks are held in memory.

        The encoder runs on its own thread while the next documents are parsed (in the sandbox process), so
        the two heaviest steps overlap."""
        batch_size = self._context.embed_batch_size
        results: list[IndexResult] = []
        ready: list[tuple[int, IndexingState]] = []  # (position in results, the run's output)
        chunks: list[ChunkRecord] = []  # every ready document's chunks, in order
        encoded: list[Future] = []  # embeddings of chunks[0:submitted], one future per encoder batch
        submitted = 0
        with self._lock, ThreadPoolExecutor(max_workers=1, thread_name_prefix="encoder") as encoder:
            for pending in documents:
                try:
                    run, out = self._chunk_only(pending)
                except DocumentRejected as exc:
                    results.append(IndexResult(source=pending.source, status="failed", error=exc.reason))
                    continue
                results.append(
                    IndexResult(source=pending.source, status=out["status"], document=out.get("document_info"))
                )
                if out["status"] == "unchanged":
                    continue
                ready.append((len(results) - 1, cast(IndexingState, {**run, **out})))  # the state after chunking
                chunks.extend(out["chunks"])
                while len(chunks) - submitted >= batch_size:
                    encoded.append(
                        encoder.submit(embed_chunks, self._context, chunks[submitted : submitted + batch_size])
                    )
                    submitted += batch_size
            if submitted < len(chunks):
                encoded.append(encoder.submit(embed_chunks, self._context, chunks[submitted:]))
            embeddings = iter([vector for future in encoded for vector in future.result()])
            batch = []
            for position, state in ready:
                info = document_info(state)
                batch.append((info, state["chunks"], [next(embeddings) for _ in state["chunks"]]))
                results[position].document = info
            self.index.replace_documents(batch)
        return results

    def _chunk_only(self, pending: PendingDocument) -> tuple[IndexingInput, dict[str, Any]]:
        """Run the graph up to chunking (`embed_later`); raises DocumentRejected."""
        data = IncludeResolver.from_bytes({pending.source: pending.data}).expand(pending.source, pending.data)
        run: IndexingInput = {
            "source": pending.source,
            "data": data,
            "document_context": pending.document_context or {},
            "embed_later": True,
        }
        if pending.filename:
            run["filename"] = pending.filename
        config = run_config(tracer=self._tracer, trace_id=uuid.uuid4().hex, run_name="indexing", tags=["indexing"])
        return run, self._graph.invoke(run, config, context=self._context)

    @staticmethod
    def sources(paths: Iterable[Path], *, root: Path, prefix: str) -> dict[str, Path]:
        """Each file's source name ("kb/guides/vpn.md"): what citations show and includes are resolved by."""
        return {
            (f"{prefix}/{path.relative_to(root).as_posix()}" if path != root else f"{prefix}/{path.name}"): path
            for path in paths
        }

    def index_paths(
        self,
        paths: Iterable[Path],
        *,
        root: Path,
        prefix: str,
        progress: Callable[[IndexResult], None] | None = None,
        includes: IncludeResolver | None = None,
    ) -> list[IndexResult]:
        """Index files as one batch: includes resolve among them (or within `includes`), fragments are skipped."""
        sources = self.sources(paths, root=root, prefix=prefix)
        resolver = includes or IncludeResolver.from_paths(sources)
        # what is indexed now, in one read of the store: a file whose content is indexed already (every file of
        # the bundled KB at a start) is found unchanged here, without a store read and a graph run of its own
        indexed = {doc["doc_id"]: doc for doc in self.index.list_documents()}
        results = []
        for source, path in sources.items():
            if resolver.is_fragment(source):
                result = self.skip_fragment(source)
            else:
                data = path.read_bytes()
                existing = indexed.get(document_id(source))
                if existing is not None and is_unchanged(existing, content_version(resolver.expand(source, data)), {}):
                    result = IndexResult(source=source, status="unchanged", document=existing)
                else:
                    try:
                        result = self.index_bytes(source, data, includes=resolver)
                    except DocumentRejected as exc:
                        log.warning("skipped %s: %s", source, exc.reason)
                        result = IndexResult(source=source, status="failed", error=exc.reason)
            results.append(result)
            if progress:
                progress(result)
        return results

    def skip_fragment(self, source: str) -> IndexResult:
        """A fragment is indexed inside the files that include it; a copy indexed on its own before goes."""
        existing = self.index.get_document(document_id(source))
        if existing is not None:
            self.delete(existing["doc_id"])
        return IndexResult(source=source, status="included")

    def sync_directory(self, root: Path, prefix: str = "kb") -> list[IndexResult]:
        """Make the index hold exactly the folder's files under `prefix/`: add, replace, remove."""
        files = supported_files(root)
        results = self.index_paths(files, root=root, prefix=prefix)
        present = {r.source for r in results}
        for doc in self.index.list_documents():
            if doc["source"].startswith(f"{prefix}/") and doc["source"] not in present:
                self.delete(doc["doc_id"])
                results.append(IndexResult(source=doc["source"], status="removed", document=doc))
        return results

    def delete(self, doc_id: str) -> bool:
        with self._lock:
            return self.index.delete_document(doc_id)


def has_bundled_kb(settings: Settings) -> bool:
    kb_dir = settings.storage.kb_dir
    return bool(kb_dir and str(kb_dir).strip() and kb_dir.is_dir())


def sync_bundled_kb(resources: Resources, indexer: IndexingService | None = None) -> dict[str, int]:
    """Make the main collection hold exactly the bundled KB folder's files; the count of each outcome."""
    kb_dir = resources.settings.storage.kb_dir
    if kb_dir is None or not has_bundled_kb(resources.settings):
        return {}
    results = (indexer or resources.indexer).sync_directory(kb_dir, prefix="kb")
    counts: dict[str, int] = {}
    for result in results:
        counts[result.status] = counts.get(result.status, 0) + 1
    log.info("knowledge base %s: %s", kb_dir, ", ".join(f"{n} {s}" for s, n in sorted(counts.items())))
    return counts
