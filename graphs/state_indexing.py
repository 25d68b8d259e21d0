"""Typed state of the indexing graph: one source file per run."""

from __future__ import annotations

from typing import Annotated, Literal, NotRequired, TypedDict

from graphs.records import ChunkRecord, DocumentInfo, ParsedDocument
from graphs.state import replace


class IndexingInput(TypedDict):
    source: str  # stable name: "kb/vpn-setup.md", "uploads/guide.pdf"
    data: bytes
    document_context: NotRequired[dict]  # document context (graphs/filters.validate_context); {} or absent: none
    # the name the parser reads the type from when `source` is a link ("https://wiki…/pages/123" → "page.html")
    filename: NotRequired[str]
    # stop after chunking: the caller embeds many documents' chunks in one encoder call and stores each
    # document itself (IndexingService.index_many); a sync of many small pages is otherwise bound by tiny batches
    embed_later: NotRequired[bool]


class IndexingState(IndexingInput, total=False):
    doc_id: str
    version: str
    status: Literal["new", "replaced", "unchanged"]
    document: ParsedDocument
    chunks: Annotated[list[ChunkRecord], replace]
    embeddings: Annotated[list[list[float]], replace]
    staged: bool  # the embed step already wrote the chunks (invisible): the store step only switches
    document_info: DocumentInfo


class IndexingOutput(TypedDict, total=False):
    doc_id: str
    status: Literal["new", "replaced", "unchanged"]
    document_info: DocumentInfo
    # set when the run was asked to `embed_later`: what the caller embeds and stores
    version: str
    document: ParsedDocument
    chunks: list[ChunkRecord]
