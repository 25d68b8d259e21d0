"""Per-run context: the ports a node may use and the knobs that bound its work.

Built once by the app (or a test) and passed as `context=` to every graph invocation; never
read from the environment by a node.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Literal, Mapping

if TYPE_CHECKING:
    from graphs.policy_config import AnswerPolicy
    from nodes.actions import ActionCatalogue
    from nodes.confidence import ConfidenceModel

from graphs.ports import (ChatModel, DocumentParser, Embedder, FeedbackSource, Integration, LanguageDetector,
                          LexicalIndex, Redactor, Reranker, StatusChecker, TicketDesk, VectorIndex)


@dataclass(frozen=True)
class RetrievalConfig:
    """Knobs of the retrieval pipeline (nodes/retrieval.py). Every stage can be switched off, which is
    how bench/retrieval.py measures what each one buys. Defaults were tuned on tv-dev only."""

    lexical: bool = True  # BM25 beside the dense index (needs SupportContext.lexical)
    fusion: Literal["weighted", "rrf"] = "weighted"  # how the two rankings are merged
    dense_weight: float = 0.3  # score = w·cosine + (1 − w)·BM25 share; also the confidence under rrf
    rrf_k: int = 60  # reciprocal-rank constant (fusion="rrf")
    aggregate_sections: bool = True  # rank sections by their best chunk; cap chunks per section
    max_chunks_per_section: int = 2
    section_bonus: float = 0.0  # + bonus × the section's second-best chunk score (0: max only)
    neighbour_radius: int = 1  # chunks either side of a confident top hit added for context (0: off)
    neighbour_decay: float = 0.9  # a neighbour's score = top score × decay
    rerank_top_n: int = 30  # candidates a configured cross-encoder rescores
    feedback: bool = True  # apply learned per-chunk multipliers (needs SupportContext.feedback)
    secondary_boost: float = 0.1  # filters: score × (1 + boost × share of secondary fields matched)


@dataclass(frozen=True)
class SupportContext:
    embedder: Embedder
    index: VectorIndex
    redactor: Redactor
    llm: ChatModel | None = None
    status: StatusChecker | None = None  # None: no status page configured
    tickets: TicketDesk | None = None  # None: tickets cannot be created (offered as contact info instead)
    lexical: LexicalIndex | None = None  # None: dense retrieval only
    reranker: Reranker | None = None  # None (default): no cross-encoder
    feedback: FeedbackSource | None = None  # None: votes do not adjust retrieval
    retrieval: RetrievalConfig = field(default_factory=RetrievalConfig)
    top_k: int = 5
    candidate_k: int = 20
    min_score: float = 0.40
    max_searches: int = 3
    history_turns: int = 10
    llm_max_tokens: int = 1024
    # the answer policy: response rules, knowledge collections, named LLMs; None: built-in defaults
    policy: "AnswerPolicy | None" = None
    main_collection: str = "kb"  # the policy's collection that `index` holds (retrieved by the graph itself)
    collections: Mapping[str, Any] = field(default_factory=dict)  # other collections: name → hybrid index
    llms: Mapping[str, "ChatModel | None"] = field(default_factory=dict)  # "name" / "name:model" → model
    max_turns: int = 20  # past this, a still-unresolved conversation is offered a ticket
    max_failed_steps: int = 3  # troubleshooting escalates after this many failed steps
    fact_path: bool = False  # fact questions get a short extractive span (nodes/fact.py) when confident
    fact_min_confidence: float = 0.6  # below this the answer node falls through to its normal path
    # the actions offered to the decision LLM per message (nodes/actions.py); None: all of them, no selection
    actions: "ActionCatalogue | None" = None
    # configured read-only lookups (DESKMATE_CONFIG `integrations:`), by name; each is also in `actions`
    integrations: Mapping[str, Integration] = field(default_factory=dict)
    # without an LLM, a message goes to an integration when its closest example is at least this similar
    # (cosine) and closer than every built-in action's examples
    integration_min_score: float = 0.6
    # which language a message is in; None: every message is read as English (nodes/language.py)
    language: LanguageDetector | None = None
    # how a person at the service desk is reached ("call +1 555 0100 or open https://…"), told to users who ask
    # for one; "": a ticket carrying the conversation is the way to a person
    handoff_contact: str = ""
    # the calibrated answer confidence (nodes/confidence.py); None: the best chunk's score stands in for it
    # and `min_score` is the answer threshold (how deskmate answered before the model existed)
    confidence_model: "ConfidenceModel | None" = None
    answer_threshold: float | None = None  # None: the model's own threshold, chosen on development data

    def confidence_threshold(self) -> float:
        """The confidence at or above which deskmate answers from the knowledge base."""
        if self.answer_threshold is not None:
            return self.answer_threshold
        return self.confidence_model.threshold if self.confidence_model is not None else self.min_score


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
