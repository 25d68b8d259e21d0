"""Which redactor each string of a trace record needs, from what the code can prove about where it came from.

The trace writer (app/adapters/traces.py) sends every string a person or a document may have written through a
redactor. Two facts the request thread knows let it send some of them through a cheaper one, without removing
less than the trace policy asks:

- **Already redacted upstream.** The support graph's first node (`redact`, nodes/support/redact.py) overwrites
  the user's message with the memory redactor's output before any other node sees it. A record string equal to
  what that node wrote has been through the memory redactor's detectors: every secret and every memory kind is
  gone. It only needs the kinds the trace policy adds to memory's (names, IP addresses): `TraceRedactors.upstream`
  runs those and no secret detector.
- **Names only from documents.** The names detector (PersonNames) keeps a span only where one of its words is
  name-like (name_words.py), so a text whose every name-like word sits in verbatim document text (a title, a
  section heading, the body of a chunk this run retrieved) holds no name that is not a document's; documents keep
  their names under the `documents` policy (titles and sections are stored that way already). Such a text goes
  through `TraceRedactors.no_names`: secrets and every other kind of the trace policy, no names model — which is
  most of a trace record's redaction CPU (the answer quoting an article).

The same holds for the graph's own fixed wording: a word inside a verbatim occurrence of one of the phrases the
support graph writes around its values (a "couldn't find" reply's sentences, the answer plan's reasoning:
`support_phrases`) is the system's, not a person's; so is the marker the recorder appends to a text it cut
("… [1576 chars]").

Anything not proven goes through the full trace redactor, as before.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

from core.ports import Redactor

# record keys the writer reads and never stores: the evidence the request thread collected (RunRecorder)
UPSTREAM_KEY = "_redacted_upstream"  # strings the `redact` node wrote (the memory redactor's output)
DOCUMENTS_KEY = "_document_texts"  # texts of the chunks this run retrieved (never stored: chunk bodies)
EVIDENCE_KEYS = (UPSTREAM_KEY, DOCUMENTS_KEY)
MAX_DOCUMENT_TEXTS = 64  # chunk texts kept as evidence per run
MAX_ARTICLES = 6  # documents a record cites whose chunks the writer reads as evidence (an answer quotes one)

_WORD = re.compile(r"[^\W\d_][^\W\d_'’\-]*")  # as name_words._WORD: what the names detector judges word by word
CONTEXT_CHARS = 24  # a name-like word counts as a document's when it and this much around it (on its line) are
MIN_CONTEXT_CHARS = 16  # and at least this much context exists: a lone word is never taken for a document's
# what app/adapters/traces.py `_cut` appends to a string it shortened: the system's words, not the text's
_CUT_MARK = re.compile(r"… \[\d+ chars\]\Z")


def support_phrases() -> tuple[str, ...]:
    """The support graph's fixed wording around the values it writes into texts (nodes/support)."""
    from nodes.support.modes import reason_phrases
    from nodes.support.replies import not_found_phrases

    return (*reason_phrases(), *not_found_phrases())


def without_evidence(record: Any) -> Any:
    """`record` without the evidence keys (what is stored)."""
    if isinstance(record, dict) and any(k in record for k in EVIDENCE_KEYS):
        return {k: v for k, v in record.items() if k not in EVIDENCE_KEYS}
    return record


@dataclass
class TraceRedactors:
    """The trace redactor, and the two narrower ones a proven string may use instead (None: not available)."""

    full: Redactor
    upstream: Redactor | None = None  # the trace kinds memory does not remove; no secret detectors
    no_names: Redactor | None = None  # the trace policy less names
    name_words: Any = field(default=None, repr=False)  # NameWords, loaded on first use (the writer thread)
    # doc_id -> the texts of its chunks (the index's): the sections an answer quotes beyond the retrieved chunks
    document_texts: Callable[[str], list[str]] | None = None
    # fixed wording the system writes around its values (`support_phrases`): proven like a record's titles
    system_phrases: tuple[str, ...] = ()

    @classmethod
    def build(
        cls,
        trace: Redactor,
        memory: Redactor | None,
        document_texts: Callable[[str], list[str]] | None = None,
        system_phrases: Iterable[str] = (),
    ) -> TraceRedactors:
        """The narrower redactors when `trace` (and `memory`) are the service's PolicyRedactors on one engine."""
        from app.adapters.redaction.engine import PolicyRedactor, RedactionEngine

        if not isinstance(trace, PolicyRedactor):
            return cls(trace)
        engine = trace.engine
        upstream = None
        if (
            isinstance(memory, PolicyRedactor)
            and memory.engine is engine
            and memory.pii_kinds <= trace.pii_kinds
            and memory.destination == "memory"
        ):
            # the same personal-data detectors; the secret detectors already ran on this text (memory's)
            delta = trace.pii_kinds - memory.pii_kinds
            upstream = PolicyRedactor(
                RedactionEngine([], engine.pii_detectors, max_chars=engine.max_chars), delta, destination="trace"
            )
        no_names = None
        if "PERSON" in trace.pii_kinds:
            no_names = PolicyRedactor(engine, trace.pii_kinds - {"PERSON"}, destination="trace")
        return cls(trace, upstream, no_names, document_texts=document_texts, system_phrases=tuple(system_phrases))

    def words(self):
        if self.name_words is None:
            from app.adapters.redaction.name_words import load_name_words

            self.name_words = load_name_words()
        return self.name_words


class Provenance:
    """For one record: which redactor each of its strings goes through (`choose`)."""

    def __init__(
        self,
        record: Any,
        redactors: TraceRedactors,
        document_values: Iterable[str] = (),
        doc_ids: list[str] | None = None,
    ) -> None:
        self._redactors = redactors
        evidence = record if isinstance(record, dict) else {}
        self._upstream = frozenset(evidence.get(UPSTREAM_KEY) or ()) if redactors.upstream is not None else frozenset()
        self._chunks = list(evidence.get(DOCUMENTS_KEY) or ()) if redactors.no_names is not None else []
        # titles, sections and sources of the record (stored under the documents policy) and the values the system
        # wrote by construction (enums, node names: stored as they are)
        # and the system's fixed wording around its values
        self._short = sorted(
            {v for v in (*document_values, *redactors.system_phrases) if len(v.strip()) >= 4}, key=len, reverse=True
        )
        self._decided: dict[str, Redactor] = {}
        # the documents the record cites (`doc_ids`: as the writer's survey of the record already found them)
        self._articles = (
            (_doc_ids(record) if doc_ids is None else list(doc_ids)[:MAX_ARTICLES])
            if redactors.no_names is not None and redactors.document_texts
            else []
        )

    def choose(self, value: str) -> Redactor:
        """The redactor for `value`, a string of the record that is not a document value (those keep theirs)."""
        chosen = self._decided.get(value)
        if chosen is None:
            chosen = self._decided[value] = self._choose(value)
        return chosen

    def _choose(self, value: str) -> Redactor:
        redactors = self._redactors
        if value in self._upstream and redactors.upstream is not None:
            return redactors.upstream
        if redactors.no_names is None or not (self._chunks or self._short or self._articles):
            return redactors.full
        if self.names_only_from_documents(value):
            return redactors.no_names
        if self._articles and redactors.document_texts is not None:  # the cited articles' whole text, read once
            for doc_id in self._articles:
                try:
                    self._chunks.extend(redactors.document_texts(doc_id))
                except Exception:  # noqa: BLE001 — evidence only: without it the text takes the full redactor
                    pass
            self._articles = []
            if self.names_only_from_documents(value):
                return redactors.no_names
        return redactors.full

    def names_only_from_documents(self, text: str) -> bool:
        """Every name-like word of `text` (any case: what the names detector could keep) lies in verbatim document
        text: inside a title, section or source of the record that `text` quotes (or a value the system made, such
        as a response mode), or with its context on its line in the body of a chunk this run retrieved. False when one does not (or there are none to prove)."""
        words = self._redactors.words()
        text = _CUT_MARK.sub("", text)  # (the recorder's marker of a cut text is not the text's)
        covered = []
        for value in self._short:
            at = text.find(value)
            while at >= 0:
                covered.append((at, at + len(value)))
                at = text.find(value, at + 1)
        language = None
        for m in _WORD.finditer(text):
            if not _maybe_name_like(words, m.group(0)):
                continue  # (not name-like in any language: no need to tell the text's language)
            language = language or words.language(text)
            if not words.name_like(m.group(0), language):
                continue
            start, end = m.span()
            if any(a <= start and end <= b for a, b in covered):
                continue
            line_start = text.rfind("\n", 0, start) + 1
            line_end = text.find("\n", end)
            line_end = len(text) if line_end < 0 else line_end
            context = text[max(line_start, start - CONTEXT_CHARS) : min(line_end, end + CONTEXT_CHARS)].strip()
            if len(context) < (end - start) + MIN_CONTEXT_CHARS or not any(context in chunk for chunk in self._chunks):
                return False
        return True


def _doc_ids(record: Any) -> list[str]:
    """The documents a record names (`doc_id` values, in order, at most MAX_ARTICLES)."""
    found: dict[str, None] = {}

    def walk(value: Any, key: str) -> None:
        if len(found) >= MAX_ARTICLES:
            return
        if isinstance(value, str):
            if key == "doc_id" and value:
                found[value] = None
        elif isinstance(value, dict):
            for k, v in value.items():
                if k not in EVIDENCE_KEYS:
                    walk(v, k)
        elif isinstance(value, list):
            for v in value:
                walk(v, key)

    walk(record, "")
    return list(found)


def _maybe_name_like(words: Any, word: str) -> bool:
    """False only for a word `NameWords.name_like` rejects in every language: not in the name lists and a common
    English word (name_like's other case). Cheaper than finding the text's language first."""
    from app.adapters.redaction.name_words import _POSSESSIVE, COMMON_ZIPF

    low = _POSSESSIVE.sub("", word.lower())
    return low in words.given or low in words.family or words.english.get(low, 0.0) < COMMON_ZIPF
