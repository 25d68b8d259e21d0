"""The lexical index in Postgres: the same BM25 as `BM25Index`, shared by every replica on one database.

Tables (app/storage/schema.py): one row per chunk of a document's held version (`lexical_chunks`, with its
length and the fields a hit carries), its postings (`lexical_postings`: term, chunk row, tf), its context and
audience values (`lexical_values`, for `$contains` filters), and the corpus statistics BM25 needs — chunk count
and total length per collection (`lexical_stats`), document frequency per term (`lexical_terms`) — kept in step
with the postings in the same transaction as every write. A query is one SQL statement over the postings of
its own terms: IDF, length normalisation and the 0..1 share of the best possible score are computed exactly
as `BM25Index` does (same tokenizer, k1, b, filters and audience rules), so rankings and scores match the
in-process index (tests/storage/test_lexical_postgres.py pins that), not Postgres' own ts_rank.

A document's write is one transaction, so a reader sees its old chunks or its new ones, never a mix; writes
of one document are serialised on its `lexical_documents` row. The vector store stays the source of truth:
`HybridIndex` writes here only after Chroma's version switch, and its `active` map still filters hits.
"""

from __future__ import annotations

import functools
import hashlib
import json
import threading
from collections import Counter
from contextlib import contextmanager
from typing import Any, Collection, Iterator, Mapping, Sequence

from sqlalchemy import text
from sqlalchemy.engine import Connection

from app.adapters.lexical_index import (
    K1,
    B,
    article_chunk,
    chunk_text_for_bm25,
    coverage,
    lexical_hit,
    lexical_record,
)
from app.adapters.spelling import SlipReader
from app.storage.database import Database
from core.filters import CHUNK_LIST_FIELDS, RESTRICTED_FIELD, may_read
from core.records import ChunkRecord, QueryCoverage, RetrievedChunk, TermDocuments
from core.text import Tokenizer

# a btree entry holds at most ~2.7 kB: a longer "word" (a pasted blob) is kept as its hash, in writes and
# queries alike, so it still matches itself exactly
MAX_TERM_CHARS = 200
MAX_QUERY_TERMS = 256  # a pasted log line as a query stays one bounded statement

# BM25 of every chunk holding one of the query's terms, in one statement; `scored` is _SCORE_ROWS with a
# filter narrowing the chunks.
# The same formula as BM25Index._score_all: idf(n, df) · tf · (k1 + 1) / (tf + k1 · (1 − b + b · len / avgdl)),
# and the share of the best score any chunk could reach, Σ idf · (k1 + 1) over the query's distinct terms.
_SCORED = """
WITH stats AS (
    SELECT chunks::float8 AS n,
           COALESCE(NULLIF(total_length::float8 / NULLIF(chunks, 0), 0), 1.0::float8) AS avgdl
    FROM lexical_stats WHERE collection = :collection
), weights AS (
    SELECT q.term, ln(1.0::float8 + (s.n - COALESCE(t.df, 0) + 0.5::float8) / (COALESCE(t.df, 0) + 0.5::float8)) AS idf
    FROM unnest(CAST(:terms AS text[])) AS q(term)
    CROSS JOIN stats s
    LEFT JOIN (SELECT term, df FROM lexical_terms
               WHERE collection = :collection AND term = ANY(CAST(:terms AS text[]))) t ON t.term = q.term
), best AS (
    SELECT COALESCE(NULLIF(sum(idf) * (:k1 + 1), 0), 1.0::float8) AS score FROM weights
), scored AS ({scored})"""

# the BM25 of each chunk passing `filter`, summed over the postings of the query's terms
_SCORE_ROWS = """
    SELECT p.row_id,
           sum(w.idf * p.tf * (:k1 + 1) / (p.tf + :k1 * (1 - :b + :b * p.length / s.avgdl))) AS score
    FROM lexical_postings p
    JOIN weights w ON w.term = p.term
    CROSS JOIN stats s
    WHERE p.collection = :collection AND p.term = ANY(CAST(:terms AS text[])) AND {filter}
    GROUP BY p.row_id
"""
# the same for given chunks, each (chunk, term) posting looked up by the postings' whole primary key
# (collection, term, row; OFFSET 0 keeps the lookup from being flattened into a join the planner may reorder):
# a few index probes per chunk whatever the statistics say. As a join filtered on the row, a freshly filled
# index (no ANALYZE yet) was planned as a walk over the collection's postings per chunk: 12 ms, not 0.6.
_SCORE_IDS = """
    SELECT c.row_id,
           sum(w.idf * p.tf * (:k1 + 1) / (p.tf + :k1 * (1 - :b + :b * p.length / s.avgdl))) AS score
    FROM lexical_chunks c
    CROSS JOIN weights w
    CROSS JOIN LATERAL (SELECT tf, length FROM lexical_postings
                        WHERE collection = c.collection AND term = w.term AND row_id = c.row_id OFFSET 0) p
    CROSS JOIN stats s
    WHERE c.collection = :collection AND c.chunk_id = ANY(CAST(:ids AS text[]))
    GROUP BY c.row_id
"""
# the top k rows are picked from the postings before their chunks' records are read
_TOP_K = "SELECT row_id, score FROM scored WHERE score > 0 ORDER BY score DESC, row_id LIMIT :k"


@functools.lru_cache(maxsize=64)
def _search_statement(condition: str):
    """The search for one filter shape (a handful per deployment), built and compiled once."""
    return text(
        _SCORED.format(scored=_SCORE_ROWS.format(filter=condition))
        + "SELECT c.record, c.doc_id, c.version, s.score / best.score AS share "
        f"FROM ({_TOP_K}) s "
        "JOIN lexical_chunks c ON c.row_id = s.row_id CROSS JOIN best ORDER BY s.score DESC, s.row_id"
    )


_LEXICAL_SCORES = text(
    _SCORED.format(scored=_SCORE_IDS)
    + "SELECT c.chunk_id, COALESCE(s.score, 0) / best.score AS share FROM lexical_chunks c "
    "LEFT JOIN scored s ON s.row_id = c.row_id CROSS JOIN best "
    "WHERE c.collection = :collection AND c.chunk_id = ANY(CAST(:ids AS text[]))"
)


@functools.lru_cache(maxsize=64)
def _search_scored_statement(condition: str):
    """A search and the shares of given chunks in one statement (one round trip, the query's weights computed
    once): the search's hits first, best first (part 0), then one row per given chunk that exists (part 1)."""
    return text(
        _SCORED.format(scored=_SCORE_ROWS.format(filter=condition))
        + f", scored_ids AS ({_SCORE_IDS}), top AS ({_TOP_K}) "
        "SELECT 0 AS part, c.record, c.doc_id, c.version, c.chunk_id, t.score / best.score AS share, "
        "t.score AS rank, t.row_id FROM top t JOIN lexical_chunks c ON c.row_id = t.row_id CROSS JOIN best "
        "UNION ALL "
        "SELECT 1, NULL, NULL, NULL, c.chunk_id, COALESCE(s.score, 0) / best.score, 0, c.row_id "
        "FROM lexical_chunks c LEFT JOIN scored_ids s ON s.row_id = c.row_id CROSS JOIN best "
        "WHERE c.collection = :collection AND c.chunk_id = ANY(CAST(:ids AS text[])) "
        "ORDER BY part, rank DESC, row_id"
    )


def stored_term(term: str) -> str:
    """How a term is kept: itself, or the hash of a word too long for an index entry."""
    if len(term) <= MAX_TERM_CHARS:
        return term
    return "#" + hashlib.sha256(term.encode()).hexdigest()


class UnsupportedFilter(ValueError):
    """A `where` clause outside the subset core.filters produces."""


class _Where:
    """core.filters' `where` language ($and, $or, $contains on list fields, restricted $ne) as SQL over the
    postings alias `p`, with its bound parameters — the same rules as BM25Index._allowed_rows."""

    def __init__(self) -> None:
        self.params: dict[str, Any] = {}

    def _param(self, value: Any) -> str:
        name = f"w{len(self.params)}"
        self.params[name] = value
        return f":{name}"

    def sql(self, where: Mapping[str, Any] | None) -> str:
        if not where:
            return "TRUE"
        if "$and" in where:
            parts = [self.sql(c) for c in where["$and"]]
            return "(" + " AND ".join(parts) + ")" if parts else "FALSE"
        if "$or" in where:
            parts = [self.sql(c) for c in where["$or"]]
            return "(" + " OR ".join(parts) + ")" if parts else "FALSE"
        ((field, condition),) = where.items()
        if isinstance(condition, Mapping) and "$contains" in condition and field in CHUNK_LIST_FIELDS:
            return (
                f"EXISTS (SELECT 1 FROM lexical_values v WHERE v.row_id = p.row_id AND v.field = "
                f"{self._param(field)} AND v.value = {self._param(condition['$contains'])})"
            )
        if field == RESTRICTED_FIELD and isinstance(condition, Mapping) and "$ne" in condition:
            return "p.restricted" if condition["$ne"] is False else "NOT p.restricted"
        if field == RESTRICTED_FIELD and isinstance(condition, bool):
            return "p.restricted" if condition else "NOT p.restricted"
        raise UnsupportedFilter(f"the Postgres lexical index cannot filter on {field!r} with {condition!r}")


class PostgresBM25Index:
    """Okapi BM25 over one collection's chunks in Postgres; the methods and results of BM25Index."""

    shared = True  # every replica reads and writes the same index: HybridIndex syncs it, never rebuilds it

    def __init__(
        self, database: Database, collection: str, tokenizer: Tokenizer | None = None, *, k1: float = K1, b: float = B
    ) -> None:
        if not database.is_postgres:
            raise ValueError("the Postgres lexical index needs DESKMATE_DATABASE_URL=postgresql://…")
        self._db = database
        self.collection = collection
        self._tokenize = tokenizer or Tokenizer()
        self._slips = SlipReader()
        self.k1, self.b = k1, b
        self._held = threading.local()  # this thread's connection while `reading()` holds one

    def _terms(self, text_: str) -> list[str]:
        return [stored_term(t) for t in self._tokenize(text_)]

    def _query_terms(self, text_: str) -> list[str]:
        return list(dict.fromkeys(self._terms(text_)))[:MAX_QUERY_TERMS]

    def _with_compounds(self, conn: Connection, text_: str, terms: list[str]) -> list[str]:
        """`terms` and the joined forms of words the query writes apart that this collection holds as one
        (the in-process index's BM25Index._query_terms, looked up here in one indexed read)."""
        compounds = getattr(self._tokenize, "compounds", None)
        if compounds is None or not terms:
            return terms
        candidates = [c for c in dict.fromkeys(stored_term(t) for t in compounds(text_)) if c not in terms]
        if not candidates:
            return terms
        held = set(
            conn.execute(
                text("SELECT term FROM lexical_terms WHERE collection = :collection AND term = ANY(:terms)"),
                {"collection": self.collection, "terms": candidates[:MAX_QUERY_TERMS]},
            ).scalars()
        )
        return (terms + [c for c in candidates if c in held])[:MAX_QUERY_TERMS]

    # --- writes -----------------------------------------------------------------------------
    def prepare(self, chunks: Sequence[ChunkRecord]) -> list[tuple[dict[str, Any], Counter]]:
        """The chunks' records and term counts (the CPU half of a write, done while a document is embedded)."""
        return [(lexical_record(c), Counter(self._terms(chunk_text_for_bm25(c)))) for c in chunks]

    def replace_document(
        self,
        doc_id: str,
        version: str,
        chunks: Sequence[ChunkRecord],
        prepared: list[tuple[dict[str, Any], Counter]] | None = None,
    ) -> None:
        """Make `chunks` the document's only content (the new version), in one transaction; `prepared`:
        `prepare(chunks)`."""
        prepared = prepared if prepared is not None else self.prepare(chunks)
        with self._db.begin() as conn:
            # the document's row first: a concurrent write of the same document waits here for this one
            conn.execute(
                text(
                    "INSERT INTO lexical_documents (collection, doc_id, version) VALUES (:collection, :doc, :version) "
                    "ON CONFLICT (collection, doc_id) DO UPDATE SET version = excluded.version"
                ),
                {"collection": self.collection, "doc": doc_id, "version": version},
            )
            removed_chunks, removed_length, df_delta = self._remove_chunks(conn, doc_id)
            added_length = self._insert_chunks(conn, doc_id, version, prepared)
            for _, terms in prepared:
                df_delta.update(terms.keys())
            self._apply_stats(conn, len(prepared) - removed_chunks, added_length - removed_length, df_delta)

    def delete_document(self, doc_id: str) -> bool:
        with self._db.begin() as conn:
            held = conn.execute(
                text("DELETE FROM lexical_documents WHERE collection = :collection AND doc_id = :doc RETURNING doc_id"),
                {"collection": self.collection, "doc": doc_id},
            ).first()
            if held is None:
                return False
            removed_chunks, removed_length, df_delta = self._remove_chunks(conn, doc_id)
            self._apply_stats(conn, -removed_chunks, -removed_length, df_delta)
            return True

    def clear(self) -> None:
        with self._db.begin() as conn:
            params = {"collection": self.collection}
            conn.execute(text("DELETE FROM lexical_postings WHERE collection = :collection"), params)
            conn.execute(text("DELETE FROM lexical_chunks WHERE collection = :collection"), params)  # values cascade
            for table in ("lexical_terms", "lexical_stats", "lexical_documents"):
                conn.execute(text(f"DELETE FROM {table} WHERE collection = :collection"), params)

    def _remove_chunks(self, conn: Connection, doc_id: str) -> tuple[int, int, Counter]:
        """Delete the document's chunks and postings: (chunks removed, their length, −1 per term per chunk)."""
        params: dict[str, Any] = {"collection": self.collection, "doc": doc_id}
        rows = conn.execute(
            text("SELECT row_id, length FROM lexical_chunks WHERE collection = :collection AND doc_id = :doc"), params
        ).all()
        df_delta: Counter = Counter()
        if rows:
            params["rows"] = [r.row_id for r in rows]
            for (term,) in conn.execute(
                text("DELETE FROM lexical_postings WHERE row_id = ANY(:rows) RETURNING term"), params
            ):
                df_delta[term] -= 1
            conn.execute(text("DELETE FROM lexical_chunks WHERE row_id = ANY(:rows)"), params)  # values cascade
        return len(rows), sum(r.length for r in rows), df_delta

    def _insert_chunks(
        self, conn: Connection, doc_id: str, version: str, prepared: list[tuple[dict[str, Any], Counter]]
    ) -> int:
        if not prepared:
            return 0
        lengths = [sum(terms.values()) for _, terms in prepared]
        inserted = conn.execute(
            text(
                "INSERT INTO lexical_chunks (collection, chunk_id, doc_id, version, chunk_index, length, restricted, "
                "record) SELECT :collection, * FROM unnest(CAST(:ids AS text[]), CAST(:docs AS text[]), "
                "CAST(:versions AS text[]), CAST(:indexes AS int[]), CAST(:lengths AS int[]), "
                "CAST(:restricted AS bool[]), CAST(:records AS text[])) RETURNING row_id, chunk_id"
            ),
            {
                "collection": self.collection,
                "ids": [r["chunk_id"] for r, _ in prepared],
                "docs": [doc_id] * len(prepared),
                "versions": [version] * len(prepared),
                "indexes": [int(r["chunk_index"]) for r, _ in prepared],
                "lengths": lengths,
                "restricted": [bool(r.get(RESTRICTED_FIELD)) for r, _ in prepared],
                "records": [json.dumps(r) for r, _ in prepared],
            },
        ).all()
        row_of = {chunk_id: row_id for row_id, chunk_id in inserted}
        driver = conn.connection.driver_connection
        assert driver is not None  # a checked-out connection always has its psycopg connection
        cursor = driver.cursor()  # COPY: a long manual has ~10^5 postings
        with cursor.copy("COPY lexical_postings (collection, term, row_id, tf, length, restricted) FROM STDIN") as copy:
            for (record, terms), length in zip(prepared, lengths):
                row_id, restricted = row_of[record["chunk_id"]], bool(record.get(RESTRICTED_FIELD))
                for term, tf in terms.items():
                    copy.write_row((self.collection, term, row_id, tf, length, restricted))
        values = {
            (row_of[r["chunk_id"]], field, value)
            for r, _ in prepared
            for field in CHUNK_LIST_FIELDS
            for value in (r.get(field) or ())
        }
        if values:
            with cursor.copy("COPY lexical_values (row_id, field, value) FROM STDIN") as copy:
                for row in sorted(values):
                    copy.write_row(row)
        return sum(lengths)

    def _apply_stats(self, conn: Connection, chunks: int, length: int, df_delta: Counter) -> None:
        changed = sorted((t, d) for t, d in df_delta.items() if d)  # one lock order for every writer
        if changed:
            conn.execute(
                text(
                    "INSERT INTO lexical_terms (collection, term, df) SELECT :collection, * FROM "
                    "unnest(CAST(:terms AS text[]), CAST(:deltas AS int[])) ORDER BY 1, 2 "
                    "ON CONFLICT (collection, term) DO UPDATE SET df = lexical_terms.df + excluded.df"
                ),
                {"collection": self.collection, "terms": [t for t, _ in changed], "deltas": [d for _, d in changed]},
            )
            gone = [t for t, d in changed if d < 0]
            if gone:
                conn.execute(
                    text("DELETE FROM lexical_terms WHERE collection = :collection AND term = ANY(:terms) AND df <= 0"),
                    {"collection": self.collection, "terms": gone},
                )
        if chunks or length:
            conn.execute(
                text(
                    "INSERT INTO lexical_stats (collection, chunks, total_length) VALUES (:collection, :chunks, :length) "
                    "ON CONFLICT (collection) DO UPDATE SET chunks = lexical_stats.chunks + excluded.chunks, "
                    "total_length = lexical_stats.total_length + excluded.total_length"
                ),
                {"collection": self.collection, "chunks": chunks, "length": length},
            )

    def analyze(self) -> None:
        """Refresh the planner's statistics of the lexical tables. After a start-up fill the tables went from
        empty to full faster than autovacuum looks (a minute or more), and a plan made for empty tables walks
        every chunk of the collection where an index lookup of a few rows was meant."""
        with self._db.connect() as conn:
            conn.execution_options(isolation_level="AUTOCOMMIT")
            for table in ("lexical_chunks", "lexical_postings", "lexical_terms", "lexical_values"):
                conn.execute(text(f"ANALYZE {table}"))

    # --- reads ------------------------------------------------------------------------------
    @contextmanager
    def reading(self) -> Iterator[None]:
        """Hold one pooled connection for every read of this thread until the block ends: a retrieval's
        lexical calls (search, scores, neighbours, coverage) then cost one checkout — one pre-ping — instead of
        one each. The connection is in autocommit: each read is one statement, which sees the same committed
        data as it would in a READ COMMITTED transaction, without the BEGIN and ROLLBACK round trips. A server
        that went away is DatabaseUnavailable (503), as for every other store; nested blocks share the outer
        connection."""
        if getattr(self._held, "conn", None) is not None:
            yield
            return
        with self._db.connect() as conn:
            conn.execution_options(isolation_level="AUTOCOMMIT")
            self._held.conn = conn
            try:
                yield
            finally:
                self._held.conn = None

    @contextmanager
    def _read(self) -> Iterator[Connection]:
        """The connection `reading()` holds, or one of the read's own (the same autocommit checkout)."""
        with self.reading():
            yield self._held.conn

    def versions(self) -> dict[str, str]:
        with self._read() as conn:
            return dict(
                conn.execute(
                    text("SELECT doc_id, version FROM lexical_documents WHERE collection = :collection"),
                    {"collection": self.collection},
                ).all()
            )

    def count(self) -> int:
        with self._read() as conn:
            return int(
                conn.execute(
                    text("SELECT chunks FROM lexical_stats WHERE collection = :collection"),
                    {"collection": self.collection},
                ).scalar()
                or 0
            )

    def _params(self, terms: list[str], extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
        return {"collection": self.collection, "terms": terms, "k1": self.k1, "b": self.b, **(extra or {})}

    def search(
        self, text_: str, k: int, where: Mapping[str, Any] | None = None, active: Mapping[str, str] | None = None
    ) -> list[RetrievedChunk]:
        """Top `k` chunks with a BM25 score above zero; `active` (doc → version) drops other versions."""
        terms = self._query_terms(text_)
        if not terms or k <= 0:
            return []
        clause = _Where()
        condition = clause.sql(where)
        with self._read() as conn:
            terms = self._with_compounds(conn, text_, terms)
            rows = conn.execute(_search_statement(condition), self._params(terms, {"k": k, **clause.params})).all()
        return [
            lexical_hit(json.loads(row.record), float(row.share))
            for row in rows
            if active is None or active.get(row.doc_id) == row.version
        ]

    def search_scored(
        self,
        text_: str,
        k: int,
        where: Mapping[str, Any] | None = None,
        active: Mapping[str, str] | None = None,
        chunk_ids: Sequence[str] = (),
    ) -> tuple[list[RetrievedChunk], dict[str, float]]:
        """`search` and `lexical_scores(text_, chunk_ids)` in one statement: a retrieval needs the BM25 share of
        its dense candidates the search did not return."""
        terms = self._query_terms(text_)
        if not terms or k <= 0 or not chunk_ids:  # one side is empty or a constant: no shared work to save
            return self.search(text_, k, where, active), self.lexical_scores(text_, chunk_ids)
        clause = _Where()
        condition = clause.sql(where)
        with self._read() as conn:
            terms = self._with_compounds(conn, text_, terms)
            rows = conn.execute(
                _search_scored_statement(condition),
                self._params(terms, {"k": k, "ids": list(chunk_ids), **clause.params}),
            ).all()
        hits = [
            lexical_hit(json.loads(row.record), float(row.share))
            for row in rows
            if row.part == 0 and (active is None or active.get(row.doc_id) == row.version)
        ]
        return hits, {row.chunk_id: round(float(row.share), 4) for row in rows if row.part == 1}

    def lexical_scores(self, text_: str, chunk_ids: Sequence[str]) -> dict[str, float]:
        if not chunk_ids:
            return {}
        terms = self._query_terms(text_)
        with self._read() as conn:
            terms = self._with_compounds(conn, text_, terms)
            rows = conn.execute(_LEXICAL_SCORES, self._params(terms, {"ids": list(chunk_ids)})).all()
        return {chunk_id: round(float(share), 4) if terms else 0.0 for chunk_id, share in rows}

    def read_slips(self, text_: str) -> str:
        """`text_` with each typing slip read as the word the documents hold (app/adapters/spelling.py): every
        stem to weigh looked up in one indexed read."""
        candidates = self._slips.candidates(text_)
        if not candidates:
            return text_
        stems = {stored_term(stem): stem for stem in SlipReader.stems(candidates)}
        with self._read() as conn:
            rows = conn.execute(
                text("SELECT term, df FROM lexical_terms WHERE collection = :collection AND term = ANY(:terms)"),
                {"collection": self.collection, "terms": list(stems)},
            ).all()
        return SlipReader.read(text_, candidates, {stems[term]: int(df) for term, df in rows})

    def query_coverage(self, text_: str, doc_ids: Sequence[str]) -> QueryCoverage:
        """How much of a query the corpus and given documents hold (lexical_index.coverage)."""
        terms = list(dict.fromkeys(self._terms(text_)))[:MAX_QUERY_TERMS]
        params = {"collection": self.collection, "terms": terms, "docs": list(doc_ids)}
        with self._read() as conn:
            n = (
                conn.execute(text("SELECT chunks FROM lexical_stats WHERE collection = :collection"), params).scalar()
                or 0
            )
            dfs: dict[str, int] = (
                dict(
                    conn.execute(
                        text(
                            "SELECT term, df FROM lexical_terms WHERE collection = :collection AND term = ANY(:terms)"
                        ),
                        params,
                    ).all()
                )
                if terms
                else {}
            )
            found: dict[str, set[str]] = {doc_id: set() for doc_id in doc_ids}
            if terms and doc_ids:
                for doc_id, term in conn.execute(
                    text(
                        "SELECT DISTINCT c.doc_id, p.term FROM lexical_chunks c JOIN lexical_postings p "
                        "ON p.collection = :collection AND p.row_id = c.row_id AND p.term = ANY(:terms) "
                        "WHERE c.collection = :collection AND c.doc_id = ANY(:docs)"
                    ),
                    params,
                ):
                    found[doc_id].add(term)
        return coverage(terms, int(n), dfs, found)

    def held_terms(self, terms: Collection[str]) -> set[str]:
        """Which index terms some chunk holds, in one indexed read (a term is kept as `stored_term`)."""
        stored = {stored_term(t): t for t in terms}
        if not stored:
            return set()
        with self._read() as conn:
            rows = conn.execute(
                text("SELECT term FROM lexical_terms WHERE collection = :collection AND term = ANY(:terms) AND df > 0"),
                {"collection": self.collection, "terms": list(stored)},
            ).scalars()
            return {stored[term] for term in rows}

    def term_documents(self, terms: Collection[str]) -> TermDocuments:
        """The documents holding each term, and the number of documents, in one read (the postings' index)."""
        stored = {stored_term(t): t for t in terms}
        params = {"collection": self.collection, "terms": list(stored)}
        with self._read() as conn:
            documents = (
                conn.execute(
                    text("SELECT count(*) FROM lexical_documents WHERE collection = :collection"), params
                ).scalar()
                or 0
            )
            rows = (
                conn.execute(
                    text(
                        "SELECT p.term, array_agg(DISTINCT c.doc_id) FROM lexical_postings p "
                        "JOIN lexical_chunks c ON c.row_id = p.row_id "
                        "WHERE p.collection = :collection AND p.term = ANY(:terms) GROUP BY p.term"
                    ),
                    params,
                ).all()
                if stored
                else []
            )
        return TermDocuments(int(documents), {stored[term]: frozenset(docs) for term, docs in rows})

    def document_chunks(self, doc_id: str, groups: frozenset[str] | None) -> list[RetrievedChunk]:
        """Every chunk of a document's held version that `groups` may read, in document order (score 0)."""
        with self._read() as conn:
            records = conn.execute(
                text(
                    "SELECT record FROM lexical_chunks WHERE collection = :collection AND doc_id = :doc "
                    "ORDER BY chunk_index"
                ),
                {"collection": self.collection, "doc": doc_id},
            ).scalars()
            rows = [json.loads(r) for r in records]
            return [article_chunk(r) for r in rows if groups is None or may_read(r, groups)]

    def neighbours(self, chunk_id: str, radius: int) -> list[RetrievedChunk]:
        if radius <= 0:
            return []
        with self._read() as conn:
            rows = conn.execute(
                text(
                    "SELECT c.record AS own, n.record FROM lexical_chunks c JOIN lexical_chunks n "
                    "ON n.collection = c.collection AND n.doc_id = c.doc_id AND n.row_id <> c.row_id "
                    "AND n.chunk_index BETWEEN c.chunk_index - :radius AND c.chunk_index + :radius "
                    "WHERE c.collection = :collection AND c.chunk_id = :chunk ORDER BY n.chunk_index"
                ),
                {"collection": self.collection, "chunk": chunk_id, "radius": radius},
            ).all()
        if not rows:
            return []
        section = json.loads(rows[0].own)["section"]
        found = (json.loads(r.record) for r in rows)
        return [lexical_hit(r, 0.0) for r in found if r["section"] == section]
