"""Scripted test doubles implementing the ports in core/ports.py.

- HashingEmbedder: deterministic bag-of-words vectors (shared words → similar vectors).
- InMemoryIndex: the VectorIndex protocol over a dict, cosine similarity in numpy.
- ScriptedChatModel: replies from a queue and records every call (`history`).
"""

from __future__ import annotations

import hashlib
import math
import re
from typing import Any, Sequence

from core.errors import LLMError
from core.filters import matches_where
from core.lexicon import STOPWORDS
from core.ports import ChatMessage
from core.records import ChunkRecord, DocumentInfo, RetrievedChunk

_WORD = re.compile(r"[a-z0-9]+")


class HashingEmbedder:
    """Content words hashed into a fixed number of buckets, L2-normalised. Ranks by word overlap."""

    def __init__(self, dimension: int = 256) -> None:
        self.dimension = dimension
        self.calls: list[list[str]] = []
        self.fail_next = 0

    def _vector(self, text: str) -> list[float]:
        vector = [0.0] * self.dimension
        for word in _WORD.findall(text.lower()):
            if word in STOPWORDS:
                continue
            bucket = int(hashlib.md5(word.encode()).hexdigest(), 16) % self.dimension
            vector[bucket] += 1.0
        norm = math.sqrt(sum(v * v for v in vector)) or 1.0
        return [v / norm for v in vector]

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls.append(list(texts))
        if self.fail_next:
            self.fail_next -= 1
            raise RuntimeError("scripted embedding failure")
        return [self._vector(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]

    def count_tokens(self, text: str) -> int:
        return len(text.split()) + 2


class InMemoryIndex:
    def __init__(self) -> None:
        self.chunks: dict[str, tuple[ChunkRecord, list[float]]] = {}
        self.documents: dict[str, DocumentInfo] = {}
        self.queries: list[dict[str, Any]] = []

    def query(self, embedding: Sequence[float], k: int, where: dict[str, Any] | None = None) -> list[RetrievedChunk]:
        self.queries.append({"k": k, "where": where})
        scored = []
        for record, vector in self.chunks.values():
            if self.documents.get(record["doc_id"], {}).get("version") != record["version"]:
                continue
            if where and not matches_where(record, where):
                continue
            score = sum(a * b for a, b in zip(embedding, vector))
            scored.append((score, record))
        scored.sort(key=lambda item: item[0], reverse=True)
        return [
            RetrievedChunk(
                chunk_id=r["chunk_id"],
                doc_id=r["doc_id"],
                title=r["title"],
                source=r["source"],
                section=r["section"],
                os=r["os"],
                chunk_index=r["chunk_index"],
                text=r["text"],
                score=round(s, 4),
            )
            for s, r in scored[:k]
        ]

    def similarities(self, embedding: Sequence[float], chunk_ids: Sequence[str]) -> dict[str, float]:
        return {
            cid: round(sum(a * b for a, b in zip(embedding, self.chunks[cid][1])), 4)
            for cid in chunk_ids
            if cid in self.chunks
        }

    def get_document(self, doc_id: str) -> DocumentInfo | None:
        return self.documents.get(doc_id)

    def list_documents(self) -> list[DocumentInfo]:
        return sorted(self.documents.values(), key=lambda d: d["source"])

    def replace_document(
        self, info: DocumentInfo, chunks: Sequence[ChunkRecord], embeddings: Sequence[Sequence[float]]
    ) -> None:
        for chunk, vector in zip(chunks, embeddings):
            self.chunks[chunk["chunk_id"]] = (chunk, list(vector))
        self.documents[info["doc_id"]] = info
        self.chunks = {
            cid: (c, v)
            for cid, (c, v) in self.chunks.items()
            if c["doc_id"] != info["doc_id"] or c["version"] == info["version"]
        }

    def replace_documents(self, batch) -> None:
        for info, chunks, embeddings in batch:
            self.replace_document(info, chunks, embeddings)

    def delete_document(self, doc_id: str) -> bool:
        existed = self.documents.pop(doc_id, None) is not None
        self.chunks = {cid: (c, v) for cid, (c, v) in self.chunks.items() if c["doc_id"] != doc_id}
        return existed

    def count(self) -> int:
        return len(self.chunks)


class ScriptedChatModel:
    """Replies come from `enqueue`d strings (or exceptions); every call is recorded in `history`."""

    name = "scripted"

    def __init__(self, replies: Sequence[str | Exception] = ()) -> None:
        self._queue: list[str | Exception] = list(replies)
        self.history: list[list[ChatMessage]] = []

    def enqueue(self, *replies: str | Exception) -> None:
        self._queue.extend(replies)

    def complete(self, messages: Sequence[ChatMessage], *, max_tokens: int | None = None) -> str:
        self.history.append(list(messages))
        if not self._queue:
            raise LLMError("scripted model has no reply queued")
        reply = self._queue.pop(0)
        if isinstance(reply, Exception):
            raise reply
        return reply


def chunk(
    text: str,
    *,
    title: str = "Doc",
    section: str = "",
    os: str = "",
    score: float = 0.8,
    doc_id: str = "d1",
    chunk_index: int = 0,
    source: str = "kb/doc.md",
    chunk_id: str | None = None,
) -> RetrievedChunk:
    """A retrieved chunk for node unit tests."""
    return RetrievedChunk(
        chunk_id=chunk_id or f"{doc_id}-{chunk_index}",
        doc_id=doc_id,
        title=title,
        source=source,
        section=section,
        os=os,
        chunk_index=chunk_index,
        text=text,
        score=score,
    )


class FakeTicketDesk:
    """In-memory TicketDesk with the same de-duplication contract as the real one."""

    def __init__(self) -> None:
        self.tickets: dict[str, dict] = {}
        self.closed_with: dict[str, str] = {}

    def find_open(self, *, session_id: str, user_id: str, topic: str):
        for t in self.tickets.values():
            if t["status"] == "open" and (
                t["session_id"] == session_id
                or (t["user_id"] == user_id and user_id != "anonymous" and t["topic"] == topic)
            ):
                return dict(t)
        return None

    def create(self, draft, *, session_id: str, user_id: str):
        ticket_id = f"DM-{len(self.tickets) + 1:06d}"
        ticket = dict(
            draft,
            id=ticket_id,
            status="open",
            session_id=session_id,
            user_id=user_id,
            created_at="2026-11-22T10:00:00+00:00",
            updated_at="2026-11-22T10:00:00+00:00",
            jira_key=None,
            jira_url=None,
            jira_error=None,
            comments=[],
        )
        self.tickets[ticket_id] = ticket
        return dict(ticket)

    def close(self, ticket_id: str, comment: str):
        ticket = self.tickets.get(ticket_id)
        if not ticket:
            return None
        ticket.update(status="closed", comments=ticket["comments"] + [comment])
        self.closed_with[ticket_id] = comment
        return dict(ticket)

    def list_for(self, *, user_id=None, session_id=None):
        return [
            dict(t)
            for t in reversed(list(self.tickets.values()))
            if (user_id and t["user_id"] == user_id) or (session_id and t["session_id"] == session_id)
        ]

    def get(self, ticket_id: str):
        ticket = self.tickets.get(ticket_id)
        return dict(ticket) if ticket else None


class FakeStatusChecker:
    """Returns a fixed StatusReport and counts the calls."""

    def __init__(self, report: dict) -> None:
        self.report = report
        self.calls = 0

    def current(self) -> dict:
        self.calls += 1
        return self.report


def status_report(
    *,
    ok: bool = True,
    incidents: list[dict] | None = None,
    components: list[dict] | None = None,
    error: str | None = None,
) -> dict:
    incidents = incidents or []
    return {
        "ok": ok,
        "page_url": "http://status.example.test",
        "indicator": "major" if incidents else "none",
        "description": "Partial outage" if incidents else "All Systems Operational",
        "components": components or [],
        "incidents": incidents,
        "maintenances": [],
        "checked_at": "2026-11-22T10:00:00+00:00",
        "error": error,
    }


def incident(name: str, components: list[str], status: str = "investigating", update: str = "") -> dict:
    return {
        "id": name.lower().replace(" ", "-"),
        "name": name,
        "status": status,
        "impact": "major",
        "components": components,
        "updated_at": "2026-11-22T09:55:00+00:00",
        "shortlink": "http://stspg.example/x",
        "latest_update": update,
    }


def support_state(flat: dict) -> dict:
    """A support state written flat, as the graph holds it: the session's keys (and `messages`) at the top,
    every other key in the turn record (graphs/support.py). A state that already has `turn` is returned as it is."""
    from graphs.support import SESSION_KEYS

    if "turn" in flat:
        return flat
    session = {k: v for k, v in flat.items() if k in SESSION_KEYS or k == "messages"}
    return {**session, "turn": {k: v for k, v in flat.items() if k not in session}}
