"""BM25 beside Chroma: an in-process lexical index that follows the vector index's active versions.

`BM25Index` is an incremental inverted index (postings per stemmed term, numpy arrays built per
term on demand), so adding, replacing or deleting a document costs O(its tokens) and a query
costs O(postings of the query's terms) — nothing is rebuilt per query. `HybridIndex` wraps the
Chroma index: every write goes to Chroma first (the source of truth, with its atomic version
switch) and then to BM25; at start-up BM25 is rebuilt from Chroma's active chunks; and when
Chroma's manifest shows versions BM25 does not hold (another replica wrote, or a crash left a
gap) the differing documents are re-read from Chroma. Lexical hits of a version that is not
active are never returned, so readers see the old or the new document, never a mix.

Measured choice (bench/retrieval.py, tv-dev): this BM25 with stemming and a stop list (core/text.py) reached
nDCG@10 .829 alone versus .766 for bm25s with its defaults; bm25s has no incremental updates (a
full re-index per write) and Chroma's local full-text search (`$contains`) does not rank.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections import Counter
from contextlib import AbstractContextManager, nullcontext
from typing import TYPE_CHECKING, Any, Collection, Mapping, Sequence, cast

import numpy as np

from app.adapters.spelling import SlipReader
from core.filters import CHUNK_LIST_FIELDS, RESTRICTED_FIELD, matches_where, may_read
from core.records import ChunkRecord, QueryCoverage, RetrievedChunk, TermDocuments
from core.text import Tokenizer

if TYPE_CHECKING:  # it imports this module's helpers
    from app.adapters.lexical_postgres import PostgresBM25Index

log = logging.getLogger(__name__)

K1 = 0.9  # term-frequency saturation; tuned on tv-dev (0.7–1.2 within .005 nDCG)
B = 0.4  # length normalisation; manual sections vary a lot in length, so less than the usual 0.75
LAG_GRACE_S = 10.0  # a shared index lagging Chroma this long had a writer die between the two writes
BULK_READ_DOCS = 50  # more documents to re-read than this: one pass over all of Chroma's chunks instead
_CHUNK_FIELDS = ("chunk_id", "doc_id", "title", "source", "section", "os", "chunk_index", "text")


def chunk_text_for_bm25(chunk: Mapping[str, Any]) -> str:
    """What BM25 indexes: the title and section path with the body (as embedded)."""
    return f"{chunk['title']} {chunk.get('section') or ''} {chunk['text']}"


def idf(n: int, df: int) -> float:
    """BM25's inverse document frequency of a term found in `df` of `n` chunks (never negative)."""
    return math.log(1 + (n - df + 0.5) / (df + 0.5))


def coverage(terms: Sequence[str], n: int, dfs: Mapping[str, int], found: Mapping[str, set[str]]) -> QueryCoverage:
    """How much of a query (its distinct `terms`) the corpus and some documents hold, each term weighted by its
    IDF: the share found anywhere in each document (`found`: doc → its terms), and the share no chunk of the
    corpus contains at all."""
    if not terms or n == 0:
        return QueryCoverage({d: 0.0 for d in found}, 1.0 if terms else 0.0, len(terms))
    weights = {t: idf(n, dfs.get(t, 0)) for t in terms}
    total = sum(weights.values()) or 1.0
    unseen = sum(w for t, w in weights.items() if not dfs.get(t)) / total
    shares = {d: round(sum(w for t, w in weights.items() if t in held) / total, 4) for d, held in found.items()}
    return QueryCoverage(shares, round(unseen, 4), len(terms))


def lexical_record(chunk: Mapping[str, Any]) -> dict[str, Any]:
    """What a lexical index keeps of a chunk: everything but the text as embedded."""
    return {k: v for k, v in chunk.items() if k != "embed_text"}


def lexical_hit(record: Mapping[str, Any], score: float) -> RetrievedChunk:
    """A kept chunk as a search hit with its 0..1 BM25 share."""
    fields: dict[str, Any] = {k: record[k] for k in _CHUNK_FIELDS}
    fields["score"] = round(score, 4)
    fields["lexical_score"] = fields["score"]
    fields["origin"] = "lexical"
    fields["content_hash"] = record.get("content_hash", "")
    for optional in ("role", "reader"):
        if record.get(optional):
            fields[optional] = record[optional]
    for field in CHUNK_LIST_FIELDS:
        if record.get(field):
            fields[field] = list(record[field])
    # keys named by _CHUNK_FIELDS, ("role", "reader") and CHUNK_LIST_FIELDS: a dynamic set of RetrievedChunk keys
    return cast(RetrievedChunk, fields)


def article_chunk(record: Mapping[str, Any]) -> RetrievedChunk:
    """A kept chunk as part of a whole article (score 0, no lexical evidence)."""
    chunk = lexical_hit(record, 0.0)
    chunk["origin"] = "article"
    del chunk["lexical_score"]
    return chunk


class BM25Index:
    """Okapi BM25 over chunks, one version per document; thread-safe, updated in place."""

    shared = False  # this process's own copy: rebuilt from Chroma at start-up, follows other replicas' writes

    def __init__(self, tokenizer: Tokenizer | None = None, *, k1: float = K1, b: float = B) -> None:
        self._tokenize = tokenizer or Tokenizer()
        self._slips = SlipReader()
        self.k1, self.b = k1, b
        self._lock = threading.RLock()
        self._rows: list[dict[str, Any] | None] = []  # row → chunk fields + "version" + context lists
        self._row_terms: list[Counter | None] = []
        self._free: list[int] = []
        self._lengths = np.zeros(64, dtype=np.float32)
        self._total_length = 0
        self._by_chunk: dict[str, int] = {}
        self._by_doc: dict[str, list[int]] = {}
        self._versions: dict[str, str] = {}
        self._postings: dict[str, dict[int, int]] = {}
        self._arrays: dict[str, tuple[np.ndarray, np.ndarray]] = {}  # per-term cache, dropped on change
        self._values: dict[tuple[str, str], set[int]] = {}  # (context field, value) → rows
        self._restricted: set[int] = set()  # rows of documents with an audience

    def _record(self, row: int) -> dict[str, Any]:
        """The record of a row that _by_chunk or _by_doc names (only freed rows hold None)."""
        record = self._rows[row]
        assert record is not None, f"row {row} is indexed but was freed"
        return record

    # --- writes -----------------------------------------------------------------------------
    def prepare(self, chunks: Sequence[ChunkRecord]) -> list[tuple[dict[str, Any], Counter]]:
        """The chunks' records and term counts (the CPU half of a write, done while a document is embedded)."""
        return [(lexical_record(c), Counter(self._tokenize(chunk_text_for_bm25(c)))) for c in chunks]

    def replace_document(
        self,
        doc_id: str,
        version: str,
        chunks: Sequence[ChunkRecord],
        prepared: list[tuple[dict[str, Any], Counter]] | None = None,
    ) -> None:
        """Make `chunks` the document's only content (the new version); `prepared`: `prepare(chunks)`."""
        prepared = prepared if prepared is not None else self.prepare(chunks)
        with self._lock:
            self._remove(doc_id)
            rows = [self._add(record, terms) for record, terms in prepared]
            self._by_doc[doc_id] = rows
            self._versions[doc_id] = version

    def delete_document(self, doc_id: str) -> bool:
        with self._lock:
            return self._remove(doc_id)

    def clear(self) -> None:
        with self._lock:
            for doc_id in list(self._by_doc):
                self._remove(doc_id)

    def _add(self, record: dict[str, Any], terms: Counter) -> int:
        row = self._free.pop() if self._free else len(self._rows)
        if row == len(self._rows):
            self._rows.append(None)
            self._row_terms.append(None)
            if row >= len(self._lengths):
                self._lengths = np.concatenate([self._lengths, np.zeros(len(self._lengths), np.float32)])
        length = sum(terms.values())
        self._rows[row], self._row_terms[row] = record, terms
        self._lengths[row] = length
        self._total_length += length
        self._by_chunk[record["chunk_id"]] = row
        for term, tf in terms.items():
            self._postings.setdefault(term, {})[row] = tf
            self._arrays.pop(term, None)
        for field in CHUNK_LIST_FIELDS:
            for value in record.get(field) or ():
                self._values.setdefault((field, value), set()).add(row)
        if record.get(RESTRICTED_FIELD):
            self._restricted.add(row)
        return row

    def _remove(self, doc_id: str) -> bool:
        rows = self._by_doc.pop(doc_id, None)
        self._versions.pop(doc_id, None)
        if rows is None:
            return False
        for row in rows:
            record, terms = self._record(row), self._row_terms[row]
            assert terms is not None, f"row {row} of {doc_id} is indexed but was freed"
            for term in terms:
                postings = self._postings[term]
                del postings[row]
                if not postings:
                    del self._postings[term]
                self._arrays.pop(term, None)
            for field in CHUNK_LIST_FIELDS:
                for value in record.get(field) or ():
                    self._values[(field, value)].discard(row)
            self._restricted.discard(row)
            self._total_length -= int(self._lengths[row])
            self._lengths[row] = 0
            del self._by_chunk[record["chunk_id"]]
            self._rows[row] = self._row_terms[row] = None
            self._free.append(row)
        return True

    # --- reads ------------------------------------------------------------------------------
    def versions(self) -> dict[str, str]:
        with self._lock:
            return dict(self._versions)

    def count(self) -> int:
        with self._lock:
            return len(self._by_chunk)

    def _term_arrays(self, term: str) -> tuple[np.ndarray, np.ndarray] | None:
        cached = self._arrays.get(term)
        if cached is None:
            postings = self._postings.get(term)
            if not postings:
                return None
            cached = (
                np.fromiter(postings.keys(), np.int64, len(postings)),
                np.fromiter(postings.values(), np.float32, len(postings)),
            )
            self._arrays[term] = cached
        return cached

    def _score_all(self, terms: list[str]) -> tuple[np.ndarray, float]:
        """BM25 of every row, and the best score any chunk could reach for these terms (for 0..1)."""
        n = len(self._by_chunk)
        scores = np.zeros(len(self._rows), dtype=np.float32)
        if n == 0:
            return scores, 1.0
        avg_length = self._total_length / n or 1.0
        norm = self.k1 * (1 - self.b + self.b * self._lengths[: len(self._rows)] / avg_length)
        best = 0.0
        for term in dict.fromkeys(terms):
            postings = self._postings.get(term)
            df = len(postings) if postings else 0
            weight = idf(n, df)
            best += weight * (self.k1 + 1)  # unknown words count too: a query only half found is half a match
            arrays = self._term_arrays(term)
            if arrays is not None:
                rows, tfs = arrays
                scores[rows] += weight * tfs * (self.k1 + 1) / (tfs + norm[rows])
        return scores, best or 1.0

    def _allowed_rows(self, where: Mapping[str, Any]) -> set[int]:
        if "$and" in where:
            sets = [self._allowed_rows(c) for c in where["$and"]]
            return set.intersection(*sets) if sets else set()
        if "$or" in where:
            return set().union(*(self._allowed_rows(c) for c in where["$or"]))
        ((field, condition),) = where.items()
        if isinstance(condition, Mapping) and "$contains" in condition and field in CHUNK_LIST_FIELDS:
            return set(self._values.get((field, condition["$contains"]), ()))
        if field == RESTRICTED_FIELD and condition == {"$ne": True}:  # access_where's "public" clause
            return set(self._by_chunk.values()) - self._restricted
        return {row for row, record in enumerate(self._rows) if record and matches_where(record, where)}

    def _hit(self, row: int, score: float) -> RetrievedChunk:
        return lexical_hit(self._record(row), score)

    def _query_terms(self, text: str) -> list[str]:
        """The query's terms, and the joined forms of words it writes apart that the documents hold as one
        ("sign in" → signin where a page says "sign-in"); call with the lock held."""
        terms = self._tokenize(text)
        compounds = getattr(self._tokenize, "compounds", None)
        if compounds is None or not terms:
            return terms
        return terms + [c for c in compounds(text) if c in self._postings and c not in terms]

    def search(
        self, text: str, k: int, where: Mapping[str, Any] | None = None, active: Mapping[str, str] | None = None
    ) -> list[RetrievedChunk]:
        """Top `k` chunks with a BM25 score above zero; `active` (doc → version) drops other versions."""
        if k <= 0:
            return []
        with self._lock:
            terms = self._query_terms(text)
            if not terms:
                return []
            hits = self._top(*self._score_all(terms), k, where)
        return self._of_active(hits, active)

    def _top(self, scores: np.ndarray, best: float, k: int, where: Mapping[str, Any] | None) -> list[RetrievedChunk]:
        """The `k` best-scored rows `where` allows as hits (0..1 of `best`); `scores` is masked in place. Call with
        the lock held."""
        if where:
            mask = np.zeros(len(scores), dtype=bool)
            mask[list(self._allowed_rows(where))] = True
            scores[~mask] = 0.0
        candidates = np.flatnonzero(scores > 0)
        if len(candidates) > k:
            candidates = candidates[np.argpartition(-scores[candidates], k - 1)[:k]]
        ordered = candidates[np.argsort(-scores[candidates], kind="stable")]
        return [self._hit(int(row), float(scores[row]) / best) for row in ordered]

    def _of_active(self, hits: list[RetrievedChunk], active: Mapping[str, str] | None) -> list[RetrievedChunk]:
        if active is None:
            return hits
        return [h for h in hits if active.get(h["doc_id"]) == self._versions.get(h["doc_id"])]

    def search_scored(
        self,
        text: str,
        k: int,
        where: Mapping[str, Any] | None = None,
        active: Mapping[str, str] | None = None,
        chunk_ids: Sequence[str] = (),
    ) -> tuple[list[RetrievedChunk], dict[str, float]]:
        """`search` and `lexical_scores(text, chunk_ids)` (one call for a retrieval): the query's terms and every
        row's BM25 worked out once for both."""
        with self._lock:
            terms = self._query_terms(text)
            rows = {cid: self._by_chunk[cid] for cid in chunk_ids if cid in self._by_chunk}
            if not terms:
                return [], {cid: 0.0 for cid in rows}
            scores, best = self._score_all(terms)
            shares = {cid: round(float(scores[row]) / best, 4) for cid, row in rows.items()}
            hits = self._top(scores, best, k, where) if k > 0 else []
        return self._of_active(hits, active), shares

    def reading(self) -> AbstractContextManager[None]:
        """Nothing to hold in process (the Postgres index holds one connection for a retrieval's reads)."""
        return nullcontext()

    def lexical_scores(self, text: str, chunk_ids: Sequence[str]) -> dict[str, float]:
        with self._lock:
            terms = self._query_terms(text)
            rows = {cid: self._by_chunk[cid] for cid in chunk_ids if cid in self._by_chunk}
            if not terms or not rows:
                return {cid: 0.0 for cid in rows}
            scores, best = self._score_all(terms)
            return {cid: round(float(scores[row]) / best, 4) for cid, row in rows.items()}

    def read_slips(self, text: str) -> str:
        """`text` with each typing slip read as the word the documents hold (app/adapters/spelling.py)."""
        candidates = self._slips.candidates(text)
        if not candidates:
            return text
        with self._lock:
            df = {stem: len(self._postings.get(stem) or ()) for stem in SlipReader.stems(candidates)}
        return SlipReader.read(text, candidates, df)

    def query_coverage(self, text: str, doc_ids: Sequence[str]) -> QueryCoverage:
        """How much of a query the corpus and given documents hold (see `coverage`)."""
        terms = list(dict.fromkeys(self._tokenize(text)))
        with self._lock:
            dfs = {t: len(self._postings.get(t) or ()) for t in terms}
            found = {
                doc_id: {
                    t for t in terms if any(r in (self._postings.get(t) or ()) for r in self._by_doc.get(doc_id, ()))
                }
                for doc_id in doc_ids
            }
            return coverage(terms, len(self._by_chunk), dfs, found)

    def held_terms(self, terms: Collection[str]) -> set[str]:
        with self._lock:
            return {t for t in terms if self._postings.get(t)}

    def term_documents(self, terms: Collection[str]) -> TermDocuments:
        with self._lock:
            holding = {
                t: frozenset(self._record(row)["doc_id"] for row in postings)
                for t in terms
                if (postings := self._postings.get(t))
            }
            return TermDocuments(len(self._by_doc), holding)

    def document_chunks(self, doc_id: str, groups: frozenset[str] | None) -> list[RetrievedChunk]:
        """Every chunk of a document's held version that `groups` may read, in document order (score 0)."""
        with self._lock:
            rows = sorted(self._by_doc.get(doc_id, ()), key=lambda r: self._record(r)["chunk_index"])
            return [
                article_chunk(self._record(row))
                for row in rows
                if groups is None or may_read(self._record(row), groups)
            ]

    def neighbours(self, chunk_id: str, radius: int) -> list[RetrievedChunk]:
        with self._lock:
            row = self._by_chunk.get(chunk_id)
            if row is None or radius <= 0:
                return []
            record = self._record(row)
            siblings = [self._record(r) for r in self._by_doc.get(record["doc_id"], ())]
            wanted = range(record["chunk_index"] - radius, record["chunk_index"] + radius + 1)
            found = [
                s
                for s in siblings
                if s["chunk_index"] in wanted and s["chunk_id"] != chunk_id and s["section"] == record["section"]
            ]
            return [
                self._hit(self._by_chunk[s["chunk_id"]], 0.0) for s in sorted(found, key=lambda s: s["chunk_index"])
            ]


class HybridIndex:
    """Chroma (vectors, documents, the source of truth) with BM25 beside it, written through one door.

    Implements core.ports.VectorIndex and core.ports.LexicalIndex.
    """

    def __init__(self, vector, lexical: BM25Index | PostgresBM25Index | None = None) -> None:
        """`lexical`: a BM25Index (in-process, the default) or a PostgresBM25Index (shared by replicas)."""
        self.vector = vector
        self.lexical: BM25Index | PostgresBM25Index = lexical or BM25Index()
        self._write_lock = threading.RLock()
        self._staged: dict[str, Any] = {}  # chunk_id → lexical.prepare() of a staged chunk, until its switch
        self._staged_lock = threading.Lock()
        self._followed: object = None  # the manifest snapshot BM25 was last compared with
        self._lag_seen: dict[tuple[str, str | None], float] = {}  # shared index: differences and when first seen

    # --- VectorIndex: reads go to Chroma --------------------------------------------------------
    def query(self, embedding, k: int, where: dict[str, Any] | None = None) -> list[RetrievedChunk]:
        return self.vector.query(embedding, k, where)

    def similarities(self, embedding, chunk_ids: Sequence[str]) -> dict[str, float]:
        return self.vector.similarities(embedding, chunk_ids)

    def get_document(self, doc_id: str):
        return self.vector.get_document(doc_id)

    def list_documents(self):
        return self.vector.list_documents()

    def count(self) -> int:
        return self.vector.count()

    # --- writes: Chroma first (its manifest switch is the commit), then BM25 ----------------------
    def replace_document(self, info, chunks: Sequence[ChunkRecord], embeddings) -> None:
        with self._write_lock:
            self.vector.replace_document(info, chunks, embeddings)
            self.lexical.replace_document(info["doc_id"], info["version"], chunks)

    def replace_documents(self, batch) -> None:
        with self._write_lock:
            self.vector.replace_documents(batch)
            for info, chunks, _ in batch:
                self.lexical.replace_document(info["doc_id"], info["version"], chunks)

    # --- a large document written while it is embedded (nodes/indexing/steps.embed) -----------------------
    def stage_chunks(self, chunks: Sequence[ChunkRecord], embeddings) -> None:
        """Chroma gets the chunks of the not-yet-active version now; BM25 gets their terms counted now and
        the chunks themselves at the switch (a lexical index has no invisible versions)."""
        self.vector.stage_chunks(chunks, embeddings)
        prepared = self.lexical.prepare(chunks)
        with self._staged_lock:
            self._staged.update({c["chunk_id"]: p for c, p in zip(chunks, prepared)})

    def switch_document(self, info, chunks: Sequence[ChunkRecord], embeddings) -> None:
        """The staged version becomes the document's content: Chroma's manifest switch, then BM25."""
        with self._write_lock:
            self.vector.switch_document(info, chunks, embeddings)
            with self._staged_lock:
                staged = [self._staged.pop(c["chunk_id"], None) for c in chunks]
            prepared = staged if all(p is not None for p in staged) else None
            self.lexical.replace_document(info["doc_id"], info["version"], chunks, prepared=prepared)

    def discard_staged(self, doc_id: str, version: str) -> None:
        with self._staged_lock:
            for chunk_id in [
                i
                for i, (record, _) in self._staged.items()
                if record["doc_id"] == doc_id and record["version"] == version
            ]:
                del self._staged[chunk_id]
        self.vector.discard_staged(doc_id, version)

    def delete_document(self, doc_id: str) -> bool:
        with self._write_lock:
            removed = self.vector.delete_document(doc_id)
            self.lexical.delete_document(doc_id)
            return removed

    def reconcile(self) -> int:
        """Sweep Chroma's leftovers, then bring BM25 to Chroma's active chunks (start-up): an in-process index
        is rebuilt; a shared one only re-reads the documents whose version differs."""
        removed = self.vector.reconcile()
        if self.lexical.shared:
            self.sync_lexical()
        else:
            self.rebuild_lexical()
        return removed

    def rebuild_lexical(self) -> None:
        started = time.perf_counter()
        with self._write_lock:
            self.lexical.clear()
            by_doc: dict[str, list[ChunkRecord]] = {}
            for chunk in self.vector.iter_chunks():
                by_doc.setdefault(chunk["doc_id"], []).append(chunk)
            active = self.vector.active_versions()
            for doc_id, chunks in by_doc.items():
                if doc_id in active:
                    self.lexical.replace_document(doc_id, active[doc_id], chunks)
            self._followed = active
        log.info(
            "lexical index rebuilt from Chroma: %d chunks of %d documents in %.0f ms",
            self.lexical.count(),
            len(by_doc),
            (time.perf_counter() - started) * 1000,
        )

    def sync_lexical(self) -> int:
        """Bring a shared lexical index to Chroma's active versions; returns the documents re-read."""
        started = time.perf_counter()
        with self._write_lock:
            active = self.vector.active_versions()
            held = self.lexical.versions()
            brought = self._bring(_differing(held, active), active, recheck=True)
            self._followed = active
            if brought > BULK_READ_DOCS:  # a first start: the planner's statistics still describe empty tables
                assert not isinstance(self.lexical, BM25Index), (
                    "only a shared index is synced (reconcile rebuilds BM25)"
                )
                self.lexical.analyze()
        log.info(
            "lexical index in step with Chroma: %d of %d documents re-read in %.0f ms",
            brought,
            len(active),
            (time.perf_counter() - started) * 1000,
        )
        return brought

    def _bring(self, doc_ids, active: Mapping[str, str], *, recheck: bool) -> int:
        """Write Chroma's active version of each document (or its absence) into the lexical index. With
        `recheck`, the manifest record is read again first and a document that moved on since `active` was
        read is left alone: on a shared index another replica is writing it, and an older read must not
        overwrite its newer version."""
        doc_ids = list(doc_ids)
        wanted = {d: active[d] for d in doc_ids if d in active}
        read_all: dict[str, list[ChunkRecord]] | None = None
        if len(wanted) > BULK_READ_DOCS:  # a first start over an empty shared index: one pass over Chroma
            read_all = {}
            for chunk in self.vector.iter_chunks():
                if wanted.get(chunk["doc_id"]) == chunk["version"]:
                    read_all.setdefault(chunk["doc_id"], []).append(chunk)
        brought = 0
        for doc_id in doc_ids:
            version = active.get(doc_id)
            if recheck:
                current = self.vector.get_document(doc_id)
                if (current["version"] if current else None) != version:
                    continue
            if version is None:
                self.lexical.delete_document(doc_id)
            else:
                chunks = (
                    read_all.get(doc_id, [])
                    if read_all is not None
                    else list(self.vector.iter_chunks(doc_id=doc_id, version=version))
                )
                self.lexical.replace_document(doc_id, version, chunks)
                (log.debug if read_all is not None else log.info)(
                    "lexical index followed %s to version %s (%d chunks)", doc_id, version, len(chunks)
                )
            brought += 1
        return brought

    def _follow_manifest(self) -> dict[str, str]:
        """Bring BM25 to Chroma's active versions when the manifest changed under it.

        In-process index: other replicas' writes reach it only this way. Shared index: the writer updates it
        right after Chroma, so a difference is only acted on once it outlasts LAG_GRACE_S (a writer that died
        between the two writes) — every replica re-reading a document being written would be wasted work."""
        active = self.vector.active_versions()
        if active is self._followed or not self._write_lock.acquire(blocking=False):
            return active  # unchanged, or a local write is in progress and will update BM25 itself
        try:
            differing = _differing(self.lexical.versions(), active)
            if self.lexical.shared:
                now = time.monotonic()
                self._lag_seen = {(d, active.get(d)): self._lag_seen.get((d, active.get(d)), now) for d in differing}
                due = [d for (d, _), seen in self._lag_seen.items() if now - seen >= LAG_GRACE_S]
                self._bring(due, active, recheck=True)
                for doc_id in due:
                    self._lag_seen.pop((doc_id, active.get(doc_id)), None)
            else:
                self._bring(differing, active, recheck=False)
            self._followed = active
        finally:
            self._write_lock.release()
        return active

    # --- LexicalIndex ------------------------------------------------------------------------
    def search(self, text: str, k: int, where: dict[str, Any] | None = None) -> list[RetrievedChunk]:
        active = self._follow_manifest()
        return self.lexical.search(text, k, where, active=active)

    def search_scored(
        self, text: str, k: int, where: dict[str, Any] | None = None, chunk_ids: Sequence[str] = ()
    ) -> tuple[list[RetrievedChunk], dict[str, float]]:
        active = self._follow_manifest()
        return self.lexical.search_scored(text, k, where, active=active, chunk_ids=chunk_ids)

    def lexical_scores(self, text: str, chunk_ids: Sequence[str]) -> dict[str, float]:
        return self.lexical.lexical_scores(text, chunk_ids)

    def reading(self) -> AbstractContextManager[None]:
        return self.lexical.reading()

    def neighbours(self, chunk_id: str, radius: int) -> list[RetrievedChunk]:
        return self.lexical.neighbours(chunk_id, radius)

    def document_chunks(self, doc_id: str, groups: frozenset[str] | None) -> list[RetrievedChunk]:
        self._follow_manifest()
        return self.lexical.document_chunks(doc_id, groups)

    def query_coverage(self, text: str, doc_ids: Sequence[str]) -> QueryCoverage:
        return self.lexical.query_coverage(text, doc_ids)

    def read_slips(self, text: str) -> str:
        return self.lexical.read_slips(text)

    def held_terms(self, terms: Collection[str]) -> set[str]:
        return self.lexical.held_terms(terms)

    def term_documents(self, terms: Collection[str]) -> TermDocuments:
        return self.lexical.term_documents(terms)


def _differing(held: Mapping[str, str], active: Mapping[str, str]) -> list[str]:
    """Documents whose held version is not the active one (or that only one side has)."""
    return sorted(d for d in set(held) | set(active) if held.get(d) != active.get(d))
