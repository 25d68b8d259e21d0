"""The indexing graph: load → parse → chunk → embed → store (unchanged files stop after load; a run asked to
`embed_later` stops after chunk, and its caller embeds many documents at once and stores each)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Callable, Literal, NotRequired, TypedDict

from langgraph.graph import END, START, StateGraph

from core.ports import DocumentParser, Embedder, VectorIndex
from core.records import ChunkRecord, DocumentInfo, ParsedDocument, replace
from nodes.indexing.steps import chunk, embed, load, parse, store


# --- state: one source file per run ---------------------------------------------------------------
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


# --- context ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class IndexingContext:
    embedder: Embedder
    index: VectorIndex
    parser: DocumentParser
    chunk_max_tokens: int = 200
    embed_batch_size: int = 32
    # told (chunks embedded, of total) after every batch; what a job reports as progress. It may raise to stop
    # the run (a cancelled job) before the store step switches to the new version: the chunks a large document
    # had already written (invisible, see nodes/indexing/steps.embed) are removed again
    progress: Callable[[int, int], None] | None = None


# --- the graph -------------------------------------------------------------------------------------
def route_after_load(state: IndexingState) -> Literal["parse", "__end__"]:
    """Same bytes as the active version: nothing to do."""
    return "__end__" if state.get("status") == "unchanged" else "parse"


def route_after_chunk(state: IndexingState) -> Literal["embed", "__end__"]:
    """A batch caller embeds the chunks of many documents in one encoder call."""
    return "__end__" if state.get("embed_later") else "embed"


def build_indexing_graph():
    builder = StateGraph(
        IndexingState, context_schema=IndexingContext, input_schema=IndexingInput, output_schema=IndexingOutput
    )
    builder.add_node("load", load)
    builder.add_node("parse", parse)
    builder.add_node("chunk", chunk)
    builder.add_node("embed", embed)
    builder.add_node("store", store)
    builder.add_edge(START, "load")
    builder.add_conditional_edges("load", route_after_load)
    builder.add_edge("parse", "chunk")
    builder.add_conditional_edges("chunk", route_after_chunk)
    builder.add_edge("embed", "store")
    builder.add_edge("store", END)
    return builder.compile(name="indexing")
