"""Request and response models of the HTTP API."""

from __future__ import annotations

import re
import unicodedata
from datetime import UTC
from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator

from core.errors import InvalidFilter
from core.filters import FILTER_FIELDS, parse_filter
from core.records import OperatingSystem, TicketDraft, Troubleshooting
from core.text import CONTROL, INVISIBLE

# a terminal's escape sequences pasted with a log (`\x1b[31mERROR\x1b[0m`, `\x1b]0;title\x07`): the whole
# sequence goes, not only its ESC, so no `[31m` is left in the message, the ticket or the session
_ESCAPE_SEQUENCE = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]{0,256}(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")
_OS_ALIASES = {
    "windows": "windows",
    "win": "windows",
    "win10": "windows",
    "win11": "windows",
    "windows 10": "windows",
    "windows 11": "windows",
    "macos": "macos",
    "mac": "macos",
    "osx": "macos",
    "os x": "macos",
    "darwin": "macos",
    "linux": "linux",
    "ubuntu": "linux",
    "debian": "linux",
    "fedora": "linux",
}


def clean_message(text: str) -> str:
    """Drop control characters (keep newlines and tabs) and surrounding whitespace; "" when nothing a person
    could see is left (only joiners, combining marks or spaces)."""
    cleaned = INVISIBLE.sub("", CONTROL.sub("", _ESCAPE_SEQUENCE.sub("", text))).strip()
    if cleaned and not any(unicodedata.category(c)[0] in "LNPS" for c in cleaned):
        return ""
    return cleaned


class ChatRequest(BaseModel):
    message: str = Field(..., description="What the employee typed.")
    session_id: str | None = Field(
        None, pattern=r"^[A-Za-z0-9._:\-]{1,128}$", description="Continue this conversation; omit to start a new one."
    )
    user_os: OperatingSystem | None = Field(None, description="windows, macos or linux, if known.")

    @field_validator("user_os", mode="before")
    @classmethod
    def _normalise_os(cls, value):
        if value is None or value == "":
            return None
        if not isinstance(value, str) or value.strip().lower() not in _OS_ALIASES:
            raise ValueError("user_os must be one of windows, macos, linux")
        return _OS_ALIASES[value.strip().lower()]

    collections: list[str] | None = Field(
        None,
        max_length=20,
        description="Knowledge collections to answer from, in order (names from the "
        "configuration file); omit for all of them.",
    )
    response_mode: str | None = Field(
        None,
        description="RAG_ONLY, LLM_ONLY, HYBRID, SMART_FALLBACK, RAG_PRIORITY or LLM_PRIORITY for this turn; "
        "omit for the configured default.",
    )
    debug: bool = Field(False, description="Return the response rule chosen and the profile it matched.")
    channel: Literal["web", "api", "cli", "slack", "teams"] = Field(
        "api",
        description="Where the message was typed (the chat page sends web, `deskmate ask` cli): insights count by it.",
    )
    system: str | None = Field(
        None,
        max_length=20_000,
        description="A system message: persona plus directives "
        "(RESPONSE_MODE: HYBRID, MIN_CONFIDENCE: 0.6 … or a <config> block).",
    )

    @field_validator("response_mode", mode="before")
    @classmethod
    def _known_mode(cls, value):
        from app.config_file import RESPONSE_MODES

        if value is None or value == "":
            return None
        if not isinstance(value, str) or value.strip().upper() not in RESPONSE_MODES:
            raise ValueError(f"response_mode must be one of {', '.join(RESPONSE_MODES)}")
        return value.strip().upper()

    filters: dict[str, Any] | None = Field(
        None,
        description=f'Search only documents whose context matches, e.g. {{"context_type": ["how-to"]}}. '
        f"Fields: {', '.join(FILTER_FIELDS)}; primary fields must match, secondary ones rank.",
    )

    @field_validator("filters", mode="before")
    @classmethod
    def _valid_filters(cls, value):
        return validated_filters(value)


def validated_filters(value: Any) -> dict[str, list[str]] | None:
    """A search filter checked and normalised (core/filters.py); unknown fields are an error, not ignored."""
    if value is None or value == {}:
        return None
    try:
        return parse_filter(value).as_dict() or None
    except InvalidFilter as exc:
        raise ValueError(str(exc)) from exc


class SourceOut(BaseModel):
    n: int
    title: str
    source: str
    section: str
    chunk_id: str
    score: float
    doc_id: str = Field("", description="GET /documents/{doc_id}/content downloads the cited document.")


class SectionOut(BaseModel):
    section: str = Field(description="Heading path below the title, ' > '-joined; empty for the lead.")
    text: str = Field(description="The section's text as indexed (plain text with Markdown lists).")
    chunk_ids: list[str] = Field(
        default_factory=list,
        description="Its chunks, in order: a cited source's `chunk_id` tells which of two same-named sections it is.",
    )


class DocumentSections(BaseModel):
    """A document as deskmate indexed it, for the web UI's document view."""

    doc_id: str
    title: str
    source: str
    content_type: str
    download: str = Field(description="Where the original is downloaded (GET /documents/{doc_id}/content).")
    sections: list[SectionOut]


class TroubleshootingOut(BaseModel):
    issue: str
    step: int  # 1-based number of the current step
    total: int
    status: str  # in_progress | paused | completed (every step shown, outcome not told) | resolved | exited | escalated
    steps: list[dict]  # [{step, outcome}]

    @classmethod
    def of(cls, flow: Troubleshooting) -> TroubleshootingOut:
        """The session's walkthrough as the chat envelope shows it."""
        return cls(
            issue=flow["issue"],
            step=min(flow["current"] + 1, len(flow["steps"])),
            total=len(flow["steps"]),
            status=flow["status"],
            steps=flow["steps"],
        )


class TicketRefOut(BaseModel):
    """The ticket of this conversation, as the chat envelope shows it."""

    id: str
    url: str | None = None
    status: str
    jira_key: str | None = None


class TicketOfferOut(BaseModel):
    summary: str
    priority: str
    description: str
    steps_tried: int
    includes_conversation: bool = True

    @classmethod
    def of(cls, offer: TicketDraft) -> TicketOfferOut:
        """The pending ticket draft as the chat envelope shows it."""
        return cls(
            summary=offer["summary"],
            priority=offer["priority"],
            description=offer["description"],
            steps_tried=len(offer["steps_tried"]),
        )


class IncidentOut(BaseModel):
    name: str
    status: str
    impact: str
    components: list[str]
    updated_at: str
    shortlink: str
    latest_update: str


class StageTimingsOut(BaseModel):
    """Where the time of one turn went (ms): embedding the query, searching, deciding, writing the reply."""

    embedding_ms: float
    retrieval_ms: float
    decision_ms: float = Field(description="decide (and the status-page check it asked for)")
    generation_ms: float = Field(description="answer, clarify, troubleshoot, ticket or search_tickets")
    total_ms: float = Field(description="the whole graph run")


class ChatResponse(BaseModel):
    answer: str
    session_id: str
    action: str
    needs_input: bool
    is_clarifying: bool
    sources: list[SourceOut]
    redaction_notice: str | None = None
    fallback_notice: str | None = None
    answer_path: str | None = Field(None, description='"fact" when a fact question got one short cited sentence.')
    integration: str | None = Field(None, description="With action use_integration: the configured lookup used.")
    confidence: float | None = Field(
        None,
        description="How likely the knowledge-base article this turn found is the right one (0..1, calibrated "
        "on development data: 0.7 means right about 7 times in 10); null when nothing was searched.",
    )
    question_type: str | None = Field(None, description="What the message asked: fix, how-to, why, where, what-is.")
    user_os: OperatingSystem | None = None
    troubleshooting: TroubleshootingOut | None = None
    ticket: TicketRefOut | None = None
    ticket_event: str = ""
    ticket_offer: TicketOfferOut | None = None
    incidents: list[IncidentOut] = []
    trace_id: str
    message_id: str | None = Field(None, description="Id of this assistant message: send it to POST /feedback.")
    timings: StageTimingsOut | None = Field(None, description="Per-stage milliseconds of this turn.")
    answer_policy: dict | None = Field(None, description="With debug: the response rule chosen and its profile.")
    mode_notice: str | None = Field(None, description="What the response mode changed (general knowledge used …).")
    directive_warnings: list[str] = Field([], description="System-message directives that were ignored, and why.")

    @field_validator("answer_path", "integration", "question_type", mode="before")
    @classmethod
    def _empty_is_null(cls, value):
        return value or None  # the turn record's "" (not set this turn) is the API's null


class DocumentOut(BaseModel):
    id: str
    title: str
    source: str
    content_type: str
    chunks: int
    size_bytes: int
    version: str
    indexed_at: str
    context: DocumentContextOut | None = None
    audience: list[str] = Field([], description="Groups that may retrieve this document; empty: everyone.")
    flagged_sections: list[str] = Field(
        [],
        description="Sections that tell the reader to send credentials, codes or payments to someone, or to turn off "
        "security software: quoted with a warning and left out of walkthroughs. Check them.",
    )


class DocumentContextOut(BaseModel):
    """A document's context, given at upload; search filters match it."""

    context_type: list[str]
    content_domain: list[str]
    document_category: list[str]
    relevance_tags: list[str] = []
    description: str | None = None


class JobProgress(BaseModel):
    done: int = Field(description="Chunks embedded so far")
    total: int = Field(description="Chunks of the document(s) being indexed (0 until they are parsed)")


class JobOut(BaseModel):
    id: str
    kind: Literal["index_upload", "sync_source", "sync_kb"]
    subject: str = Field("", description="What it works on: the uploaded file's name, the source id, the KB folder")
    state: Literal["queued", "running", "done", "failed", "cancelled"]
    progress: JobProgress
    attempts: int = Field(description="Runs started; a run whose worker died is started again")
    error: str | None = Field(None, description="Why it failed or was cancelled")
    result: dict | None = Field(None, description="index_upload: {status, document}; a sync: its counts")
    cancel_requested: bool = False
    created_at: str
    started_at: str | None = None
    finished_at: str | None = None
    location: str = Field(description="GET this for the job's state")


class JobList(BaseModel):
    jobs: list[JobOut]


def _iso(ts: float | None) -> str | None:
    from datetime import datetime

    return datetime.fromtimestamp(ts, UTC).isoformat(timespec="seconds") if ts else None


def job_out(job: dict) -> JobOut:
    result = job.get("result")
    if job["kind"] == "index_upload" and result and result.get("document"):
        result = {**result, "document": document_out(result["document"]).model_dump()}
    payload = job.get("payload") or {}
    subject = payload.get("filename") or payload.get("source_id") or payload.get("kb_dir") or ""
    return JobOut(
        id=job["id"],
        kind=job["kind"],
        subject=str(subject),
        state=job["state"],
        progress=JobProgress(done=job["progress_done"], total=job["progress_total"]),
        attempts=job["attempts"],
        error=job.get("error"),
        result=result,
        cancel_requested=job["cancel_requested"],
        created_at=_iso(job["created_at"]),
        started_at=_iso(job.get("started_at")),
        finished_at=_iso(job.get("finished_at")),
        location=f"/jobs/{job['id']}",
    )


class UploadResponse(BaseModel):
    status: Literal["new", "replaced", "unchanged", "queued", "running", "failed", "cancelled"] = Field(
        description="What indexing did (201/200), or the job's state while it runs (202); in a batch, also "
        "failed or cancelled (the job says why)"
    )
    document: DocumentOut | None = Field(None, description="The indexed document, once its job is done")
    job: JobOut | None = Field(None, description="The indexing job (GET its location for progress)")


class BatchUploadResponse(BaseModel):
    uploads: dict[str, UploadResponse] = Field(description="Each article of the batch by file name, as one upload")
    fragments: list[str] = Field(
        description="Files only included by the batch's articles: read inside them, not indexed on their own"
    )


class DocumentList(BaseModel):
    documents: list[DocumentOut]


def document_out(info: dict) -> DocumentOut:
    return DocumentOut(
        id=info["doc_id"],
        title=info["title"],
        source=info["source"],
        content_type=info["content_type"],
        chunks=info["chunk_count"],
        size_bytes=info["size_bytes"],
        version=info["version"],
        indexed_at=info["indexed_at"],
        context=DocumentContextOut(**{k: info[k] for k in DocumentContextOut.model_fields if k in info})
        if info.get("context_type")
        else None,
        audience=list(info.get("audience") or []),
        flagged_sections=list(info.get("flagged_sections") or []),
    )


# --- tickets -----------------------------------------------------------------------------------
class TicketStepOut(BaseModel):
    step: str
    outcome: str


class TicketMessageOut(BaseModel):
    role: str
    content: str


class TicketSummaryOut(BaseModel):
    """A ticket as listed: what it is about and where it stands."""

    id: str
    status: Literal["open", "closed"]
    summary: str
    priority: str
    topic: str
    os: str
    session_id: str
    created_at: str
    updated_at: str
    jira_key: str | None = None
    jira_url: str | None = None
    jira_status: str | None = Field(None, description="The linked Jira issue's status when last seen.")
    jira_error: str | None = Field(None, description="Why Jira was not updated, when it was not.")


class TicketOut(TicketSummaryOut):
    """One ticket with everything it holds (all of it redacted before it was stored)."""

    description: str
    steps_tried: list[TicketStepOut]
    conversation: list[TicketMessageOut]
    comments: list[str]


class TicketList(BaseModel):
    tickets: list[TicketSummaryOut]
    jira_enabled: bool = Field(description="Whether statuses were refreshed from Jira (when it answered).")


class StatusComponentOut(BaseModel):
    name: str
    status: str = Field(
        description="operational, degraded_performance, partial_outage, major_outage or under_maintenance"
    )


class StatusIncidentOut(BaseModel):
    id: str
    name: str
    status: str = Field(description="investigating, identified, monitoring … (maintenance: scheduled, in_progress)")
    impact: str = Field(description="none, minor, major, critical or maintenance")
    components: list[str]
    updated_at: str
    shortlink: str
    latest_update: str


class StatusReportOut(BaseModel):
    """GET /status: the parsed company status page; ok=false means it could not be checked (see error)."""

    ok: bool
    page_url: str
    indicator: str = Field(description="none, minor, major, critical, maintenance; unknown when not checked")
    description: str
    components: list[StatusComponentOut]
    incidents: list[StatusIncidentOut]
    maintenances: list[StatusIncidentOut]
    checked_at: str
    error: str | None = None


# --- search (admins testing retrieval) and feedback ---------------------------------------------
class SearchRequest(BaseModel):
    query: str = Field(..., min_length=1, max_length=4000, description="What to search for.")
    filters: dict[str, Any] | None = Field(None, description="Document-context filter, as on POST /chat.")
    top_k: int = Field(10, ge=1, le=50, description="Results to return.")
    user_os: OperatingSystem | None = Field(None, description="Leave out chunks written for another OS.")

    @field_validator("filters", mode="before")
    @classmethod
    def _valid_filters(cls, value):
        return validated_filters(value)

    @field_validator("user_os", mode="before")
    @classmethod
    def _normalise_os(cls, value):
        return ChatRequest._normalise_os(value)


class SearchHit(BaseModel):
    rank: int
    chunk_id: str
    doc_id: str
    title: str
    section: str
    source: str
    text: str
    score: float = Field(description="Calibrated 0..1 confidence (compared with DESKMATE_MIN_SCORE).")
    dense_score: float | None = None
    lexical_score: float | None = None
    rerank_score: float | None = None
    feedback_multiplier: float | None = None
    origin: str | None = Field(None, description="dense, lexical, both or neighbour")
    audience: list[str] | None = Field(None, description="Groups that may retrieve it; absent: everyone.")
    confident: bool = Field(description="score ≥ DESKMATE_MIN_SCORE: the answer step would quote it.")
    article_score: float | None = Field(
        None, description="The article's score as the chat ranks articles; results are grouped by article, best first."
    )


class SearchResponse(BaseModel):
    query: str
    searched_as: str | None = Field(
        None, description="The query as searched when a typing slip in it was read as a word the documents hold."
    )
    filters: dict[str, list[str]] | None
    results: list[SearchHit]
    took_ms: float


class FeedbackRequest(BaseModel):
    session_id: str = Field(..., pattern=r"^[A-Za-z0-9._:\-]{1,128}$", description="session_id of the /chat reply.")
    message_id: str = Field(..., pattern=r"^[A-Za-z0-9._:\-]{1,128}$", description="message_id of the /chat reply.")
    rating: Literal["up", "down"]
    reason: str | None = Field(None, max_length=1000, description="Optional: what was wrong or right.")


class FeedbackResponse(BaseModel):
    status: Literal["recorded", "updated"]
    message_id: str
    rating: Literal["up", "down"]
    chunks: int = Field(description="Cited passages this vote counts for.")
