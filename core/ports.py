"""Protocols for every door to the outside world.

Nodes see only these; `app/adapters/` holds the real implementations and `tests/fakes.py`
the scripted doubles. The graph never knows which one it was given.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any, Collection, Literal, Protocol, Sequence, runtime_checkable

from core.records import (
    ChunkRecord,
    DocumentInfo,
    ParsedDocument,
    QueryCoverage,
    RetrievedChunk,
    StatusReport,
    TermDocuments,
    Ticket,
    TicketDraft,
)


@runtime_checkable
class Embedder(Protocol):
    """Turns text into vectors (the local MiniLM model by default)."""

    dimension: int

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]: ...

    def embed_query(self, text: str) -> list[float]: ...

    def count_tokens(self, text: str) -> int:
        """Tokens the model would see for `text` (used to bound chunk size)."""
        ...


@runtime_checkable
class VectorIndex(Protocol):
    """Chunks with embeddings, grouped into documents whose active version switches atomically."""

    def query(
        self, embedding: Sequence[float], k: int, where: dict[str, Any] | None = None
    ) -> list[RetrievedChunk]: ...

    def similarities(self, embedding: Sequence[float], chunk_ids: Sequence[str]) -> dict[str, float]:
        """Cosine similarity of the query to each given chunk (ids not found are left out)."""
        ...

    def get_document(self, doc_id: str) -> DocumentInfo | None: ...

    def list_documents(self) -> list[DocumentInfo]: ...

    def replace_document(
        self, info: DocumentInfo, chunks: Sequence[ChunkRecord], embeddings: Sequence[Sequence[float]]
    ) -> None:
        """Make `info.version` the document's content; readers see the old or the new, never a mix."""
        ...

    def replace_documents(
        self, batch: Sequence[tuple[DocumentInfo, Sequence[ChunkRecord], Sequence[Sequence[float]]]]
    ) -> None:
        """`replace_document` for many documents in as few writes as the store allows; each still switches
        atomically (old or new, never a mix)."""
        ...

    def delete_document(self, doc_id: str) -> bool: ...

    def count(self) -> int:
        """Chunks in the index; raises IndexUnavailable when the store cannot be reached."""
        ...


@runtime_checkable
class StagingIndex(Protocol):
    """A vector index that can write a large document's chunks while it is embedded (invisible until switched)."""

    def stage_chunks(self, chunks: Sequence[ChunkRecord], embeddings: Sequence[Sequence[float]]) -> None: ...

    def switch_document(
        self, info: DocumentInfo, chunks: Sequence[ChunkRecord], embeddings: Sequence[Sequence[float]]
    ) -> None: ...

    def discard_staged(self, doc_id: str, version: str) -> None: ...


ChatRole = Literal["system", "user", "assistant"]


@dataclass(frozen=True)
class ChatMessage:
    role: ChatRole
    content: str


@runtime_checkable
class ChatModel(Protocol):
    """A generative LLM. Raises core.errors.LLMError on any failure, so callers can fall back."""

    name: str

    def complete(self, messages: Sequence[ChatMessage], *, max_tokens: int | None = None) -> str: ...


# Finding kinds that are personal data (policy decides where they go); every other kind is a secret
# (PASSWORD, API_KEY, PRIVATE_KEY, …), removed for every destination.
PERSONAL_DATA_KINDS = frozenset({"EMAIL", "PHONE", "CREDIT_CARD", "IBAN", "US_SSN", "IP_ADDRESS", "PERSON"})


@dataclass(frozen=True)
class Finding:
    """One redacted span: its type (PASSWORD, EMAIL, …) and the placeholder that replaced it."""

    kind: str
    placeholder: str


@dataclass(frozen=True)
class Redaction:
    text: str
    findings: tuple[Finding, ...] = field(default_factory=tuple)

    @property
    def changed(self) -> bool:
        return bool(self.findings)

    @property
    def kinds(self) -> list[str]:
        return sorted({f.kind for f in self.findings})


@runtime_checkable
class Redactor(Protocol):
    """Replaces secrets and personal data with typed placeholders."""

    def redact(self, text: str) -> Redaction: ...


@runtime_checkable
class DocumentParser(Protocol):
    """Bytes of an uploaded or bundled file → structured blocks. Raises DocumentRejected."""

    def parse(self, name: str, data: bytes) -> ParsedDocument: ...


@runtime_checkable
class StatusChecker(Protocol):
    """The company status page, parsed and cached. Never raises: failures come back as ok=False."""

    def current(self) -> StatusReport: ...


@dataclass(frozen=True)
class IntegrationResult:
    """What a configured lookup returned: decoded JSON (a dict or list) or text, and the HTTP status."""

    data: Any
    status: int = 200
    elapsed_ms: float = 0.0


@runtime_checkable
class Integration(Protocol):
    """A read-only lookup in another system (asset register, licence portal, HR directory …).

    `fetch` raises core.errors.IntegrationUnavailable with a reason a person understands."""

    name: str
    description: str
    needs_user: bool  # the lookup is about the caller: never made for an anonymous one

    def fetch(self, *, user: str, query: str) -> IntegrationResult: ...


@runtime_checkable
class StatusSource(Protocol):
    """The raw status page: Atlassian Statuspage's `/api/v2/summary.json`, decoded.

    `page_url` is the page people can open. `fetch_summary` raises core.errors.StatusUnavailable
    (with a reason a person understands) when the page cannot be reached or is not JSON.
    """

    page_url: str

    def fetch_summary(self) -> dict: ...


@runtime_checkable
class TicketDesk(Protocol):
    """Tickets: the local store is written first and always; Jira (when configured) is best-effort."""

    def find_open(self, *, session_id: str, user_id: str, topic: str) -> Ticket | None:
        """An open ticket for this session, or for this user on the same topic (de-duplication)."""
        ...

    def create(self, draft: TicketDraft, *, session_id: str, user_id: str) -> Ticket: ...

    def close(self, ticket_id: str, comment: str) -> Ticket | None: ...

    def list_for(self, *, user_id: str | None = None, session_id: str | None = None) -> list[Ticket]: ...

    def get(self, ticket_id: str) -> Ticket | None: ...


@runtime_checkable
class LexicalIndex(Protocol):
    """BM25 over the active chunks, kept in step with the vector index (same versions, same filters)."""

    def search(self, text: str, k: int, where: dict[str, Any] | None = None) -> list[RetrievedChunk]:
        """Best chunks by BM25; `score` (and `lexical_score`) is BM25 as a 0..1 share of the query's maximum."""
        ...

    def lexical_scores(self, text: str, chunk_ids: Sequence[str]) -> dict[str, float]:
        """The same 0..1 BM25 share for given chunks (dense-only candidates get their lexical evidence)."""
        ...

    def search_scored(
        self, text: str, k: int, where: dict[str, Any] | None = None, chunk_ids: Sequence[str] = ()
    ) -> tuple[list[RetrievedChunk], dict[str, float]]:
        """`search` and `lexical_scores(text, chunk_ids)` in one call: one round trip on a shared index."""
        ...

    def reading(self) -> AbstractContextManager[None]:
        """A block whose reads share what they can (one database connection on a shared index): a retrieval
        makes several lexical calls."""
        ...

    def neighbours(self, chunk_id: str, radius: int) -> list[RetrievedChunk]:
        """Chunks within `radius` positions of `chunk_id` in the same document section, in order (score 0)."""
        ...

    def document_chunks(self, doc_id: str, groups: frozenset[str] | None) -> list[RetrievedChunk]:
        """Every chunk of a document's active version in document order (score 0): the answer step reads the
        whole article, not only the chunks a search returned. Only chunks a caller in `groups` may read
        (core/filters.py `may_read`; None: every chunk, for the service's own use): the audience check of
        every reply path that shows a document's text, in the one place they all read it."""
        ...

    def query_coverage(self, text: str, doc_ids: Sequence[str]) -> QueryCoverage:
        """The share of the query's words (IDF-weighted) found in each document, and found nowhere at all:
        evidence for the answer confidence."""
        ...

    def read_slips(self, text: str) -> str:
        """`text` with each typing slip ("pasword") read as the word the documents hold ("password"): a word no
        chunk holds, no ordinary English word, one edit from one they hold. Unchanged when there is none."""
        ...

    def held_terms(self, terms: Collection[str]) -> set[str]:
        """Which of these index terms (stems, as the index's tokenizer makes them) some active chunk holds: is a
        word of a question anywhere in the knowledge base (nodes/support/foreign_terms.py)."""
        ...

    def term_documents(self, terms: Collection[str]) -> TermDocuments:
        """For each of these index terms the documents that hold it, and the number of documents: which of the
        knowledge base's products an article names (nodes/support/product_names.py)."""
        ...


@runtime_checkable
class Reranker(Protocol):
    """A cross-encoder: relevance of each passage to the query as a 0..1 probability."""

    name: str

    def score(self, query: str, passages: Sequence[str]) -> list[float]: ...


@runtime_checkable
class FeedbackSource(Protocol):
    """Votes on answers, turned into bounded per-chunk score multipliers (1.0 = no adjustment)."""

    def multipliers(self, keys: Sequence[str], query_embedding: Sequence[float] | None = None) -> dict[str, float]:
        """Multiplier for each key that has one, from the votes on questions like this one; keys with too
        few such votes are left out."""
        ...


@runtime_checkable
class LanguageDetector(Protocol):
    """Which language a text is in (a local model shipped in its package; nothing is downloaded)."""

    def detect(self, text: str) -> tuple[str, float]:
        """(ISO 639-1 code, probability 0..1) of the most likely language."""
        ...
