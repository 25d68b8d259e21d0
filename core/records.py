"""Plain data records that flow between nodes, adapters and the API.

Records that live in graph state are TypedDicts of JSON-safe values, so the SQLite
checkpointer can store them; parser output is a dataclass because it never enters state.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, NotRequired, TypedDict

OperatingSystem = Literal["windows", "macos", "linux"]
OPERATING_SYSTEMS: tuple[OperatingSystem, ...] = ("windows", "macos", "linux")
BlockKind = Literal["heading", "paragraph", "list_item", "code", "table"]
ContentType = Literal["pdf", "html", "markdown", "text", "rst", "docx", "pptx", "xlsx"]


@dataclass(frozen=True)
class Block:
    """One structural unit of a parsed document."""

    kind: BlockKind
    text: str
    level: int = 0  # heading level (1 = title); list nesting depth (list items, and blocks with in_list)
    ordered: bool = False  # list_item: part of a numbered list
    # paragraph/code/table that belongs to the list item before it at depth `level` (a step's command, its
    # sub-note): it stays under that step, and the list's numbering carries on after it
    in_list: bool = False


@dataclass
class ParsedDocument:
    title: str
    content_type: ContentType
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
    role: NotRequired[str]  # what the section is for: symptoms, cause, resolution … (core/roles.py)
    reader: NotRequired[str]  # whom the section addresses: user | admin (core/readers.py)
    text: str  # the body shown to users when quoted
    embed_text: str  # what is embedded: title and section path + body
    # document context, present only when the document was uploaded with one
    context_type: NotRequired[list[str]]
    content_domain: NotRequired[list[str]]
    document_category: NotRequired[list[str]]
    relevance_tags: NotRequired[list[str]]
    audience: NotRequired[list[str]]  # groups that may retrieve it; absent: everyone
    restricted: NotRequired[bool]  # it has an audience (a where clause cannot test a list for absence)


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
    score: float  # calibrated 0..1 confidence: cosine when dense-only, else the fused/reranked score
    # how the score came about (hybrid retrieval); absent from plain vector-index hits
    dense_score: NotRequired[float]  # cosine similarity to the query
    lexical_score: NotRequired[float]  # BM25 as a share of the query's best possible BM25 (0..1)
    rerank_score: NotRequired[float]  # cross-encoder probability, when a reranker is configured
    feedback_multiplier: NotRequired[float]  # learned from votes; 1.0 when there are not enough
    # × the title-as-question stage gave the score: it ranks, and the answer confidence reads the score without it
    title_boost: NotRequired[float]
    origin: NotRequired[str]  # dense | lexical | both | neighbour | article (read for the composed answer)
    role: NotRequired[str]  # the section's role (core/roles.py); absent on chunks indexed before roles
    reader: NotRequired[str]  # whom the section addresses: user | admin (core/readers.py); absent: user
    content_hash: NotRequired[str]  # the body's hash: feedback follows it across document versions
    # the document's context when it has one: filters match it, secondary fields rank by it
    context_type: NotRequired[list[str]]
    content_domain: NotRequired[list[str]]
    document_category: NotRequired[list[str]]
    relevance_tags: NotRequired[list[str]]
    audience: NotRequired[list[str]]  # groups that may retrieve it; absent: everyone


@dataclass(frozen=True)
class QueryCoverage:
    """How much of a query's wording a corpus holds (IDF-weighted shares, 0..1): per document, and nowhere."""

    documents: dict[str, float]  # doc_id → share of the query found anywhere in that document
    unseen: float  # share of the query that no chunk of the corpus contains (product names it does not cover …)
    terms: int  # distinct query words counted


@dataclass(frozen=True)
class TermDocuments:
    """Which documents hold each of some index terms, and how many documents the index holds in all."""

    documents: int  # documents in the index
    holding: dict[str, frozenset[str]]  # term → ids of the documents some chunk of which holds it (held terms only)


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
    # document context, present only when the document was uploaded with one
    context_type: NotRequired[list[str]]
    content_domain: NotRequired[list[str]]
    document_category: NotRequired[list[str]]
    relevance_tags: NotRequired[list[str]]
    audience: NotRequired[list[str]]  # groups that may retrieve it; absent: everyone
    description: NotRequired[str]
    # sections that tell the reader to send credentials, codes or payments, or to turn off security software
    # (core/document_screen.py): listed for the admin, quoted with a warning, withheld from walkthroughs
    flagged_sections: NotRequired[list[str]]


class ArticleRef(TypedDict):
    """A document a search found, with what the answer step needs to read it whole (graph state, JSON-safe)."""

    doc_id: str
    title: str
    source: str
    score: float  # the article's aggregated search score (nodes/support/compose.py rank_articles)
    answerable: float  # how likely the knowledge base answers the message from it (nodes/support/confidence.py), 0..1
    confidence: float  # how likely the answer from it is right, 0..1
    hits: list[dict]  # [{chunk_id, score, section, role}] the search returned from it, best first


class Source(TypedDict):
    """A citation in an answer: what the user sees as `[n] title — source`."""

    n: int
    title: str
    source: str
    section: str
    chunk_id: str
    score: float
    doc_id: NotRequired[str]  # for the download link


# --- status page -------------------------------------------------------------------------------
class StatusComponent(TypedDict):
    name: str
    status: str  # operational | degraded_performance | partial_outage | major_outage | under_maintenance


class StatusIncident(TypedDict):
    id: str
    name: str
    status: str  # investigating | identified | monitoring | resolved | postmortem | scheduled | in_progress | …
    impact: str  # none | minor | major | critical | maintenance
    components: list[str]  # names of the affected components
    updated_at: str
    shortlink: str
    latest_update: str  # body of the newest incident update, "" if none


class StatusReport(TypedDict):
    """The parsed company status page; `ok` False means it could not be checked (see `error`)."""

    ok: bool
    page_url: str
    indicator: str  # none | minor | major | critical | maintenance | unknown
    description: str
    components: list[StatusComponent]  # every component with its state
    incidents: list[StatusIncident]  # unresolved incidents
    maintenances: list[StatusIncident]  # scheduled or in-progress maintenance
    checked_at: str
    error: str | None


# --- tickets -------------------------------------------------------------------------------------
class TroubleshootingStep(TypedDict):
    step: str
    outcome: str  # pending | done (a step done, or a preamble that fixes nothing by itself) | failed | resolved


class TicketDraft(TypedDict):
    """What the user is shown before confirming; everything in it is already redacted."""

    summary: str
    description: str
    priority: str  # low | medium | high | critical
    topic: str  # the issue in a few words, used for de-duplication
    os: str
    steps_tried: list[TroubleshootingStep]
    conversation: list[dict]  # [{role, content}], redacted
    kind: NotRequired[str]  # incident (something is broken) | request (something new) | handoff (a person, please)


class Ticket(TicketDraft):
    id: str  # local id, e.g. "DM-1A2B3C"
    status: str  # open | closed
    session_id: str
    user_id: str
    created_at: str
    updated_at: str
    jira_key: str | None
    jira_url: str | None
    jira_error: str | None  # why Jira was not updated, when it was not
    jira_status: str | None  # the linked issue's status name in Jira when last seen ("In Progress")
    comments: list[str]


class Troubleshooting(TypedDict):
    """An interactive troubleshooting workflow; lives in the session until resolved, exited or escalated."""

    issue: str
    topic: str
    steps: list[TroubleshootingStep]
    current: int  # index of the step the user is on
    failed: int
    asked_outcome: bool  # the outcome of the current step was already asked for once
    # completed: every step shown, the outcome not yet told; a "still broken" then escalates, "it works" resolves
    status: Literal["in_progress", "paused", "completed", "resolved", "exited", "escalated"]
    source: dict  # {title, source, chunk_id} the steps came from
    os: str


class TicketRef(TypedDict):
    id: str
    url: str | None
    status: str
    jira_key: str | None
    priority: NotRequired[str]  # low | medium | high | critical
    kind: NotRequired[str]  # incident | request | handoff, on the turn that created it


# the reducer of per-turn lists in graph state: the newest value wins (not appended)
def replace(_old: list, new: list) -> list:
    """Reducer for per-turn lists: the newest value wins."""
    return new
