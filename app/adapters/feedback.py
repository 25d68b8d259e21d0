"""Votes on answers (in the relational store, app/storage), turned into bounded per-chunk multipliers.

At chat time every assistant message is recorded with its (redacted) question and the chunks its
answer cited. A vote (`up`/`down`, one per message — voting again replaces it) credits those chunks
and stores the question's embedding. A vote says "this passage did (not) answer *this* question",
so it only counts for searches whose question is similar to the voted one (cosine ≥ `similarity`):
a passage that was the wrong answer to one question is often the right one to another, and a
query-blind penalty measurably hurt (bench/feedback.py). For a search, a chunk's multiplier is
max_multiplier ** ((up − down) / (up + down + 1)) over the similar votes: strictly inside
[1/max, max] (0.5..2 by default) and 1.0 until `min_votes` similar votes exist. The vote table is
cached in memory for `cache_s` seconds (a vote made here clears it at once).
Implements core.ports.FeedbackSource. Votes attach to `doc_id:content_hash`
(nodes.support.retrieval.feedback_key), so they survive a re-upload that leaves the passage unchanged.

Storage is sized for one row per chat turn: a cited passage's key, id, label and source are written once
(table `cited_chunks`, its id a content hash of the key), and an answer keeps only its question and those ids
packed 8 bytes each (`answers.cited`), about 0.3 KB a turn instead of a row per citation. An answer nobody
voted on is kept for the vote window (`vote_window_s`, DESKMATE_FEEDBACK_VOTE_WINDOW_HOURS): voting happens
right after an answer, and a vote keeps its answer for good.
"""

from __future__ import annotations

import hashlib
import logging
import struct
import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Callable, Literal, Sequence

import numpy as np
from sqlalchemy import case, delete, func, select

from app.storage import Database
from app.storage.schema import answers, votes
from app.storage.schema import cited_chunks as cited_chunk_rows
from core.errors import UnknownMessage
from core.records import RetrievedChunk, Source

log = logging.getLogger(__name__)
Rating = Literal["up", "down"]
MAX_REASON_CHARS = 1000
MAX_CITED = 20  # chunks recorded per answer
MAX_QUERY_CHARS = 1000
DEFAULT_VOTE_WINDOW_S = 7 * 86400.0  # answers nobody voted on are forgotten after this
PRUNE_EVERY_S = 3600.0
TOP_LIST = 10
REF_BYTES = 8


def chunk_ref(key: str) -> int:
    """The id a cited passage is stored under: a signed 64-bit content hash of its feedback key (the
    0004 migration computes the same)."""
    return int.from_bytes(hashlib.sha256(key.encode()).digest()[:REF_BYTES], "big", signed=True)


def pack_refs(refs: Sequence[int]) -> bytes:
    return struct.pack(f">{len(refs)}q", *refs)


def unpack_refs(packed: bytes | None) -> tuple[int, ...]:
    packed = bytes(packed or b"")
    return struct.unpack(f">{len(packed) // REF_BYTES}q", packed[: len(packed) - len(packed) % REF_BYTES])


@dataclass(frozen=True)
class CitedChunk:
    key: str  # nodes.support.retrieval.feedback_key
    chunk_id: str
    label: str  # "title › section", for the stats page
    source: str


@dataclass(frozen=True)
class VoteResult:
    status: Literal["recorded", "updated"]
    message_id: str
    rating: Rating
    chunks: int  # chunks the vote credits


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


_UP = func.coalesce(func.sum(case((votes.c.rating == "up", 1), else_=0)), 0)
_DOWN = func.coalesce(func.sum(case((votes.c.rating == "down", 1), else_=0)), 0)
_VOTED = votes.join(answers, answers.c.message_id == votes.c.message_id)


class FeedbackStore:
    """Implements core.ports.FeedbackSource over the relational store; a path opens an SQLite file of its own."""

    def __init__(
        self,
        db: Database | Path | str,
        *,
        embed: Callable[[str], Sequence[float]],
        min_votes: int = 3,
        max_multiplier: float = 1.2,
        similarity: float = 0.85,
        cache_s: float = 60.0,
        vote_window_s: float = DEFAULT_VOTE_WINDOW_S,
    ) -> None:
        if max_multiplier < 1.0:
            raise ValueError("max_multiplier must be at least 1.0")
        self.vote_window_s = vote_window_s
        self._embed = embed
        self.similarity = similarity
        self.min_votes = max(1, min_votes)
        self.max_multiplier = max_multiplier
        self.cache_s = cache_s
        self._owns_db = not isinstance(db, Database)
        self.db = db if isinstance(db, Database) else Database.open(f"sqlite:///{Path(db).resolve()}")
        self._lock = threading.Lock()  # guards the cache only: the database serialises the writes
        self._cache: _VoteTable | None = None
        self._cache_at = 0.0
        self._pruned_at = 0.0
        # the two statements every answered turn runs, built once
        self._new_cited = self.db.insert(cited_chunk_rows).on_conflict_do_nothing()
        self._new_answer = self.db.insert(answers).on_conflict_do_nothing()

    def close(self) -> None:
        if self._owns_db:
            self.db.close()

    # --- writes ---------------------------------------------------------------------------------
    def record_answer(self, message_id: str, session_id: str, query: str, cited: Sequence[CitedChunk]) -> None:
        """Remember an assistant message's (redacted) question and the chunks it cited, for a later vote."""
        unique = list({c.key: c for c in cited[:MAX_CITED]}.values())
        refs = [chunk_ref(c.key) for c in unique]
        with self.db.begin() as conn:
            if unique:  # a passage's row is written by the first answer citing it; later ones only point at it
                conn.execute(
                    self._new_cited,
                    [
                        {"id": ref, "key": c.key, "chunk_id": c.chunk_id, "label": c.label, "source": c.source}
                        for ref, c in zip(refs, unique)
                    ],
                )
            conn.execute(
                self._new_answer,
                {
                    "message_id": message_id,
                    "session_id": session_id,
                    "query": query[:MAX_QUERY_CHARS],
                    "created_at": _now(),
                    "cited": pack_refs(refs),
                },
            )
        self._prune_if_due()

    def vote(self, message_id: str, session_id: str, rating: Rating, reason: str | None = None) -> VoteResult:
        """One vote per message; voting again replaces it. UnknownMessage if the session never got it."""
        if rating not in ("up", "down"):
            raise ValueError("rating must be 'up' or 'down'")
        reason = (reason or "").strip()[:MAX_REASON_CHARS] or None
        with self.db.connect() as conn:
            row = conn.execute(
                select(answers.c.session_id, answers.c.query, answers.c.cited).where(answers.c.message_id == message_id)
            ).first()
        if row is None or row[0] != session_id:
            raise UnknownMessage(
                f"No assistant message '{message_id}' in session '{session_id}'. Use the "
                "message_id and session_id of a /chat response (answers can be voted on for "
                f"{self.vote_window_s / 3600:g} hours)."
            )
        embedding = np.asarray(self._embed(row[1]), dtype=np.float32).tobytes()  # outside any transaction: ~15 ms
        now = _now()
        with self.db.begin() as conn:
            existed = conn.execute(select(votes.c.message_id).where(votes.c.message_id == message_id)).first()
            statement = self.db.insert(votes).values(
                message_id=message_id, rating=rating, reason=reason, embedding=embedding, created_at=now, updated_at=now
            )
            conn.execute(
                statement.on_conflict_do_update(
                    index_elements=[votes.c.message_id],
                    set_={
                        "rating": statement.excluded.rating,
                        "reason": statement.excluded.reason,
                        "updated_at": statement.excluded.updated_at,
                    },
                )
            )
        with self._lock:
            self._cache = None  # the next search here sees this vote (other replicas within cache_s)
        return VoteResult("updated" if existed else "recorded", message_id, rating, len(unpack_refs(row[2])))

    def _prune_if_due(self) -> None:
        if time.monotonic() - self._pruned_at < PRUNE_EVERY_S:
            return
        self._pruned_at = time.monotonic()
        self.prune()

    def prune(self, *, window_s: float | None = None) -> int:
        """Forget answers nobody voted on once the vote window has passed, and the cited passages no
        remaining answer points at; returns how many answers went. Voted answers are kept."""
        window_s = self.vote_window_s if window_s is None else window_s
        cutoff = (datetime.now(UTC) - timedelta(seconds=window_s)).isoformat(timespec="seconds")
        with self.db.begin() as conn:
            removed = conn.execute(
                delete(answers).where(
                    answers.c.created_at < cutoff, answers.c.message_id.not_in(select(votes.c.message_id))
                )
            ).rowcount
        if removed:
            self._forget_uncited()
            log.info("feedback: forgot %d unrated answer(s) older than %g hours", removed, window_s / 3600)
        return removed

    def _forget_uncited(self, batch: int = 500) -> None:
        # bounded by what the vote window keeps; a passage cited again later is simply written again
        started = _now()
        with self.db.connect() as conn:
            stored = list(conn.execute(select(cited_chunk_rows.c.id)).scalars())
            referenced = {ref for (packed,) in conn.execute(select(answers.c.cited)) for ref in unpack_refs(packed)}
        unused = [ref for ref in stored if ref not in referenced]
        for start in range(0, len(unused), batch):
            with self.db.begin() as conn:
                # an answer written meanwhile may point at a passage listed as unused: keep those
                fresh = {
                    ref
                    for (packed,) in conn.execute(select(answers.c.cited).where(answers.c.created_at >= started))
                    for ref in unpack_refs(packed)
                }
                gone = [ref for ref in unused[start : start + batch] if ref not in fresh]
                if gone:
                    conn.execute(delete(cited_chunk_rows).where(cited_chunk_rows.c.id.in_(gone)))

    # --- reads ----------------------------------------------------------------------------------
    def multiplier(self, up: int, down: int) -> float:
        """max ** ((up − down) / (up + down + 1)), or 1.0 below min_votes: always within [1/max, max]."""
        if up + down < self.min_votes:
            return 1.0
        return round(self.max_multiplier ** ((up - down) / (up + down + 1)), 4)

    def _tallies(self, conn) -> dict[int, list[int]]:
        """Cited passage id → [up, down] over every vote."""
        tallies: dict[int, list[int]] = {}
        for rating, packed in conn.execute(select(votes.c.rating, answers.c.cited).select_from(_VOTED)):
            for ref in unpack_refs(packed):
                tallies.setdefault(ref, [0, 0])[rating != "up"] += 1
        return tallies

    def _vote_table(self) -> _VoteTable:
        with self._lock:
            if self._cache is not None and time.monotonic() - self._cache_at < self.cache_s:
                return self._cache
        with self.db.connect() as conn:
            rows = [
                (ref, rating == "up", blob)
                for rating, blob, packed in conn.execute(
                    select(votes.c.rating, votes.c.embedding, answers.c.cited)
                    .select_from(_VOTED)
                    .where(votes.c.embedding.is_not(None))
                )
                for ref in unpack_refs(packed)
            ]
        table = _VoteTable.build(rows)
        with self._lock:
            self._cache, self._cache_at = table, time.monotonic()
        return table

    def multipliers(self, keys: Sequence[str], query_embedding: Sequence[float] | None = None) -> dict[str, float]:
        """Multipliers from the votes on questions similar to this one (all votes when no embedding is given)."""
        table = self._vote_table()
        wanted = [(k, ref) for k in keys if (ref := chunk_ref(k)) in table.rows_of]
        if not wanted:
            return {}
        query = None if query_embedding is None else _unit(query_embedding)
        out = {}
        for key, ref in wanted:
            rows = table.rows_of[ref]
            # element-wise, not a BLAS mat-vec: a few hundred rows, and no thread pool fighting the embedder's
            counted = (
                np.ones(len(rows), dtype=bool)
                if query is None
                else (table.embeddings[rows] * query).sum(axis=1) >= self.similarity
            )
            up = int(table.up[rows][counted].sum())
            factor = self.multiplier(up, int(counted.sum()) - up)
            if factor != 1.0:
                out[key] = factor
        return out

    def stats(self) -> dict[str, Any]:
        with self.db.connect() as conn:
            up, down = conn.execute(select(_UP, _DOWN).select_from(votes)).one()
            answers_recorded = conn.execute(select(func.count()).select_from(answers)).scalar_one()
            tallies = self._tallies(conn)
            shown = [ref for ref, (u, d) in tallies.items() if u + d >= self.min_votes]
            labels: dict[int, tuple[str, str, str, str]] = {}  # id → key, chunk_id, label, source
            for start in range(0, len(shown), 500):
                labels |= {
                    ref: (key, chunk_id, label, source)
                    for ref, key, chunk_id, label, source in conn.execute(
                        select(
                            cited_chunk_rows.c.id,
                            cited_chunk_rows.c.key,
                            cited_chunk_rows.c.chunk_id,
                            cited_chunk_rows.c.label,
                            cited_chunk_rows.c.source,
                        ).where(cited_chunk_rows.c.id.in_(shown[start : start + 500]))
                    )
                }
            reasons = conn.execute(
                select(votes.c.rating, votes.c.reason, votes.c.updated_at)
                .where(votes.c.reason.is_not(None))
                .order_by(votes.c.updated_at.desc())
                .limit(TOP_LIST)
            ).all()
        adjusted: list[dict[str, Any]] = [
            {
                "key": labels[ref][0],
                "chunk_id": labels[ref][1],
                "label": labels[ref][2],
                "source": labels[ref][3],
                "up": u,
                "down": d,
                "multiplier": self.multiplier(u, d),
            }
            for ref, (u, d) in tallies.items()
            if ref in labels
        ]
        boosted = sorted((a for a in adjusted if a["multiplier"] > 1), key=lambda a: -a["multiplier"])
        penalised = sorted((a for a in adjusted if a["multiplier"] < 1), key=lambda a: a["multiplier"])
        return {
            "votes": {"up": int(up), "down": int(down), "total": int(up + down)},
            "answers_recorded": int(answers_recorded),
            "min_votes": self.min_votes,
            "multiplier_range": [round(1 / self.max_multiplier, 4), self.max_multiplier],
            "chunks_with_votes": len(tallies),
            "chunks_adjusted": len(boosted) + len(penalised),
            "top_boosted": boosted[:TOP_LIST],
            "top_penalised": penalised[:TOP_LIST],
            "recent_reasons": [{"rating": r, "reason": text, "at": at} for r, text, at in reasons],
        }


def cited_chunks(
    sources: Sequence[Source], retrieved: Sequence[RetrievedChunk], key_of: Callable[[RetrievedChunk], str]
) -> list[CitedChunk]:
    """The chunks an answer cited (its sources), with their feedback keys from the retrieved chunks."""
    by_id = {c["chunk_id"]: c for c in retrieved}
    cited = []
    for source in sources:
        chunk = by_id.get(source["chunk_id"])
        key = key_of(chunk) if chunk else source["chunk_id"]
        label = f"{source['title']} › {source['section']}" if source.get("section") else source["title"]
        cited.append(CitedChunk(key=key, chunk_id=source["chunk_id"], label=label, source=source["source"]))
    return cited


def _unit(vector: Sequence[float]) -> np.ndarray:
    array = np.asarray(vector, dtype=np.float32)
    return array / (np.linalg.norm(array) or 1.0)


@dataclass(frozen=True)
class _VoteTable:
    """Every (chunk key, vote) pair with the voted question's embedding, for fast per-search tallies."""

    embeddings: np.ndarray  # one row per (passage, vote) pair
    up: np.ndarray  # bool per row
    rows_of: dict[int, np.ndarray]  # chunk_ref(key) → row indices

    @classmethod
    def build(cls, rows: list[tuple[int, bool, bytes]]) -> _VoteTable:
        if not rows:
            return cls(np.zeros((0, 1), np.float32), np.zeros(0, bool), {})
        embeddings = np.stack([np.frombuffer(blob, dtype=np.float32) for _, _, blob in rows])
        norms = np.linalg.norm(embeddings, axis=1, keepdims=True)
        grouped: dict[int, list[int]] = {}
        for i, (key, _, _) in enumerate(rows):
            grouped.setdefault(key, []).append(i)
        return cls(
            embeddings / np.where(norms == 0, 1, norms),
            np.array([bool(up) for _, up, _ in rows]),
            {k: np.array(v) for k, v in grouped.items()},
        )
