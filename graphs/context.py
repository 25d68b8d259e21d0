"""Per-run context: the ports a node may use and the knobs that bound its work.

Built once by the app (or a test) and passed as `context=` to every graph invocation; never
read from the environment by a node.
"""

from __future__ import annotations

from dataclasses import dataclass

from graphs.ports import ChatModel, DocumentParser, Embedder, Redactor, VectorIndex


@dataclass(frozen=True)
class SupportContext:
    embedder: Embedder
    index: VectorIndex
    redactor: Redactor
    llm: ChatModel | None = None
    top_k: int = 5
    candidate_k: int = 20
    min_score: float = 0.40
    max_searches: int = 3
    history_turns: int = 10
    llm_max_tokens: int = 1024


@dataclass(frozen=True)
class IndexingContext:
    embedder: Embedder
    index: VectorIndex
    parser: DocumentParser
    chunk_max_tokens: int = 200
    embed_batch_size: int = 32
