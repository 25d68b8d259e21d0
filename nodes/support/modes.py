"""Response modes: how one answer combines our documentation with the LLM's general knowledge.

`plan_answer` is a pure decision over the retrieval profile; the answer step carries it out. The
profile has three columns: **none** (no documents), **weak** (documents, best confidence below
`min_confidence`, or of unknown confidence) and **confident** (best confidence ≥ `min_confidence`).
Sources: `documents` (cited answer from the documents alone), `llm` (general knowledge, no citations),
`documents+llm` (cited documents first, then marked general knowledge for the gaps), `refuse` (the
caller says the documentation does not cover it) and `needs_llm` (the mode needed an LLM and there is
none and no documents: the caller says "not found" with the plan's notice).

With an LLM available:

| mode            | none   | weak           | confident      | in words                                          |
|-----------------|--------|----------------|----------------|---------------------------------------------------|
| RAG_ONLY        | refuse | documents      | documents      | only the documentation, refuse without it         |
| LLM_ONLY        | llm    | llm            | llm            | only general knowledge, documents ignored         |
| HYBRID          | llm    | documents+llm  | documents+llm  | documents first, general knowledge for the gaps   |
| SMART_FALLBACK* | llm    | documents+llm  | documents      | documents alone only when confident (the default) |
| RAG_PRIORITY    | llm    | documents      | documents      | any documents win; general knowledge only if none |
| LLM_PRIORITY    | llm    | llm            | documents+llm  | general knowledge, confident documents support it |

*SMART_FALLBACK's weak and none columns follow FALLBACK_STRATEGY: `hybrid` (default) as shown;
`llm_knowledge` → llm for weak too (weak documents are not trusted); `refuse` → refuse for weak and
none (the pre-modes behaviour: no general knowledge at all). Other modes ignore the strategy.

Without an LLM nothing fails: a plan whose source is `llm` or `documents+llm` degrades on purpose to
`documents` when there are any (weak or confident), else to `needs_llm`; `degraded` is True and the
notice says which mode wanted an LLM. `documents` and `refuse` plans are the same with or without one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import Enum
from typing import Literal

from core.errors import InvalidDirective

Source = Literal["documents", "llm", "documents+llm", "refuse", "needs_llm"]
Strength = Literal["none", "weak", "confident"]


class ResponseMode(str, Enum):  # noqa: UP042 (str() of a member stays its qualified name)
    RAG_ONLY = "RAG_ONLY"
    LLM_ONLY = "LLM_ONLY"
    HYBRID = "HYBRID"
    SMART_FALLBACK = "SMART_FALLBACK"
    RAG_PRIORITY = "RAG_PRIORITY"
    LLM_PRIORITY = "LLM_PRIORITY"

    def __str__(self) -> str:
        return self.value


DEFAULT_MODE = ResponseMode.SMART_FALLBACK
DEFAULT_MIN_CONFIDENCE = 0.7
FALLBACK_STRATEGIES: tuple[str, ...] = ("hybrid", "llm_knowledge", "refuse")
DEFAULT_FALLBACK_STRATEGY = "hybrid"
MODE_NAMES = ", ".join(m.value for m in ResponseMode)

# The fixed heading the hybrid prompt asks the LLM to put above general knowledge (tests keep them in step).
GENERAL_KNOWLEDGE_HEADING = "General knowledge (not from our documentation):"

NOTICE_LLM = "This answer comes from general knowledge, not from our documentation."
NOTICE_MIXED = (
    "This answer combines our documentation (the cited parts) with general knowledge (the part marked as such)."
)
NOTICE_RAG_ONLY = "RAG_ONLY mode answers only from our documentation, and it has nothing on this."
NOTICE_STRATEGY_REFUSE = (
    "Our documentation has nothing confident enough on this, and this chat is set not to answer from general knowledge."
)
NOTICE_NO_LLM_ANSWER = "No LLM is configured, so {mode} mode cannot answer; here is what the documentation says:"
NOTICE_NO_LLM_ADD = (
    "No LLM is configured, so {mode} mode cannot add general knowledge; here is what the documentation says:"
)
NOTICE_NEEDS_LLM = (
    "No LLM is configured, so {mode} mode cannot answer from general knowledge, "
    "and our documentation has nothing on this."
)

_TABLE: dict[ResponseMode, dict[Strength, Source]] = {
    ResponseMode.RAG_ONLY: {"none": "refuse", "weak": "documents", "confident": "documents"},
    ResponseMode.LLM_ONLY: {"none": "llm", "weak": "llm", "confident": "llm"},
    ResponseMode.HYBRID: {"none": "llm", "weak": "documents+llm", "confident": "documents+llm"},
    ResponseMode.SMART_FALLBACK: {"none": "llm", "weak": "documents+llm", "confident": "documents"},
    ResponseMode.RAG_PRIORITY: {"none": "llm", "weak": "documents", "confident": "documents"},
    ResponseMode.LLM_PRIORITY: {"none": "llm", "weak": "llm", "confident": "documents+llm"},
}
_SMART_FALLBACK_BY_STRATEGY: dict[str, dict[Strength, Source]] = {
    "hybrid": _TABLE[ResponseMode.SMART_FALLBACK],
    "llm_knowledge": {"none": "llm", "weak": "llm", "confident": "documents"},
    "refuse": {"none": "refuse", "weak": "refuse", "confident": "documents"},
}
_ACTION: dict[Source, str] = {
    "documents": "the answer comes from the documents alone",
    "llm": "the answer comes from general knowledge",
    "documents+llm": "the documents are combined with general knowledge",
    "refuse": "the question is not answered from general knowledge",
    "needs_llm": "nothing can answer it",
}

# the plan's reasoning (`AnswerPlan.reason`, for the trace): these templates around the mode, the column's words,
# the source and the action
_REASON = "{mode}: {profile}, so {action}."
_REASON_NO_LLM = "{mode}: {profile}, so it wanted {wanted}; no LLM is available, so {action}."
_NO_DOCUMENTS = "no documents matched"
_UNKNOWN_CONFIDENCE = "documents matched with unknown confidence"
_CONFIDENCE = "the best document confidence {confidence:.2f} {relation} {min_confidence:.2f}"
_RELATIONS = ("reaches", "is below")


def reason_phrases() -> tuple[str, ...]:
    """The fixed wording of every plan's reasoning (the templates' literal parts, the mode names, the sources,
    the actions): the trace writer counts a word inside one of them, verbatim, as the system's, not a person's."""
    fixed = [piece for template in (_REASON, _REASON_NO_LLM, _CONFIDENCE) for piece in literal_parts(template)]
    wanted = [
        _REASON_NO_LLM.split("{profile}", 1)[1].split("{action}", 1)[0].format(wanted=source) for source in _ACTION
    ]  # (", so it wanted llm; no LLM is available, so ": a source name on its own is too short to vouch for)
    return (
        *fixed,
        *wanted,
        _NO_DOCUMENTS,
        _UNKNOWN_CONFIDENCE,
        *_RELATIONS,
        *(mode.value for mode in ResponseMode),
        *_ACTION.values(),
        *_ACTION,
    )


def literal_parts(template: str) -> list[str]:
    """The text of a `str.format` template between its fields ("{n} steps from {title}" -> [" steps from "])."""
    import string

    return [literal for literal, *_ in string.Formatter().parse(template) if literal]


@dataclass(frozen=True)
class AnswerPlan:
    """What the answer step should do: `source`, why (`reason`, for the trace), what to tell the user."""

    mode: ResponseMode
    source: Source
    reason: str
    notice: str = ""
    degraded: bool = False  # True when the mode wanted an LLM and none is available


def parse_mode(raw: object) -> ResponseMode:
    """'hybrid', 'Smart-Fallback', 'LLM_ONLY' → a ResponseMode; anything else raises InvalidDirective."""
    name = "_".join(raw.replace("-", " ").upper().split()) if isinstance(raw, str) else ""
    try:
        return ResponseMode(name)
    except ValueError:
        shown = str(raw) if isinstance(raw, str) else type(raw).__name__
        shown = shown if len(shown) <= 40 else shown[:40] + "…"
        raise InvalidDirective(
            f"RESPONSE_MODE '{shown}' is not a response mode. Use one of {MODE_NAMES} "
            f"(for example the system-message line 'RESPONSE_MODE: HYBRID'), or leave it out for "
            f"{DEFAULT_MODE.value}."
        ) from None


def strength(*, confidence: float | None, has_documents: bool, min_confidence: float) -> Strength:
    """The profile column: none / weak / confident (documents of unknown confidence count as weak)."""
    if not has_documents:
        return "none"
    if confidence is None or math.isnan(confidence) or confidence < min_confidence:
        return "weak"
    return "confident"


def _profile_words(column: Strength, confidence: float | None, min_confidence: float) -> str:
    if column == "none":
        return _NO_DOCUMENTS
    if confidence is None or math.isnan(confidence):
        return _UNKNOWN_CONFIDENCE
    relation = _RELATIONS[0] if column == "confident" else _RELATIONS[1]
    return _CONFIDENCE.format(confidence=confidence, relation=relation, min_confidence=min_confidence)


def _notice(mode: ResponseMode, source: Source) -> str:
    if source == "llm":
        return NOTICE_LLM
    if source == "documents+llm":
        return NOTICE_MIXED
    if source == "refuse":
        return NOTICE_RAG_ONLY if mode is ResponseMode.RAG_ONLY else NOTICE_STRATEGY_REFUSE
    return ""


def plan_answer(
    mode: ResponseMode | str,
    *,
    confidence: float | None,
    has_documents: bool,
    llm_available: bool,
    min_confidence: float,
    fallback_strategy: str = DEFAULT_FALLBACK_STRATEGY,
) -> AnswerPlan:
    """The plan for one answer under `mode` (see the module table); never raises for a missing LLM."""
    mode = mode if isinstance(mode, ResponseMode) else parse_mode(mode)
    if not 0.0 <= min_confidence <= 1.0:
        raise ValueError(f"min_confidence must be between 0 and 1, got {min_confidence}")
    if fallback_strategy not in FALLBACK_STRATEGIES:
        raise ValueError(f"unknown fallback strategy {fallback_strategy!r}; use one of {FALLBACK_STRATEGIES}")
    column = strength(confidence=confidence, has_documents=has_documents, min_confidence=min_confidence)
    row = _SMART_FALLBACK_BY_STRATEGY[fallback_strategy] if mode is ResponseMode.SMART_FALLBACK else _TABLE[mode]
    wanted = row[column]
    profile = _profile_words(column, confidence, min_confidence)
    if llm_available or wanted in ("documents", "refuse"):
        reason = _REASON.format(mode=mode.value, profile=profile, action=_ACTION[wanted])
        return AnswerPlan(mode, wanted, reason, _notice(mode, wanted))
    if has_documents:
        template = NOTICE_NO_LLM_ANSWER if wanted == "llm" else NOTICE_NO_LLM_ADD
        return AnswerPlan(
            mode,
            "documents",
            _REASON_NO_LLM.format(mode=mode.value, profile=profile, wanted=wanted, action=_ACTION["documents"]),
            template.format(mode=mode.value),
            degraded=True,
        )
    return AnswerPlan(
        mode,
        "needs_llm",
        _REASON_NO_LLM.format(mode=mode.value, profile=profile, wanted=wanted, action=_ACTION["needs_llm"]),
        NOTICE_NEEDS_LLM.format(mode=mode.value),
        degraded=True,
    )
