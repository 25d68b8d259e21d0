"""Protocols for every door to the outside world.

Nodes see only these; `app/adapters/` holds the real implementations and `tests/fakes.py`
the scripted doubles. The graph never knows which one it was given.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, Sequence, runtime_checkable

from graphs.records import ChunkRecord, DocumentInfo, ParsedDocument, RetrievedChunk


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

    def query(self, embedding: Sequence[float], k: int,
              where: dict[str, Any] | None = None) -> list[RetrievedChunk]: ...

    def get_document(self, doc_id: str) -> DocumentInfo | None: ...

    def list_documents(self) -> list[DocumentInfo]: ...

    def replace_document(self, info: DocumentInfo, chunks: Sequence[ChunkRecord],
                         embeddings: Sequence[Sequence[float]]) -> None:
        """Make `info.version` the document's content; readers see the old or the new, never a mix."""
        ...

    def delete_document(self, doc_id: str) -> bool: ...

    def count(self) -> int:
        """Chunks in the index; raises IndexUnavailable when the store cannot be reached."""
        ...


ChatRole = Literal["system", "user", "assistant"]


@dataclass(frozen=True)
class ChatMessage:
    role: ChatRole
    content: str


@runtime_checkable
class ChatModel(Protocol):
    """A generative LLM. Raises graphs.errors.LLMError on any failure, so callers can fall back."""

    name: str

    def complete(self, messages: Sequence[ChatMessage], *, max_tokens: int | None = None) -> str: ...


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
