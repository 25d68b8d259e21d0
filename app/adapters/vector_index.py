"""ChromaDB vector index (embedded PersistentClient or a Chroma server), with atomic document versions.

Chroma has no transactions, so a document's chunks are written under a new version first and
a one-record manifest (collection `<name>_documents`) is then switched to that version. Queries
only return chunks of a document's active version, so readers see the old or the new text,
never both and never neither. Leftovers of a crash are swept by `reconcile()` at start-up.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections import OrderedDict
from typing import Any, Callable, ContextManager, Iterable, Iterator, Mapping, Sequence, cast

import httpx  # what chromadb's HttpClient speaks: its transport errors mean the server is unreachable

from app.adapters.write_deadline import WriteDeadline, WriteTimedOut
from core.errors import IndexUnavailable
from core.filters import AUDIENCE_FIELD, CHUNK_LIST_FIELDS, RESTRICTED_FIELD, matches_where, split_access_clause
from core.records import ChunkRecord, DocumentInfo, RetrievedChunk

log = logging.getLogger(__name__)
_MANIFEST_VECTOR = [1.0]  # Chroma insists on an embedding; the manifest is never searched
_CHUNK_META = ("doc_id", "version", "title", "source", "section", "os", "chunk_index", "content_hash")
_OPTIONAL_META = ("role", "reader")  # absent from chunks indexed by older versions
MANIFEST_TTL_S = 2.0  # other replicas' writes become visible within this time
OVERFETCH = 2
STORED_VECTORS = 2048  # chunk vectors kept for `similarities` (StoredVectors): ~3 MB for MiniLM's 384 floats
_PAGE = 1000
_SWEEP_CLAUSES = 100  # documents whose older versions one delete sweeps


def _optional_meta(chunk: ChunkRecord) -> dict[str, Any]:
    fields: Mapping[str, Any] = chunk  # read by the key names in _OPTIONAL_META, not literal keys
    return {k: fields[k] for k in _OPTIONAL_META if fields.get(k)}


def chunk_metadata(chunk: ChunkRecord) -> dict[str, Any]:
    """Chroma metadata of a chunk: the fixed fields plus the document context lists it carries
    (Chroma stores string lists and filters them with `$contains`). An empty list is written as None:
    Chroma's upsert merges metadata, and None is how a field the same chunk had before is removed."""
    fields: Mapping[str, Any] = chunk  # read by the key names in _CHUNK_META and CHUNK_LIST_FIELDS
    meta = {k: fields[k] for k in _CHUNK_META} | _optional_meta(chunk)
    meta.update({f: list(fields[f]) if fields.get(f) else None for f in CHUNK_LIST_FIELDS})
    meta[RESTRICTED_FIELD] = bool(chunk.get(AUDIENCE_FIELD))  # filtered on by access_where
    return meta


ENCODER_KEY = "encoder"
LEGACY_ENCODER = "torch"  # what wrote every collection before the encoder was recorded


def embedded_text(meta: Mapping[str, Any], text: str) -> str:
    """What indexing embedded for a stored chunk: its heading prefix (title > section path) and its body
    (nodes/indexing/chunking.py, `embed_text`)."""
    prefix = f"{meta['title']} > {meta['section']}" if meta.get("section") else meta["title"]
    return f"{prefix}\n{text}"


def manifest_metadata(info: DocumentInfo) -> dict[str, Any]:
    """The document record; every optional field is written, None when absent, so re-uploading a document
    without an audience or context really removes the old one (upsert would otherwise keep it)."""
    fields: Mapping[str, Any] = info  # read by every key DocumentInfo declares, not literal keys
    return {k: (None if fields.get(k) in (None, []) else fields[k]) for k in DocumentInfo.__annotations__}


def make_client(mode: str, *, path: str | None = None, host: str = "127.0.0.1", port: int = 8001, ssl: bool = False):
    import chromadb
    from chromadb.config import Settings as ChromaSettings

    chroma_settings = ChromaSettings(anonymized_telemetry=False)
    try:
        if mode == "server":
            return chromadb.HttpClient(host=host, port=port, ssl=ssl, settings=chroma_settings)
        assert path is not None, "a persistent Chroma client needs its directory (app/resources.py passes chroma_dir)"
        return chromadb.PersistentClient(path=path, settings=chroma_settings)
    except Exception as exc:  # refused connection, bad path, incompatible server version …
        where = f"{'https' if ssl else 'http'}://{host}:{port}" if mode == "server" else path
        raise IndexUnavailable(f"cannot open Chroma collection store at {where}: {exc}") from exc


def chunks_from_records(
    ids: Iterable[str], texts: Iterable[str], metadatas: Iterable[Mapping[str, Any]]
) -> list[ChunkRecord]:
    """Chroma's stored chunks back as ChunkRecords (embed_text left empty: only the embedder reads it)."""
    chunks = []
    for chunk_id, text, meta in zip(ids, texts, metadatas):
        record = ChunkRecord(
            chunk_id=chunk_id,
            doc_id=meta["doc_id"],
            version=meta["version"],
            title=meta["title"],
            source=meta["source"],
            section=meta["section"],
            os=meta["os"],
            chunk_index=int(meta["chunk_index"]),
            content_hash=meta.get("content_hash", ""),
            text=text,
            embed_text="",
        )
        extra = {k: meta[k] for k in _OPTIONAL_META if meta.get(k)}
        extra.update({f: list(meta[f]) for f in CHUNK_LIST_FIELDS if meta.get(f)})
        # the optional keys present, named by _OPTIONAL_META and CHUNK_LIST_FIELDS: a dynamic set of ChunkRecord keys
        record.update(cast(ChunkRecord, extra))
        if meta.get(RESTRICTED_FIELD):
            record[RESTRICTED_FIELD] = True
        chunks.append(record)
    return chunks


class StoredVectors:
    """Chunk vectors read from Chroma recently, by chunk id: the most recently used `size` of them (~1.5 KB each
    for MiniLM). A chunk's id is a hash of its document, version, position and body, and its title and headings
    come from the same bytes, so the vector stored under an id is the encoder's reading of one fixed text: it
    changes only when every chunk is embedded again (`reembed`, which clears these)."""

    def __init__(self, size: int = STORED_VECTORS) -> None:
        self._size = size
        self._rows: OrderedDict[str, Any] = OrderedDict()
        self._generation = 0  # one more at every `clear`
        self._lock = threading.Lock()

    def get(self, chunk_ids: Iterable[str]) -> tuple[dict[str, Any], int]:
        """The kept vectors of these chunks (the others are left out), in the order asked; and the generation to
        `put` what is read from Chroma for the others with."""
        found: dict[str, Any] = {}
        with self._lock:
            for chunk_id in chunk_ids:
                row = self._rows.get(chunk_id)
                if row is not None:
                    self._rows.move_to_end(chunk_id)
                    found[chunk_id] = row
            return found, self._generation

    def put(self, rows: Mapping[str, Any], generation: int) -> None:
        """Keep vectors read from Chroma, unless they were cleared since `generation` (read before a `reembed`)."""
        with self._lock:
            if generation != self._generation:
                return
            self._rows.update(rows)
            for chunk_id in rows:
                self._rows.move_to_end(chunk_id)
            while len(self._rows) > self._size:
                self._rows.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._rows.clear()
            self._generation += 1


class _Reachable:
    """A Chroma collection whose calls raise IndexUnavailable (answered 503) when a Chroma server cannot be
    reached — refused, reset or timed out — instead of the HTTP client's own error (a 500). The next call
    simply tries again, so a server that comes back is used without a restart of deskmate."""

    def __init__(self, collection) -> None:
        self._collection = collection

    def __getattr__(self, name: str):
        method = getattr(self._collection, name)
        if not callable(method):
            return method

        def call(*args, **kwargs):
            try:
                return method(*args, **kwargs)
            except httpx.TransportError as exc:
                raise IndexUnavailable(f"Chroma is not reachable: {type(exc).__name__}: {exc}") from exc

        return call


class ChromaVectorIndex:
    def __init__(
        self,
        client,
        collection: str = "deskmate_chunks",
        *,
        write_timeout_s: float | None = None,
        write_guard: Callable[[], ContextManager] | None = None,
    ) -> None:
        self._client = client
        # held around every write and the sweep, across processes (replicas and workers sharing a Chroma
        # server): a sweep must never see another process's chunks written but not yet switched to
        self._guard = write_guard or contextlib.nullcontext
        # writes wait at most this long (a stuck upsert on a full disk must not take a request thread for good)
        self._deadline = WriteDeadline(write_timeout_s, "vector store") if write_timeout_s else None
        try:
            self._chunks = _Reachable(
                client.get_or_create_collection(
                    collection, embedding_function=None, configuration={"hnsw": {"space": "cosine"}}
                )
            )
            self._manifest = _Reachable(
                client.get_or_create_collection(f"{collection}_documents", embedding_function=None)
            )
            self._batch = max(1, min(int(client.get_max_batch_size()), 1000))
        except Exception as exc:  # connection refused, bad host, incompatible server …
            raise IndexUnavailable(f"cannot open Chroma collection {collection!r}: {exc}") from exc
        self._write_lock = threading.Lock()
        self._active: dict[str, str] = {}
        self._active_loaded_at = 0.0
        self._vectors = StoredVectors()

    # --- manifest ---------------------------------------------------------------------------
    def _active_versions(self) -> dict[str, str]:
        if time.monotonic() - self._active_loaded_at > MANIFEST_TTL_S:
            records = self._manifest.get(include=["metadatas"])
            self._active = {i: m["version"] for i, m in zip(records["ids"], records["metadatas"])}
            self._active_loaded_at = time.monotonic()
        return self._active

    def active_versions(self) -> dict[str, str]:
        """doc_id → active version; the same object until the manifest is re-read (TTL or a local write)."""
        return self._active_versions()

    def _forget_manifest_cache(self) -> None:
        self._active_loaded_at = 0.0

    def get_document(self, doc_id: str) -> DocumentInfo | None:
        records = self._manifest.get(ids=[doc_id], include=["metadatas"])
        # the manifest record as manifest_metadata wrote it: DocumentInfo's keys, read back as a plain dict
        return cast(DocumentInfo, dict(records["metadatas"][0])) if records["ids"] else None

    def list_documents(self) -> list[DocumentInfo]:
        records = self._manifest.get(include=["metadatas"])
        docs = [cast(DocumentInfo, dict(m)) for m in records["metadatas"]]  # as in get_document
        return sorted(docs, key=lambda d: (d["source"], d["doc_id"]))

    # --- writes -----------------------------------------------------------------------------
    def _within_deadline(self, write: Callable[[], Any]) -> Any:
        if self._deadline is None:
            return write()
        try:
            return self._deadline.run(write)
        except WriteTimedOut as exc:
            raise IndexUnavailable(f"{exc}; the change may still be applied once the store recovers") from exc

    def replace_document(
        self, info: DocumentInfo, chunks: Sequence[ChunkRecord], embeddings: Sequence[Sequence[float]]
    ) -> None:
        self.replace_documents([(info, chunks, embeddings)])

    def replace_documents(
        self, batch: Sequence[tuple[DocumentInfo, Sequence[ChunkRecord], Sequence[Sequence[float]]]]
    ) -> None:
        """Write every document's new chunks, then switch all their manifest records in one upsert, then
        sweep their older versions: three writes for the batch instead of three per document."""
        for info, chunks, embeddings in batch:
            if len(chunks) != len(embeddings):
                raise ValueError(f"{info['doc_id']}: {len(chunks)} chunks but {len(embeddings)} embeddings")
        if batch:
            self._within_deadline(lambda: self._replace(batch))

    def _replace(self, batch: Sequence[tuple[DocumentInfo, Sequence[ChunkRecord], Sequence[Sequence[float]]]]) -> None:
        chunks = [c for _, document_chunks, _ in batch for c in document_chunks]
        embeddings = [e for _, _, document_embeddings in batch for e in document_embeddings]
        infos = [info for info, _, _ in batch]
        with self._write_lock, self._guard():
            self._upsert(chunks, embeddings)
            self._switch(infos)

    def _upsert(self, chunks: Sequence[ChunkRecord], embeddings: Sequence[Sequence[float]]) -> None:
        for start in range(0, len(chunks), self._batch):
            part = chunks[start : start + self._batch]
            self._chunks.upsert(
                ids=[c["chunk_id"] for c in part],
                embeddings=[list(e) for e in embeddings[start : start + self._batch]],
                documents=[c["text"] for c in part],
                metadatas=[chunk_metadata(c) for c in part],
            )

    # --- a large document written while it is embedded (the upload path) -------------------------------
    def stage_chunks(self, chunks: Sequence[ChunkRecord], embeddings: Sequence[Sequence[float]]) -> None:
        """Write chunks of a version that is not active yet, while the rest of the document is still being
        embedded: queries skip them (their version is not the manifest's) until `switch_document`. Never for
        the active version itself (its chunks would change in place)."""
        if len(chunks) != len(embeddings):
            raise ValueError(f"{len(chunks)} chunks but {len(embeddings)} embeddings")
        if chunks:
            self._within_deadline(lambda: self._upsert(chunks, embeddings))

    def switch_document(
        self, info: DocumentInfo, chunks: Sequence[ChunkRecord], embeddings: Sequence[Sequence[float]]
    ) -> None:
        """Make the staged version active in one manifest write, then sweep the older versions. Chunks that
        went missing since they were staged (another process's start-up sweep, or a concurrent upload of
        another version sweeping this one) are written again first: the switch never exposes a partial
        version."""
        if len(chunks) != len(embeddings):
            raise ValueError(f"{info['doc_id']}: {len(chunks)} chunks but {len(embeddings)} embeddings")
        self._within_deadline(lambda: self._switch_staged(info, chunks, embeddings))

    def _switch_staged(
        self, info: DocumentInfo, chunks: Sequence[ChunkRecord], embeddings: Sequence[Sequence[float]]
    ) -> None:
        with self._write_lock, self._guard():
            present: set[str] = set()
            for start in range(0, len(chunks), self._batch):
                ids = [c["chunk_id"] for c in chunks[start : start + self._batch]]
                present.update(self._chunks.get(ids=ids, include=[])["ids"])
            missing = [i for i, c in enumerate(chunks) if c["chunk_id"] not in present]
            if missing:
                log.warning(
                    "%s: %d staged chunk(s) had gone before the switch; written again", info["doc_id"], len(missing)
                )
                self._upsert([chunks[i] for i in missing], [embeddings[i] for i in missing])
            self._switch([info])

    def discard_staged(self, doc_id: str, version: str) -> None:
        """Remove the staged chunks of a version that will not become active (its job was cancelled)."""

        def discard() -> None:
            with self._write_lock, self._guard():
                if self._manifest_version(doc_id) != version:
                    self._chunks.delete(where={"$and": [{"doc_id": doc_id}, {"version": version}]})

        self._within_deadline(discard)

    def _manifest_version(self, doc_id: str) -> str | None:
        records = self._manifest.get(ids=[doc_id], include=["metadatas"])
        return records["metadatas"][0]["version"] if records["ids"] else None

    def _switch(self, infos: Sequence[DocumentInfo]) -> None:
        """The switch: one manifest record per document, written together; then their older versions go."""
        for start in range(0, len(infos), self._batch):
            part = infos[start : start + self._batch]
            self._manifest.upsert(
                ids=[i["doc_id"] for i in part],
                embeddings=[_MANIFEST_VECTOR] * len(part),
                documents=[i["source"] for i in part],
                metadatas=[manifest_metadata(i) for i in part],
            )
        self._forget_manifest_cache()
        for start in range(0, len(infos), _SWEEP_CLAUSES):
            older = [
                {"$and": [{"doc_id": i["doc_id"]}, {"version": {"$ne": i["version"]}}]}
                for i in infos[start : start + _SWEEP_CLAUSES]
            ]
            self._chunks.delete(where=older[0] if len(older) == 1 else {"$or": older})

    def delete_document(self, doc_id: str) -> bool:
        return self._within_deadline(lambda: self._delete(doc_id))

    def _delete(self, doc_id: str) -> bool:
        with self._write_lock, self._guard():
            if not self._manifest.get(ids=[doc_id])["ids"]:
                return False
            self._manifest.delete(ids=[doc_id])  # invisible from here on
            self._forget_manifest_cache()
            self._chunks.delete(where={"doc_id": doc_id})
            return True

    def reconcile(self) -> int:
        """Delete chunks that belong to no active version (a crash between write and switch)."""
        with self._guard():  # no other process is between its chunk writes and its switch meanwhile
            return self._reconcile()

    def _reconcile(self) -> int:
        self._forget_manifest_cache()
        active = self._active_versions()
        removed = 0
        offset = 0
        stale: list[str] = []
        while True:
            page = self._chunks.get(include=["metadatas"], limit=1000, offset=offset)
            if not page["ids"]:
                break
            for chunk_id, meta in zip(page["ids"], page["metadatas"]):
                if active.get(meta.get("doc_id")) != meta.get("version"):
                    stale.append(chunk_id)
            offset += len(page["ids"])
        with self._write_lock:
            for start in range(0, len(stale), self._batch):
                self._chunks.delete(ids=stale[start : start + self._batch])
                removed += len(stale[start : start + self._batch])
        if removed:
            log.info("reconcile: removed %d chunk(s) left over from interrupted indexing", removed)
        return removed

    # --- the encoder its vectors came from ------------------------------------------------------
    def recorded_encoder(self) -> str | None:
        """The encoder every vector here came from (collection metadata); a collection with chunks written before
        encoders were recorded holds the torch encoder's; None for an empty, unrecorded one."""
        metadata = self._client.get_collection(self._chunks.name).metadata or {}
        if metadata.get(ENCODER_KEY):
            return str(metadata[ENCODER_KEY])
        return LEGACY_ENCODER if self._chunks.count() else None

    def record_encoder(self, encoder: str) -> None:
        metadata = dict(self._client.get_collection(self._chunks.name).metadata or {})
        self._chunks.modify(metadata=metadata | {ENCODER_KEY: encoder})

    def reembed(
        self,
        embed_documents: Callable[[Sequence[str]], list[list[float]]],
        progress: Callable[[int], None] | None = None,
    ) -> int:
        """Every chunk's vector computed again from its text (heading prefix + body, as indexing embeds it) and
        written in place; the number of chunks. Other writers wait meanwhile (the write lock and guard)."""
        done = 0
        with self._write_lock, self._guard():
            offset = 0
            while True:
                page = self._chunks.get(include=["documents", "metadatas"], limit=self._batch, offset=offset)
                if not page["ids"]:
                    break
                texts = [embedded_text(m, t) for t, m in zip(page["documents"], page["metadatas"])]
                self._chunks.update(ids=page["ids"], embeddings=[list(v) for v in embed_documents(texts)])
                self._vectors.clear()
                offset += len(page["ids"])
                done += len(page["ids"])
                if progress is not None:
                    progress(done)
        return done

    # --- reads ------------------------------------------------------------------------------
    def query(self, embedding: Sequence[float], k: int, where: dict[str, Any] | None = None) -> list[RetrievedChunk]:
        active = self._active_versions()
        if not active:
            return []
        # The access clause costs Chroma a scan of every chunk's metadata, and most knowledge bases restrict nothing:
        # the search runs without it and the clause is checked on each chunk it returns (the same rule, on the same
        # metadata); when it would have removed one, the search runs again with it. Either way no chunk a caller may
        # not read is returned, and the hits are those the search with the clause gives.
        rest, access = split_access_clause(where)
        result = self._search(embedding, k, rest)
        if access is not None and not all(matches_where(meta, access) for meta in result["metadatas"][0]):
            result = self._search(embedding, k, where)
        hits: list[RetrievedChunk] = []
        for chunk_id, text, meta, distance in zip(
            result["ids"][0], result["documents"][0], result["metadatas"][0], result["distances"][0]
        ):
            if active.get(meta["doc_id"]) != meta["version"]:
                continue  # an older or not-yet-active version
            hit = RetrievedChunk(
                chunk_id=chunk_id,
                doc_id=meta["doc_id"],
                title=meta["title"],
                source=meta["source"],
                section=meta["section"],
                os=meta["os"],
                chunk_index=int(meta["chunk_index"]),
                text=text,
                score=round(1.0 - float(distance), 4),
            )
            hit["dense_score"] = hit["score"]
            hit["origin"] = "dense"
            hit["content_hash"] = meta.get("content_hash", "")
            extra = {k: meta[k] for k in _OPTIONAL_META if meta.get(k)}
            extra.update({f: list(meta[f]) for f in CHUNK_LIST_FIELDS if meta.get(f)})
            # the optional keys present, named by _OPTIONAL_META and CHUNK_LIST_FIELDS: a dynamic set of RetrievedChunk keys
            hit.update(cast(RetrievedChunk, extra))
            hits.append(hit)
            if len(hits) == k:
                break
        return hits

    def _search(self, embedding: Sequence[float], k: int, where: dict[str, Any] | None):
        return self._chunks.query(
            query_embeddings=[list(embedding)],
            n_results=k * OVERFETCH,
            where=where,
            include=["documents", "metadatas", "distances"],
        )

    def similarities(self, embedding: Sequence[float], chunk_ids: Sequence[str]) -> dict[str, float]:
        """Cosine similarity of the query to given chunks, from their stored embeddings (~1 ms for 20; the vectors
        read recently come from `_vectors` without asking Chroma)."""
        if not chunk_ids:
            return {}
        import numpy as np

        vectors, generation = self._vectors.get(chunk_ids)
        missing = [cid for cid in chunk_ids if cid not in vectors]
        if missing:
            records = self._chunks.get(ids=missing, include=["embeddings"])
            read = {cid: np.asarray(e, dtype=np.float32) for cid, e in zip(records["ids"], records["embeddings"])}
            self._vectors.put(read, generation)
            vectors.update(read)
        if not vectors:
            return {}
        matrix = np.stack(list(vectors.values()))
        query = np.asarray(embedding, dtype=np.float32)
        norms = np.linalg.norm(matrix, axis=1) * (np.linalg.norm(query) or 1.0)
        cosines = (matrix * query).sum(axis=1) / np.where(norms == 0, 1.0, norms)  # no BLAS threads for 20 rows
        return {cid: round(float(c), 4) for cid, c in zip(vectors, cosines)}

    def iter_chunks(self, doc_id: str | None = None, version: str | None = None) -> Iterator[ChunkRecord]:
        """Stored chunks (all, or one document's version), page by page — for the lexical index."""
        clauses = [{"doc_id": doc_id}] if doc_id else []
        clauses += [{"version": version}] if version else []
        where = clauses[0] if len(clauses) == 1 else ({"$and": clauses} if clauses else None)
        offset = 0
        while True:
            page = self._chunks.get(where=where, include=["documents", "metadatas"], limit=_PAGE, offset=offset)
            if not page["ids"]:
                return
            yield from chunks_from_records(page["ids"], page["documents"], page["metadatas"])
            offset += len(page["ids"])

    def ping(self, embedding: Sequence[float]) -> None:
        """A real, cheap read of both collections: the manifest and one nearest chunk through the vector
        index (what a second writer on the same folder breaks while counts still look fine)."""
        try:
            self._manifest.count()
            if self._chunks.count():
                self._chunks.query(query_embeddings=[list(embedding)], n_results=1, include=["metadatas"])
        except Exception as exc:
            raise IndexUnavailable(f"Chroma is not answering queries: {exc}") from exc

    def count(self) -> int:
        try:
            return int(self._chunks.count())
        except Exception as exc:
            raise IndexUnavailable(f"Chroma is not reachable: {exc}") from exc
