"""Plain data records that flow between nodes, adapters and the API.

Records that live in graph state are TypedDicts of JSON-safe values, so the SQLite
checkpointer can store them; parser output is a dataclass because it never enters state.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, TypedDict

OperatingSystem = Literal["windows", "macos", "linux"]
OPERATING_SYSTEMS: tuple[OperatingSystem, ...] = ("windows", "macos", "linux")


@dataclass(frozen=True)
class Block:
    """One structural unit of a parsed document."""

    kind: Literal["heading", "paragraph", "list_item", "code", "table"]
    text: str
    level: int = 0  # heading level (1 = title) or list nesting depth
    ordered: bool = False  # list_item: part of a numbered list


@dataclass
class ParsedDocument:
    title: str
    content_type: Literal["pdf", "html", "markdown", "text"]
    blocks: list[Block] = field(default_factory=list)

    def text_length(self) -> int:
        return sum(len(b.text) for b in self.blocks)


class ChunkRecord(TypedDict):
    """A chunk as stored in the vector index."""

    chunk_id: str
    doc_id: str
    version: str
    title: str
    source: str
    section: str  # heading path below the title, " > "-joined; "" for the document's lead
    os: str  # "windows" | "macos" | "linux" | "" when the chunk is not OS-specific
    chunk_index: int
    content_hash: str
    text: str  # the body shown to users when quoted
    embed_text: str  # what is embedded: title and section path + body


class RetrievedChunk(TypedDict):
    """A chunk returned by a search, with its cosine similarity."""

    chunk_id: str
    doc_id: str
    title: str
    source: str
    section: str
    os: str
    chunk_index: int
    text: str
    score: float


class DocumentInfo(TypedDict):
    """One indexed document (its active version)."""

    doc_id: str
    version: str
    title: str
    source: str
    content_type: str
    chunk_count: int
    size_bytes: int
    indexed_at: str


class Source(TypedDict):
    """A citation in an answer: what the user sees as `[n] title — source`."""

    n: int
    title: str
    source: str
    section: str
    chunk_id: str
    score: float
