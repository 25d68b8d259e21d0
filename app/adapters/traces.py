"""The local trace store: every graph run (support, indexing, status), node by node, in the relational store.

- `RunRecorder` is a LangChain callback handler attached to one graph run (via `RecordingTracer`). It
  notes, in the request thread and cheaply, the ordered node path, each node's start/end, its input
  keys and (size-capped) output, the decision and its reasoning, retrieval candidates with scores, LLM
  calls with token counts, errors and fallbacks; at the end of the run it hands one record to the store.
- `TraceStore` writes records from a bounded queue on one writer thread (app/storage: SQLite embedded, Postgres shared by replicas), so
  a chat never waits for the database or for the redactor: every string of a record passes the `trace`
  destination's redactor on that thread before it is written. A full queue drops the record (counted,
  logged), never blocks. Runs older than the retention or beyond the row cap are pruned periodically.
- `RecordingTracer` wraps the configured tracer (Langfuse or none) so every `run_config` gets both.

Never stored: embeddings (replaced by "<384 floats>"), raw bytes ("<n bytes>"), chunk bodies. The retrieval
candidates are kept once, under `retrieval`; node outputs and the run's output cite them (and the articles)
by id. The binary `packed` column holds the redacted record zlib-compressed without what the row's columns
and its node list give back (`pack_record`, `_slim`; `get` rebuilds it whole); rows written before it hold
their whole record in the text `record` column (base85 of the compressed JSON, or plain JSON), and `get`
reads those too.
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import re
import threading
import time
import zlib
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Callable, Iterable

from langchain_core.callbacks import BaseCallbackHandler
from sqlalchemy import delete, func, select
from sqlalchemy.engine import Connection, RowMapping

from app.adapters.trace_provenance import (
    DOCUMENTS_KEY,
    MAX_ARTICLES,
    MAX_DOCUMENT_TEXTS,
    UPSTREAM_KEY,
    Provenance,
    TraceRedactors,
    support_phrases,
    without_evidence,
)
from app.adapters.work_queue import PendingQueue
from app.storage import Database
from app.storage.database import reclaim_sqlite
from app.storage.schema import run_feedback, runs
from core.ports import Redactor
from graphs.support import flat_values

log = logging.getLogger(__name__)

MAX_VALUE_CHARS = 1500  # a longer string is cut (at whitespace) before it is redacted and stored
MAX_ITEMS = 30  # list items kept per value
MAX_DEPTH = 6
MAX_PENDING = 512  # records waiting for the writer; beyond this a record is dropped, never waited for
PRUNE_EVERY_S = 600.0
# the writer also prunes once this share of the size cap has been written since the last prune, so a busy
# server overshoots DESKMATE_TRACE_MAX_MB by about this share, not by ten minutes of traffic
PRUNE_AFTER_SHARE = 0.1
# stage of the /chat `timings` each support-graph node counts towards (the per-stage latency the reply reports)
STAGES = {
    "embed_query": "embedding_ms",
    "retrieve": "retrieval_ms",
    "decide": "decision_ms",
    "check_status": "decision_ms",
    "answer": "generation_ms",
    "clarify": "generation_ms",
    "troubleshoot": "generation_ms",
    "ticket": "generation_ms",
    "search_tickets": "generation_ms",
    "use_integration": "generation_ms",
    "converse": "generation_ms",
    "translate": "generation_ms",
    "localize": "generation_ms",
}
ARTICLE_KEYS = ("title", "source", "score", "answerable", "confidence")
CANDIDATE_KEYS = (
    "chunk_id",
    "doc_id",
    "title",
    "source",
    "section",
    "os",
    "score",
    "dense_score",
    "lexical_score",
    "rerank_score",
    "feedback_multiplier",
    "origin",
    "role",
    "reader",
)
# values under these keys come from indexed documents: the `documents` policy (secrets) applies, not the
# trace policy, whose names model misreads titles such as "Can't Connect, Login Failed" as a person
DOCUMENT_KEYS = frozenset({"title", "section", "source"})
# The provenance of a record's strings, by the key they sit under. Only text that came from a person (the
# message, queries built from it, the conversation) or from a document (titles, sections, sources, answers quoting
# them) can hold personal data or secrets, so only that goes through a redactor; what the system made by
# construction is written as it is:
# - ids and enums: these keys, and keys ending in one of _SYSTEM_SUFFIXES (chunk_id, input_keys, response_mode …);
# - placeholders `shape` wrote for what it left out ("<384 floats>", "<12 bytes>");
# - per-turn lists that `_by_ref` turned into ids (retrieved_chunks, articles: their dict entries keep their keys).
# A key that is none of these is redacted: a new field is safe before anyone classifies it.
_SYSTEM_KEYS = frozenset(
    {
        "chunk_id",
        "doc_id",
        "trace_id",
        "action",
        "intent",
        "decided_by",
        "origin",
        "os",
        "user_os",
        "status",
        "small_talk",
        "dialogue_act",
        "language",
        "reply_kind",
        "ticket_event",
        "content_hash",
        "version",
        "graph",
        "content_type",
        "name",
        "node",
        "role",
        "reader",
        "started_at",
        "model",
        "rating",
        "path",
        "tags",
        "llm",
        "collection",
        "selected_collections",
        "rag_result",
        "retrieved_chunks",
        "articles",
        "answer_path",
        "fusion",
    }
)
_SYSTEM_SUFFIXES = ("_id", "_ids", "_keys", "_ms", "_at", "_ts", "_type", "_mode", "_kind", "_kinds", "_count")
# ids a client chose (a session id it sent, a user id from its identity headers, often an email address): a
# person's, so redacted whatever their suffix says
_CLIENT_IDS = frozenset({"user_id", "session_id"})
_PLACEHOLDER = re.compile(r"<\d+ (?:floats|bytes)>")


def made_by_the_system(key: str, value: str) -> bool:
    """True for a string no person or document wrote (see _SYSTEM_KEYS): it skips the redactor."""
    if key in _CLIENT_IDS:
        return False
    return key in _SYSTEM_KEYS or key.endswith(_SYSTEM_SUFFIXES) or _PLACEHOLDER.fullmatch(value) is not None


# rows written before the binary column: the text column holds this prefix and the base85 of the
# zlib-compressed JSON, or (older still) the plain JSON
_PACKED = "z:"
# the binary column `packed`: this format byte, then the zlib-compressed JSON of the slim record (`_slim`)
_BINARY = b"\x01"
# per-turn lists whose full rows the record keeps once, under `retrieval`: elsewhere (node outputs, the run's
# output) they are cited by id
_BY_REF = {"retrieved_chunks": "chunk_id", "articles": "doc_id"}


# the preset dictionary of the compression: what every record repeats (its keys, node and state key names), so
# a small record need not spell them out once itself. Rows are only readable with the dictionary they were
# written with: never edit it; a different one needs a new prefix beside `_PACKED`
_ZDICT = (
    '"classify","translate","check_status","clarify","converse","troubleshoot","ticket","search_tickets",'
    '"use_integration","localize","create_ticket","search_kb","troubleshooting","fix","how-to","why","where",'
    '"what-is","dense","lexical","neighbour","article","macos","windows","linux",'
    '"redaction_notice":null,"redacted_kinds":[],"injection_suspected":false,"injection_signals":[],'
    '"small_talk":"","dialogue_act":"","language":"","translated":false,"keywords":[],"is_vague":false,'
    '"search_query":"","is_follow_up":false,"tried_queries":[],"query_embedding":[],"offered_actions":[],'
    '"action_selection":"","action_selection_reason":"","integration":"","integration_call":null,'
    '"needs_input":false,"is_clarifying":false,"fallback_notice":null,"answer_path":"","reply_kind":"",'
    '"status_checked":false,"status_ok":true,"status_summary":"","incidents":[],"ticket_event":"",'
    '"answer_policy":null,"mode_notice":null,"user_os":null,"clarify_streak":0,"turn_count":1,'
    '"messages":[{"role":"human","content":""},{"role":"ai","content":""}],"active_topic":"",'
    '"active_article":{"doc_id":"","title":"","source":"","section":"","question_type":"","runner_up":null},'
    '"sources":[{"n":1,"title":"","source":"","section":"","chunk_id":"","score":0.5,"doc_id":""}],'
    '{"trace_id":"","graph":"support","status":"ok","session_id":"","user_id":"anonymous","tags":["chat"],'
    '"started_at":"","duration_ms":0.0,"action":"answer","intent":"informative","input":{"query":"",'
    '"search_count":0,"action":"answer","decided_by":"policy","status_ok":true},"output":{"query":"",'
    '"answer":"","action":"answer","retrieved_chunks":[],"articles":[],"confidence":0.5,"question_type":"",'
    '"decision_reasoning":"","search_count":1},"path":["redact","classify","embed_query","retrieve","decide",'
    '"answer","respond"],"decisions":[{"action":"answer","reasoning":"","decided_by":"policy"}],'
    '"retrieval":[{"search":1,"query":"","candidates":[{"chunk_id":"","doc_id":"","title":"","source":"",'
    '"section":"","os":"","score":0.5,"dense_score":0.5,"lexical_score":0.5,"origin":"both","role":""}],'
    '"articles":[{"title":"","source":"","score":0.5,"answerable":0.5,"confidence":0.5}],"confidence":0.5,'
    '"question_type":""}],"llm_calls":[],"errors":[],"fallbacks":[],"timings":{"embedding_ms":0.0,'
    '"retrieval_ms":0.0,"decision_ms":0.0,"generation_ms":0.0,"total_ms":0.0},'
    '"nodes":[{"seq":0,"name":"redact","start_ms":0.0,"end_ms":0.0,"duration_ms":0.0,"input_keys":[],'
    '"output_keys":[],"output":{},"error":null},{"seq":1,"name":"'
).encode("ascii")


# the preset dictionary of the binary rows: the one above, then the skeletons of the records of the commonest
# node paths (`trace_dictionary.txt`: slim records of a soak's turns with every text, id and number blanked;
# structure only, no content of any knowledge base), so a record's keys, node names and nesting cost next to
# nothing. Never edit that file (a test checks its checksum): a different dictionary needs a new format byte
_BINARY_ZDICT = _ZDICT + Path(__file__).with_name("trace_dictionary.txt").read_bytes()


def pack_record(record: dict) -> bytes:
    """The stored form of a (redacted) record: what the row's columns and the record's own parts cannot give
    back (`_slim`), as JSON, zlib-compressed with the preset dictionary, in a binary column, after a format
    byte."""
    packer = zlib.compressobj(9, zdict=_BINARY_ZDICT)
    text = json.dumps(_slim(record), default=str, separators=(",", ":"))
    return _BINARY + packer.compress(text.encode("utf-8")) + packer.flush()


def unpack_record(stored: str | bytes) -> str:
    """The JSON a row stores, as text: a binary row's slim record, or an older row's text record (compressed
    to base85 text, or plain)."""
    if isinstance(stored, (bytes, bytearray, memoryview)):
        stored = bytes(stored)
        if not stored.startswith(_BINARY):
            raise ValueError("a trace record in an unknown format")
        unpacker = zlib.decompressobj(zdict=_BINARY_ZDICT)
        return (unpacker.decompress(stored[len(_BINARY) :]) + unpacker.flush()).decode("utf-8")
    if stored.startswith(_PACKED):
        unpacker = zlib.decompressobj(zdict=_ZDICT)
        return (unpacker.decompress(base64.b85decode(stored[len(_PACKED) :])) + unpacker.flush()).decode("utf-8")
    return stored


# --- the slim record: what is stored of it, and the whole record rebuilt on reading ----------------------
# record fields the row's own columns hold (the trace store writes them from the record, `_restore` reads
# them back): the record need not repeat them
_COLUMN_FIELDS = (
    "trace_id",
    "graph",
    "status",
    "session_id",
    "user_id",
    "action",
    "intent",
    "duration_ms",
    "started_ts",
    "started_at",
    "path",
)


def _keys_of(output: Any) -> list[str]:
    return sorted(output) if isinstance(output, dict) else []


def _span(node: dict) -> float | None:
    start, end = node.get("start_ms"), node.get("end_ms")
    return round(end - start, 2) if isinstance(start, (int, float)) and isinstance(end, (int, float)) else None


def _decisions_of(nodes: list[dict]) -> list[dict]:
    return [
        {
            "action": n["output"].get("action"),
            "reasoning": n["output"].get("decision_reasoning"),
            "decided_by": n["output"].get("decided_by"),
        }
        for n in nodes
        if n.get("name") == "decide" and isinstance(n.get("output"), dict)
    ]


def _fallbacks_of(nodes: list[dict]) -> list[dict]:
    return [
        {"node": n["name"], "notice": n["output"]["fallback_notice"]}
        for n in nodes
        if isinstance(n.get("output"), dict) and n["output"].get("fallback_notice")
    ]


# record fields the node list gives back exactly (each is left out only when it does: `_slim` checks)
_FROM_NODES = {"decisions": _decisions_of, "fallbacks": _fallbacks_of}


def _slim(record: dict) -> dict:
    """The record without what `_restore` gives back exactly: the fields the row's columns hold, each node's
    output keys (its output's keys) and duration (end - start), its input keys as the change from the node
    before, and the decisions and fallbacks (the node outputs hold them). Every part is left out only when
    its rebuilt value equals it, so a record reads back as it was written."""
    slim = {k: v for k, v in record.items() if k not in _COLUMN_FIELDS}
    nodes: list[dict] = []
    before: list[str] = []  # the previous node's input keys
    for node in record.get("nodes") or []:
        node = dict(node)
        if node.get("output_keys") == _keys_of(node.get("output")):
            node.pop("output_keys", None)
        if "duration_ms" in node and node["duration_ms"] == _span(node):
            node.pop("duration_ms")
        keys = node.get("input_keys")
        if isinstance(keys, list) and keys == sorted(set(keys)):
            added, gone = [k for k in keys if k not in before], [k for k in before if k not in keys]
            node.pop("input_keys")
            if added:
                node["in+"] = added
            if gone:
                node["in-"] = gone
        before = keys if isinstance(keys, list) else []  # as `_restore` walks it
        nodes.append(node)
    slim["nodes"] = nodes
    for name, rebuild in _FROM_NODES.items():
        if name in slim and slim[name] == rebuild(record.get("nodes") or []):
            del slim[name]
    return slim


_NODE_FIELDS = ("seq", "name", "start_ms", "end_ms", "duration_ms", "input_keys", "output_keys", "output", "error")


def _restore(slim: dict, row: RowMapping) -> dict:
    """The whole record from its slim form (`_slim`) and the row it came from."""
    nodes: list[dict] = []
    before: list[str] = []  # the previous node's input keys
    for node in slim.get("nodes") or []:
        node = dict(node)
        if "input_keys" not in node:
            gone = set(node.pop("in-", ()))
            node["input_keys"] = sorted({k for k in before if k not in gone} | set(node.pop("in+", ())))
        before = node["input_keys"] if isinstance(node["input_keys"], list) else []
        node.setdefault("output_keys", _keys_of(node.get("output")))
        if "duration_ms" not in node:
            node["duration_ms"] = _span(node)
        nodes.append({k: node[k] for k in _NODE_FIELDS if k in node} | node)  # the fields in their usual order
    started = row["started_at"]
    record = {
        "trace_id": row["trace_id"],
        "graph": row["graph"],
        "status": row["status"],
        "session_id": row["session_id"],
        "user_id": row["user_id"],
        "tags": slim.get("tags", []),
        "started_ts": started,
        "started_at": datetime.fromtimestamp(started, UTC).isoformat(timespec="milliseconds"),
        "duration_ms": row["duration_ms"],
        "action": row["action"],
        "intent": row["intent"],
    }
    record |= {k: v for k, v in slim.items() if k != "nodes"}
    record["path"] = json.loads(row["path"] or "[]")
    record["nodes"] = nodes
    for name, rebuild in _FROM_NODES.items():
        record.setdefault(name, rebuild(nodes))
    return record


def _by_ref(outputs: dict) -> dict:
    """A node's (or the run's) output with the chunk and article lists cut to their ids."""
    return {
        k: [item.get(_BY_REF[k]) for item in v[:MAX_ITEMS] if isinstance(item, dict)]
        if k in _BY_REF and isinstance(v, list)
        else v
        for k, v in outputs.items()
    }


# --- shaping: a bounded, JSON-safe copy of a value (request thread; no redaction yet) -------------------
def _cut(text: str) -> str:
    if len(text) <= MAX_VALUE_CHARS:
        return text
    cut = text.rfind(" ", 0, MAX_VALUE_CHARS)
    return text[: cut if cut > MAX_VALUE_CHARS // 2 else MAX_VALUE_CHARS] + f"… [{len(text)} chars]"


def shape(value: Any, depth: int = 0, key: str = "") -> Any:
    """A size-capped JSON-safe copy: no embeddings, no bytes, chunk candidates without their bodies."""
    kind = type(value)  # the exact common types first (a turn shapes hundreds of values); subclasses below
    if kind is str:
        return _cut(value)
    if kind is int or kind is bool:
        return value
    if kind is float:
        return round(value, 4)
    if value is None or isinstance(value, (bool, int)):
        return value
    if isinstance(value, float):
        return round(value, 4)
    if isinstance(value, str):
        return _cut(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return f"<{len(value)} bytes>"
    if depth >= MAX_DEPTH:
        return "…"
    if isinstance(value, dict):
        if key == "retrieved_chunks" or (depth and "chunk_id" in value and "text" in value):
            return {k: shape(value[k], depth + 1, k) for k in CANDIDATE_KEYS if k in value}
        items = list(value.items())
        shaped = {str(k): shape(v, depth + 1, str(k)) for k, v in items[: MAX_ITEMS * 2]}
        if len(items) > MAX_ITEMS * 2:
            shaped["…"] = f"{len(items) - MAX_ITEMS * 2} more keys"
        return shaped
    if isinstance(value, (list, tuple, set, frozenset)):
        items = list(value)
        if len(items) > 8 and all(isinstance(v, float) for v in items[:8]):
            return f"<{len(items)} floats>"  # an embedding
        shaped_items = [shape(v, depth + 1, key) for v in items[:MAX_ITEMS]]
        if len(items) > MAX_ITEMS:
            shaped_items.append(f"… {len(items) - MAX_ITEMS} more")
        return shaped_items
    if hasattr(value, "type") and hasattr(value, "content"):  # a LangChain message
        return {"role": str(value.type), "content": shape(value.content, depth + 1)}
    return _cut(f"<{type(value).__name__}>")


def redact_value(
    value: Any,
    redactor: Redactor,
    memo: dict | None = None,
    key: str = "",
    documents: Redactor | None = None,
    route: Provenance | None = None,
) -> Any:
    """Every string through the trace redactor, each distinct one once per record (one call per string:
    the redaction engine caches what repeats between records, such as titles and system messages);
    document titles, sections and sources through the `documents` redactor when one is given; with a `route`
    (trace_provenance.Provenance), a string it proves needs less through the narrower redactor it names. Called
    without a `memo`, the record's evidence keys are left out and its strings are first redacted together
    (`redact_all`: one names-model batch per redactor)."""
    if memo is None:
        memo = {}
        value = without_evidence(value)
        redact_all([value], redactor, memo, documents, route)
    if isinstance(value, str):
        if not value.strip() or made_by_the_system(key, value):
            return value
        use = _redactor_for(key, value, redactor, documents, route)
        memo_key = (id(use), value)
        if memo_key not in memo:
            memo[memo_key] = use.redact(value).text
        return memo[memo_key]
    if isinstance(value, dict):
        return {k: redact_value(v, redactor, memo, k, documents, route) for k, v in value.items()}
    if isinstance(value, list):
        return [redact_value(v, redactor, memo, key, documents, route) for v in value]
    return value


def _redactor_for(
    key: str, value: str, redactor: Redactor, documents: Redactor | None, route: Provenance | None
) -> Redactor:
    if documents is not None and key in DOCUMENT_KEYS:
        return documents
    return route.choose(value) if route is not None else redactor


def redact_all(
    values: Iterable[Any],
    redactor: Redactor,
    memo: dict,
    documents: Redactor | None = None,
    route: Provenance | Callable[[Any], Provenance | None] | None = None,
) -> None:
    """Fill `memo` (as `redact_value` keys it) with the redacted form of every string of `values` that needs
    one, each redactor called once for all of them when it can take a batch (`redact_many`): the names model
    then reads the person's texts of a whole batch of records in one pass instead of one text at a time.
    `route`: one Provenance for all values, or a function giving each value (record) its own."""
    fill_memo(
        ((route(value) if callable(route) else route, survey(value).leaves) for value in values),
        redactor,
        memo,
        documents,
    )


def fill_memo(
    records: Iterable[tuple[Provenance | None, Iterable[tuple[str, str]]]],
    redactor: Redactor,
    memo: dict,
    documents: Redactor | None = None,
) -> None:
    """`redact_all` for records already surveyed: (their route, the (key, string) leaves that need a redactor)."""
    wanted: dict[int, tuple[Redactor, dict[str, None]]] = {}
    for routed, leaves in records:
        for key, value in leaves:
            use = _redactor_for(key, value, redactor, documents, routed)
            if (id(use), value) not in memo:
                wanted.setdefault(id(use), (use, {}))[1][value] = None
    for use, texts in wanted.values():
        many = getattr(use, "redact_many", None)
        if many is None or not texts:
            continue  # redact_value calls `redact` text by text
        for text, redacted in zip(texts, many(list(texts)), strict=True):
            memo[(id(use), text)] = redacted.text


@dataclass
class Survey:
    """What one walk over a record finds: its `document_values`, the documents it cites (`doc_ids`, in order, at
    most MAX_ARTICLES: the evidence trace_provenance reads) and the (key, string) leaves a redactor must read."""

    documents: set[str] = field(default_factory=set)
    doc_ids: dict[str, None] = field(default_factory=dict)
    leaves: dict[tuple[str, str], None] = field(default_factory=dict)


def survey(value: Any) -> Survey:
    """One walk over a record (without its evidence keys) instead of one per question asked of it."""
    found = Survey()

    def walk(value: Any, key: str) -> None:
        if isinstance(value, str):
            system = made_by_the_system(key, value)
            if system or key in DOCUMENT_KEYS:
                found.documents.add(value)
            if value.strip() and not system:
                found.leaves[(key, value)] = None
            if key == "doc_id" and value and len(found.doc_ids) < MAX_ARTICLES:
                found.doc_ids[value] = None
        elif isinstance(value, dict):
            for k, v in value.items():
                walk(v, k)
        elif isinstance(value, list):
            for v in value:
                walk(v, key)

    walk(value, "")
    return found


def document_values(value: Any, key: str = "") -> set[str]:
    """The strings of a record that a document or the system wrote by construction: those under the document keys
    (titles, sections, sources) and those `made_by_the_system` (enum values such as a response mode, node names).
    A text that quotes one of them (a reasoning naming an article) quotes that, not a person."""
    if key:
        return survey({key: value}).documents
    return survey(value).documents


# --- the callback handler: one per graph run ---------------------------------------------------------
@dataclass
class _NodeRun:
    name: str
    seq: int
    start: float
    input_keys: list[str]
    end: float | None = None
    output: Any = None
    output_keys: list[str] = field(default_factory=list)
    error: str | None = None
    raw_output: dict = field(default_factory=dict)


@dataclass
class _LLMCall:
    node: str
    model: str
    start: float
    end: float | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    total_tokens: int | None = None
    error: str | None = None


def _empty(value: Any) -> bool:
    return value is None or value is False or (isinstance(value, (str, list, dict, tuple)) and not value)


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 2)


def _token_usage(response) -> dict:
    usage = (getattr(response, "llm_output", None) or {}).get("token_usage") or {}
    if usage:
        return {
            "prompt_tokens": usage.get("prompt_tokens"),
            "completion_tokens": usage.get("completion_tokens"),
            "total_tokens": usage.get("total_tokens"),
        }
    for generations in getattr(response, "generations", None) or []:
        for generation in generations:
            meta = getattr(getattr(generation, "message", None), "usage_metadata", None)
            if meta:
                return {
                    "prompt_tokens": meta.get("input_tokens"),
                    "completion_tokens": meta.get("output_tokens"),
                    "total_tokens": meta.get("total_tokens"),
                }
    return {}


class RunRecorder(BaseCallbackHandler):
    """Records one graph run; `sink` receives the finished (shaped, not yet redacted) record."""

    raise_error = False
    run_inline = True

    def __init__(self, trace_id: str, sink: Callable[[dict], None] | None = None) -> None:
        self.trace_id = trace_id
        self._sink = sink
        self._lock = threading.Lock()
        self._root = None
        self._graph = "graph"
        self._t0 = time.perf_counter()
        self._wall = time.time()
        self._meta: dict = {}
        self._input: Any = None
        self._parents: dict = {}
        self._nodes: dict = {}
        self._llm: dict = {}
        self._errors: list[dict] = []
        # what the trace writer may use to choose a narrower redactor (trace_provenance.py), never stored: the
        # strings the `redact` node wrote, and the texts of the chunks the run retrieved
        self._upstream: dict[str, None] = {}
        self._documents: dict[str, None] = {}
        self.finished = False
        self.record: dict | None = None
        self.timings: dict[str, float] | None = None

    # -- LangChain callbacks --------------------------------------------------------------------------
    def on_chain_start(self, serialized, inputs, *, run_id, parent_run_id=None, tags=None, metadata=None, **kwargs):
        now = time.perf_counter()
        inputs = flat_values(inputs)  # a support run's turn record read flat, as records have always been kept
        with self._lock:
            if parent_run_id is None and self._root is None:
                self._root, self._t0, self._wall = run_id, now, time.time()
                self._graph = kwargs.get("name") or "graph"
                self._meta = dict(metadata or {})
                # a run's input repeats every per-turn key, mostly reset to empty: keep what carries something
                self._input = shape(
                    {k: v for k, v in inputs.items() if not _empty(v)} if isinstance(inputs, dict) else inputs
                )
                return
            self._parents[run_id] = parent_run_id
            node = (metadata or {}).get("langgraph_node")
            if node and kwargs.get("name") == node and parent_run_id == self._root:
                keys = sorted(k for k, v in inputs.items() if not _empty(v)) if isinstance(inputs, dict) else []
                self._nodes[run_id] = _NodeRun(node, len(self._nodes), now - self._t0, keys)

    def on_chain_end(self, outputs, *, run_id, parent_run_id=None, **kwargs):
        now = time.perf_counter()
        outputs = flat_values(outputs)
        with self._lock:
            if run_id == self._root:
                self._finish("ok", outputs, now)
                return
            node = self._nodes.get(run_id)
            if node is not None:
                node.end = now - self._t0
                if isinstance(outputs, dict):
                    node.raw_output = outputs
                    node.output_keys = sorted(outputs)
                    node.output = shape(_by_ref(outputs))
                    self._note_evidence(node.name, outputs)

    def _note_evidence(self, node: str, outputs: dict) -> None:
        if node == "redact" and self._graph == "support":
            # nodes/support/redact.py: the memory redactor's output (the message, a system message's persona)
            for value in [outputs.get("query"), *(outputs.get("directives") or {}).values()]:
                if isinstance(value, str) and value:
                    self._upstream[shape(value)] = None  # as the record holds it (cut like every string)
        for chunk in outputs.get("retrieved_chunks") or ():
            text = chunk.get("text") if isinstance(chunk, dict) else None
            if isinstance(text, str) and text and len(self._documents) < MAX_DOCUMENT_TEXTS:
                self._documents[text] = None

    def on_chain_error(self, error, *, run_id, parent_run_id=None, **kwargs):
        now = time.perf_counter()
        with self._lock:
            text = f"{type(error).__name__}: {error}"[:500]
            if run_id == self._root:
                if isinstance(error, (GeneratorExit, asyncio.CancelledError)):  # a stream its client left
                    self._finish("cancelled", None, now, error="the client disconnected; the run was stopped")
                else:
                    self._finish("error", None, now, error=text)
                return
            node = self._nodes.get(run_id)
            if node is not None:
                node.end, node.error = now - self._t0, text
                self._errors.append({"node": node.name, "error": text})

    def on_chat_model_start(self, serialized, messages, *, run_id, parent_run_id=None, metadata=None, **kwargs):
        self._llm_started(run_id, parent_run_id, metadata, kwargs)

    def on_llm_start(self, serialized, prompts, *, run_id, parent_run_id=None, metadata=None, **kwargs):
        self._llm_started(run_id, parent_run_id, metadata, kwargs)

    def _llm_started(self, run_id, parent_run_id, metadata, kwargs) -> None:
        now = time.perf_counter()
        params = kwargs.get("invocation_params") or {}
        model = (metadata or {}).get("ls_model_name") or params.get("model") or params.get("model_name") or "llm"
        with self._lock:
            self._parents[run_id] = parent_run_id
            self._llm[run_id] = _LLMCall(self._node_of(parent_run_id), str(model), now - self._t0)

    def on_llm_end(self, response, *, run_id, parent_run_id=None, **kwargs):
        now = time.perf_counter()
        with self._lock:
            call = self._llm.get(run_id)
            if call is not None:
                call.end = now - self._t0
                for name, value in _token_usage(response).items():
                    setattr(call, name, value)

    def on_llm_error(self, error, *, run_id, parent_run_id=None, **kwargs):
        now = time.perf_counter()
        with self._lock:
            call = self._llm.get(run_id)
            if call is not None:
                call.end, call.error = now - self._t0, f"{type(error).__name__}: {error}"[:500]
                self._errors.append({"node": call.node, "error": f"LLM call failed: {call.error}"})

    # -- what ChatService reads -----------------------------------------------------------------------
    def duration_of(self, node: str) -> float | None:
        """Duration (ms) of the latest finished run of `node`."""
        with self._lock:
            runs = [n for n in self._nodes.values() if n.name == node and n.end is not None]
        return _ms(runs[-1].end - runs[-1].start) if runs else None

    def abandon(self, status: str = "cancelled") -> None:
        """Close a run that will never end by itself (a stream the client left)."""
        with self._lock:
            if not self.finished:
                self._finish(status, None, time.perf_counter(), error="the client disconnected; the run was stopped")

    # -- building the record --------------------------------------------------------------------------
    def _node_of(self, run_id) -> str:
        seen = 0
        while run_id is not None and seen < 50:
            if run_id in self._nodes:
                return self._nodes[run_id].name
            run_id, seen = self._parents.get(run_id), seen + 1
        return ""

    def _finish(self, status: str, outputs: Any, now: float, error: str | None = None) -> None:
        if self.finished:
            return
        self.finished = True
        nodes = sorted(self._nodes.values(), key=lambda n: n.seq)
        total = now - self._t0
        timings = {"embedding_ms": 0.0, "retrieval_ms": 0.0, "decision_ms": 0.0, "generation_ms": 0.0}
        for node in nodes:
            if node.name in STAGES and node.end is not None:
                timings[STAGES[node.name]] += (node.end - node.start) * 1000
        self.timings = {k: round(v, 2) for k, v in timings.items()} | {"total_ms": _ms(total)}
        output = outputs if isinstance(outputs, dict) else {}
        errors = list(self._errors) + ([{"node": "", "error": error}] if error else [])
        self.record = {
            "trace_id": self.trace_id,
            "graph": self._graph,
            "status": status,
            "session_id": self._meta.get("langfuse_session_id"),
            "user_id": self._meta.get("langfuse_user_id"),
            "tags": list(self._meta.get("langfuse_tags") or []),
            "started_ts": self._wall,
            "started_at": datetime.fromtimestamp(self._wall, UTC).isoformat(timespec="milliseconds"),
            "duration_ms": _ms(total),
            "action": output.get("action"),
            "intent": output.get("intent"),
            "input": self._input,
            "output": shape(_by_ref(output)),
            "path": [n.name for n in nodes],
            "nodes": [
                {
                    "seq": n.seq,
                    "name": n.name,
                    "start_ms": _ms(n.start),
                    "end_ms": _ms(n.end) if n.end is not None else None,
                    # end - start as shown, so it can be left out of the stored record (`_slim`)
                    "duration_ms": round(_ms(n.end) - _ms(n.start), 2) if n.end is not None else None,
                    "input_keys": n.input_keys,
                    "output_keys": n.output_keys,
                    "output": n.output,
                    "error": n.error,
                }
                for n in nodes
            ],
            "decisions": [
                {
                    "action": n.raw_output.get("action"),
                    "reasoning": n.raw_output.get("decision_reasoning"),
                    "decided_by": n.raw_output.get("decided_by"),
                }
                for n in nodes
                if n.name == "decide"
            ],
            "retrieval": _retrievals(nodes),
            "llm_calls": [
                {
                    "node": c.node,
                    "model": c.model,
                    "start_ms": _ms(c.start),
                    "duration_ms": _ms(c.end - c.start) if c.end is not None else None,
                    "prompt_tokens": c.prompt_tokens,
                    "completion_tokens": c.completion_tokens,
                    "total_tokens": c.total_tokens,
                    "error": c.error,
                }
                for c in self._llm.values()
            ],
            "errors": errors,
            "fallbacks": [
                {"node": n.name, "notice": n.raw_output["fallback_notice"]}
                for n in nodes
                if n.raw_output.get("fallback_notice")
            ],
            "timings": self.timings,
        }
        if self._upstream:
            self.record[UPSTREAM_KEY] = list(self._upstream)
        if self._documents:
            self.record[DOCUMENTS_KEY] = list(self._documents)
        for node in nodes:
            node.raw_output = {}  # keep nothing unshaped once the record is built
        if self._sink is not None:
            self._sink(self.record)


def _retrievals(nodes: list[_NodeRun]) -> list[dict]:
    searches: list[dict] = []
    query = ""
    for node in nodes:
        if node.name == "embed_query":
            query = node.raw_output.get("search_query", query)
        elif node.name == "retrieve":
            chunks = node.raw_output.get("retrieved_chunks") or []
            searches.append(
                {
                    "search": node.raw_output.get("search_count", len(searches) + 1),
                    "query": shape(query),
                    "candidates": [shape(c, 1, "retrieved_chunks") for c in chunks[:MAX_ITEMS]],
                    # the articles behind them, each with its calibrated confidence (the best one decides)
                    "articles": [
                        {k: shape(a.get(k)) for k in ARTICLE_KEYS}
                        for a in (node.raw_output.get("articles") or [])[:MAX_ITEMS]
                    ],
                    "confidence": node.raw_output.get("confidence"),
                    "question_type": node.raw_output.get("question_type"),
                }
            )
    return searches


def recorder_in(config: dict) -> RunRecorder | None:
    """The RunRecorder among a run config's callbacks, if there is one."""
    return next((cb for cb in config.get("callbacks") or [] if isinstance(cb, RunRecorder)), None)


# --- the store ----------------------------------------------------------------------------------------
_STOP = object()


def _summary(record: dict) -> str:
    given = record.get("input")
    if not isinstance(given, dict):
        given = {}
    text = given.get("query") or given.get("source") or given.get("page_url") or ""
    return str(text)[:160]


class TraceStore:
    """Trace store with one writer thread; reads take a pooled connection of their own."""

    def __init__(
        self,
        db: Database | Path | str,
        *,
        redactor: Redactor,
        document_redactor: Redactor | None = None,
        upstream_redactor: Redactor | None = None,
        document_texts: Callable[[str], list[str]] | None = None,
        retention_days: float = 14.0,
        max_runs: int = 20_000,
        max_bytes: int | None = None,
        max_pending: int = MAX_PENDING,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._owns_db = not isinstance(db, Database)
        self.path = None if isinstance(db, Database) else Path(db)
        self.db = db if isinstance(db, Database) else Database.open(f"sqlite:///{Path(db).resolve()}")
        self._redactor = redactor
        self._document_redactor = document_redactor
        # `upstream_redactor`: the one the support graph's redact node uses (memory's); with it, and with the
        # service's own redactors, a string proven redacted upstream or to hold only documents' names goes
        # through a narrower redactor (trace_provenance.py)
        # (`document_texts`: doc_id -> its chunks' texts, the evidence for an answer quoting a whole section)
        self._routes = TraceRedactors.build(redactor, upstream_redactor, document_texts, support_phrases())
        self._retention_s = retention_days * 86400
        self._max_runs = max_runs
        self._max_bytes = max_bytes
        self._clock = clock
        # the writer's two statements, built once (every batch binds its rows to them)
        self._upsert_run = self._upsert(runs, runs.c.trace_id)
        self._upsert_rating = self._upsert(run_feedback, run_feedback.c.trace_id)
        self._work = PendingQueue(max_pending)
        self._drops = threading.Lock()
        self.dropped = 0
        self._last_prune = 0.0
        self._written = 0  # record bytes written since the last prune
        self._writer = threading.Thread(target=self._write_loop, name="trace-writer", daemon=True)
        self._writer.start()

    # -- producers (request threads): never block ---------------------------------------------------------
    def submit(self, record: dict) -> None:
        self._enqueue(("run", record))

    def record_feedback(self, trace_id: str, rating: str, reason: str | None) -> None:
        self._enqueue(("feedback", (trace_id, rating, reason)))

    def _enqueue(self, item) -> None:
        if self._work.offer(item):
            return
        with self._drops:
            self.dropped += 1
            dropped = self.dropped
        log.warning(
            "trace store is behind (%d waiting): dropped a %s record (%d dropped so far)",
            self._work.qsize(),
            item[0],
            dropped,
        )

    def flush(self, timeout: float = 2.0) -> bool:
        """Wait (at most `timeout` s) until everything submitted so far is written."""
        return self._work.wait_idle(timeout)

    def close(self, timeout: float = 5.0) -> None:
        self.flush(timeout)
        if self._work.stop(_STOP):
            self._writer.join(timeout)

    # -- the writer thread -------------------------------------------------------------------------------
    def _write_loop(self) -> None:
        while True:
            items = self._work.take(64)  # one transaction for whatever is waiting
            stop = any(item is _STOP for item in items)
            batch = [item for item in items if item is not _STOP]
            try:
                self._written += self._write(batch)
            except Exception:  # a bad record or a database away must not kill the writer: logged, skipped
                log.exception("could not write %d trace record(s)", len(batch))
            finally:
                self._work.done(len(batch))
            if stop:
                if self._owns_db:
                    self.db.close()
                return
            if self._clock() - self._last_prune > PRUNE_EVERY_S or (
                self._max_bytes and self._written > self._max_bytes * PRUNE_AFTER_SHARE
            ):
                try:
                    self.prune()
                except Exception:
                    log.exception("could not prune the trace store")

    def _write(self, batch: Iterable) -> int:
        """Write the batch in one transaction; returns the record bytes written."""
        rows, ratings = [], []
        batch = list(batch)
        memo: dict = {}  # the batch's strings, redacted together (one names-model pass per redactor)
        routes = self._routes
        narrower = routes.upstream is not None or routes.no_names is not None
        records: dict[int, tuple[Any, Provenance | None, Survey]] = {}
        for kind, payload in batch:
            if kind == "run":
                stored = without_evidence(payload)
                found = survey(stored)  # one walk: the proven values, the cited documents, what needs a redactor
                route = Provenance(payload, routes, found.documents, list(found.doc_ids)) if narrower else None
                records[id(payload)] = (stored, route, found)
        fill_memo(
            ((route, found.leaves) for _, route, found in records.values()),
            self._redactor,
            memo,
            self._document_redactor,
        )
        for kind, payload in batch:
            if kind == "run":
                stored, route, _ = records[id(payload)]
                record = redact_value(stored, self._redactor, memo, documents=self._document_redactor, route=route)
                rows.append(
                    {
                        "trace_id": record["trace_id"],
                        "graph": record["graph"],
                        "session_id": record.get("session_id"),
                        "user_id": record.get("user_id"),
                        "action": record.get("action"),
                        "intent": record.get("intent"),
                        "status": record["status"],
                        "started_at": record["started_ts"],
                        "duration_ms": record.get("duration_ms"),
                        "summary": _summary(record),
                        "path": json.dumps(record.get("path") or [], default=str),
                        "record": "",
                        "packed": pack_record(record),
                    }
                )
            else:
                trace_id, rating, reason = payload
                ratings.append(
                    {
                        "trace_id": trace_id,
                        "rating": rating,
                        "reason": self._redactor.redact(reason).text if reason else None,
                        "at": self._clock(),
                    }
                )
        with self.db.begin() as conn:
            for statement, values in ((self._upsert_run, rows), (self._upsert_rating, ratings)):
                if values:
                    conn.execute(statement, values)
        return sum(len(row["packed"]) for row in rows)

    def _upsert(self, table, key):
        """INSERT … ON CONFLICT (key) DO UPDATE every other column: a run or rating written again replaces it."""
        statement = self.db.insert(table)
        return statement.on_conflict_do_update(
            index_elements=[key],
            set_={c.name: statement.excluded[c.name] for c in table.columns if not c.primary_key},
        )

    def prune(self, db: Connection | None = None) -> int:
        """Delete runs older than the retention and beyond the row cap; returns how many went."""
        cutoff = self._clock() - self._retention_s
        with self.db.begin() as conn:
            removed = conn.execute(delete(runs).where(runs.c.started_at < cutoff)).rowcount
            # the row cap: everything older than the max_runs-th newest run
            edge = conn.execute(
                select(runs.c.started_at).order_by(runs.c.started_at.desc()).offset(self._max_runs).limit(1)
            ).scalar()
            if edge is not None:
                removed += conn.execute(delete(runs).where(runs.c.started_at <= edge)).rowcount
            conn.execute(
                delete(run_feedback).where(
                    run_feedback.c.at < cutoff, run_feedback.c.trace_id.not_in(select(runs.c.trace_id))
                )
            )
        removed += self._prune_to_size()
        self._last_prune = self._clock()
        self._written = 0
        if removed:
            log.info("trace store: pruned %d run(s)", removed)
        return removed

    def _prune_to_size(self) -> int:
        """Delete the oldest runs until the trace rows fit `max_bytes` (freed pages are reused by later writes,
        so the store stops growing at about that size)."""
        if not self._max_bytes:
            return 0
        removed = 0
        for _ in range(8):  # bounded: each round removes what the average run size says is over
            with self.db.begin() as conn:
                used = self._bytes_used(conn)
                count = conn.execute(select(func.count()).select_from(runs)).scalar() or 0
                if used <= self._max_bytes or not count:
                    break
                over = max(1, int((used - self._max_bytes * 0.9) / (used / count)))  # down to 90 %
                oldest = select(runs.c.trace_id).order_by(runs.c.started_at).limit(over).scalar_subquery()
                removed += conn.execute(delete(runs).where(runs.c.trace_id.in_(oldest))).rowcount
                conn.execute(delete(run_feedback).where(run_feedback.c.trace_id.not_in(select(runs.c.trace_id))))
        return removed

    def _bytes_used(self, conn: Connection) -> int:
        if self.db.is_postgres:
            return int(
                conn.exec_driver_sql(
                    "SELECT pg_total_relation_size('runs') + pg_total_relation_size('run_feedback')"
                ).scalar()
                or 0
            )
        if self._owns_db:  # a trace file of its own: the trace tables' pages, as the disk sees them
            return self.trace_table_bytes(conn.connection.dbapi_connection)
        # the embedded file is shared with tickets and votes: count the trace rows' own bytes
        return int(
            conn.execute(
                select(
                    func.coalesce(
                        func.sum(func.length(runs.c.record) + func.coalesce(func.length(runs.c.packed), 0)), 0
                    )
                )
            ).scalar()
            or 0
        )

    @staticmethod
    def trace_table_bytes(db) -> int:
        """Bytes of the pages the trace tables and their indexes hold (the file's other tables, even empty,
        take pages of their own that no pruning of traces can give back)."""
        try:
            return int(
                db.execute(
                    "SELECT COALESCE(SUM(pgsize), 0) FROM dbstat WHERE name IN (SELECT name FROM "
                    "sqlite_master WHERE tbl_name IN ('runs', 'run_feedback'))"
                ).fetchone()[0]
            )
        except Exception:  # an SQLite built without the dbstat table: the whole file's pages in use
            return TraceStore.bytes_in_use(db)

    @staticmethod
    def bytes_in_use(db) -> int:
        """Bytes of an SQLite database's pages that hold data (the file minus its free pages)."""
        pages = db.execute("PRAGMA page_count").fetchone()[0] - db.execute("PRAGMA freelist_count").fetchone()[0]
        return pages * db.execute("PRAGMA page_size").fetchone()[0]

    def reclaim(self, *, vacuum: bool = False) -> None:
        """Hand freed pages back: on SQLite the pages retention freed and the WAL always, the whole file
        rewritten (VACUUM) when asked; on Postgres (autovacuum's job) an explicit VACUUM of the trace tables
        when asked."""
        with self.db.engine.connect() as conn:
            conn = conn.execution_options(isolation_level="AUTOCOMMIT")  # VACUUM cannot run in a transaction
            if self.db.is_postgres:
                if vacuum:
                    conn.exec_driver_sql("VACUUM runs")
                    conn.exec_driver_sql("VACUUM run_feedback")
                return
            reclaim_sqlite(conn.connection.dbapi_connection, vacuum=vacuum)

    # -- readers -----------------------------------------------------------------------------------------
    def list(
        self,
        *,
        session_id: str | None = None,
        action: str | None = None,
        graph: str | None = None,
        since: float | None = None,
        until: float | None = None,
        user_id: str | None = None,
        limit: int = 50,
    ) -> list[dict]:
        """Run summaries, newest first (`user_id`: only that caller's runs)."""
        where = [
            runs.c[column] == value
            for column, value in (
                ("session_id", session_id),
                ("action", action),
                ("graph", graph),
                ("user_id", user_id),
            )
            if value
        ]
        if since is not None:
            where.append(runs.c.started_at >= since)
        if until is not None:
            where.append(runs.c.started_at < until)
        query = (
            select(
                runs.c.trace_id,
                runs.c.graph,
                runs.c.session_id,
                runs.c.action,
                runs.c.intent,
                runs.c.status,
                runs.c.started_at,
                runs.c.duration_ms,
                runs.c.summary,
                runs.c.path,
                run_feedback.c.rating,
            )
            .select_from(runs.outerjoin(run_feedback, run_feedback.c.trace_id == runs.c.trace_id))
            .where(*where)
            .order_by(runs.c.started_at.desc())
            .limit(limit)
        )
        with self.db.connect() as conn:
            rows = conn.execute(query).mappings().all()
        return [
            {
                "trace_id": r["trace_id"],
                "graph": r["graph"],
                "session_id": r["session_id"],
                "action": r["action"],
                "intent": r["intent"],
                "status": r["status"],
                "started_at": datetime.fromtimestamp(r["started_at"], UTC).isoformat(timespec="milliseconds"),
                "duration_ms": r["duration_ms"],
                "summary": r["summary"],
                "path": json.loads(r["path"] or "[]"),
                "feedback": r["rating"],
            }
            for r in rows
        ]

    def get(self, trace_id: str) -> dict | None:
        with self.db.connect() as conn:
            row = conn.execute(select(runs).where(runs.c.trace_id == trace_id)).mappings().first()
            vote = conn.execute(
                select(run_feedback.c.rating, run_feedback.c.reason).where(run_feedback.c.trace_id == trace_id)
            ).first()
        if row is None:
            return None
        if row["packed"] is not None:  # the slim record, completed from the row
            record = _restore(json.loads(unpack_record(row["packed"])), row)
        else:  # a row written before the binary column holds the whole record as text
            record = json.loads(unpack_record(row["record"]))
        record.pop("started_ts", None)
        record["feedback"] = {"rating": vote[0], "reason": vote[1]} if vote else None
        return record

    def count(self) -> int:
        with self.db.connect() as conn:
            return int(conn.execute(select(func.count()).select_from(runs)).scalar() or 0)


# --- the tracer every run config uses -------------------------------------------------------------------
class RecordingTracer:
    """The configured tracer (Langfuse or none) plus a RunRecorder for every graph run."""

    def __init__(self, inner, store: TraceStore | None) -> None:
        self.inner = inner
        self.store = store

    @property
    def enabled(self) -> bool:
        """Whether Langfuse is on (the local store is reported separately)."""
        return bool(getattr(self.inner, "enabled", False))

    def callbacks(self, trace_id: str) -> list:
        # the recorder first: its node timings then include as little of the other handlers' work as possible
        return [RunRecorder(trace_id, self.store.submit if self.store else None), *self.inner.callbacks(trace_id)]

    def record_feedback(self, trace_id: str, rating: str, reason: str | None = None) -> None:
        """A user's vote on an answer: a score on the Langfuse trace, and beside the local trace."""
        if self.store is not None:
            self.store.record_feedback(trace_id, rating, reason)
        score = getattr(self.inner, "score_feedback", None)
        if score is not None:
            score(trace_id, rating, reason)

    def flush(self) -> None:
        self.inner.flush()

    def shutdown(self) -> None:
        self.inner.shutdown()
        if self.store is not None:
            self.store.close()
