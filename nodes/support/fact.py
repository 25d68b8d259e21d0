"""Fact path: a fact-seeking question gets one short, cited sentence, not a whole passage.

"What is the VPN server address?" or "How many days until my password expires?" is answered by one
sentence of the knowledge base. No extractive-QA model runs offline (see MODELS.md), so this is
rule-based on purpose, and fast (well under a millisecond per chunk):

1. `is_fact_question` — keyword intent: a question opening (what is / which / when / who / how many …)
   or a fact noun (phone number, address, port …), and not a procedure ("how do I …"), a problem
   ("my X doesn't work") or small talk.
2. `expected_shape` — the question word says what the answer looks like: a quantity for "how many /
   how long", a hostname, URL, e-mail or IP for "address / server / url", a phone number for
   "phone / call", a time for "when", a contact for "who", a definition for "what is X".
3. `extract_span` — every sentence of the best confidently retrieved chunks is scored by the share of
   the question's content words it holds, whether it has the expected shape, and the chunk's retrieval
   score; the best becomes a `FactAnswer` (≤ MAX_SPAN_CHARS) with a 0..1 confidence.

Below the confidence threshold the answer node falls through to its normal path. Pure functions.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import Any, Literal, Mapping, Sequence

from core.lexicon import asks_status, content_words, is_troubleshooting, small_talk_kind, words
from core.records import RetrievedChunk
from nodes.support.article_answer import is_confident
from nodes.support.extractive import cite, to_source

log = logging.getLogger(__name__)

Shape = Literal["quantity", "port", "time", "phone", "address", "name", "contact", "place", "definition"]

MAX_SPAN_CHARS = 300
MIN_SPAN_CHARS = 12
MAX_CHUNKS = 3  # the best confident chunks read for a span; the rest rank too low to be the answer
MAX_SENTENCES = 60  # per chunk: bounded work on a long chunk

# how the parts weigh in the confidence (sum 1): the question's words in the sentence, the expected
# answer shape present, the chunk's retrieval score
W_OVERLAP, W_SHAPE, W_RETRIEVAL = 0.5, 0.3, 0.2
FRAME_BONUS = 0.2  # the sentence also names what was asked for ("Phone:", "address", "port")
# a definition or a place has no sharp shape to check ("what is Smart Hub?", "where is …"): its confidence
# is scaled down so that only a sentence that clearly holds the term gets through
VAGUE_SHAPE_FACTOR = 0.85
VAGUE_SHAPES: frozenset[str] = frozenset({"definition", "place"})

# --- 1. intent ------------------------------------------------------------------------------------------
_PROCEDURE = re.compile(
    r"^\s*(?:please\s+|so\s+|and\s+|ok,?\s+)?(?:"
    r"how\s+(?:do|does|did|can|could|should|would|will|to|i|we)\b|"
    r"(?:tell|show|teach|guide|walk|help)\s+me\b(?!\s+(?:the|your|what|which|who|when))|"
    r"explain\b|steps?\b|instructions?\b|"
    r"what\s+(?:are\s+|is\s+)?(?:the\s+)?(?:steps?|procedure|process|best\s+way|way|instructions?)\b|"
    r"what\s+(?:should|do|can|must)\s+(?:i|we)\s+do\b|what\s+to\s+do\b|"
    r"(?:can|could|may|should|shall|do|does|is|are)\s+(?:i|we|you|it|there|my)\b(?!\s+(?:tell|give)\s+me)|"
    r"why\b|i\s+(?:want|need|would like|wanna)\s+to\b)",
    re.I,
)
_FACT_OPENING = re.compile(
    r"^\s*(?:please\s+|so\s+|and\s+|ok,?\s+|hi,?\s+|hello,?\s+)?(?:"
    r"what(?:'s|s|\s+is|\s+was|\s+are|\s+were)\b|"
    r"what\s+(?:time|day|date|number|port|address|url|hours?|extension|version|size|limit)\b|"
    r"which\b|who(?:'s|m|\s+is|\s+are|\s+do|\s+does|\s+should|\s+can|\s+to)?\b|"
    r"when\s+(?:is|are|was|were|do|does|did|will|can|should|must|exactly)\b|"
    r"where(?:'s|\s+is|\s+are)\b|"
    r"how\s+(?:many|much|long|often|old|big|large|fast|soon|early|late)\b|"
    r"(?:can|could)\s+you\s+(?:tell|give)\s+me\s+the\b|(?:tell|give)\s+me\s+the\b|"
    r"is\s+there\s+an?\s+(?:number|phone|address|limit|deadline|extension)\b)",
    re.I,
)
# "what are …" lists, "what is the difference …" and opinions are conversations, not facts
_NOT_A_FACT = re.compile(
    r"\b(difference|differences|compare|comparison|recommend\w*|best|better|should i|pros and cons|"
    r"advantages?|benefits?|steps?|procedure|how to|how do)\b|^\s*what'?s\s+up\b|^\s*how\s+are\s+you\b",
    re.I,
)
_FACT_NOUN = re.compile(
    r"\b(phone(?:\s+number)?|telephone|extension|hotline|e-?mail\s+address|ip\s+address|web\s*address|url|"
    r"link|hostname|host\s+name|server\s+(?:name|address)|gateway|port(?:\s+number)?|opening\s+hours|"
    r"office\s+hours|hours|deadline|default\s+(?:pin|password)|how\s+many|how\s+long|address)\b",
    re.I,
)
# two questions in one ("what is X and how does it work?") want more than one sentence
_COMPOUND = re.compile(
    r"\?\s*\S|\band\s+(?:how|what|where|why|when|which|who|is|are|can|do)\b|"
    r"[.;]\s*(?:how|what|where|why|when|which|who)\b",
    re.I,
)
_WHO_TO_CALL = re.compile(
    r"\b(who|which\s+(?:number|team|extension))\b.{0,30}\b(call|contact|ring|phone|e-?mail|ask)\b", re.I
)
_WHAT_ARE_FACT = re.compile(
    r"^\s*what\s+are\b.{0,40}\b(hours|times|numbers?|addresses|ports?|limits?|"
    r"deadlines?|names?|urls?|extensions?|sizes?)\b",
    re.I,
)


def is_fact_question(text: str) -> bool:
    """A question asking for one fact (an address, a number, a name, a time), not for steps or a fix."""
    text = (text or "").strip()
    if not text or len(text) > 300 or small_talk_kind(text):
        return False
    if _PROCEDURE.match(text) and not _FACT_OPENING.match(text):
        return False
    if _NOT_A_FACT.search(text) or _COMPOUND.search(text) or asks_status(text):
        return False
    if expected_shape(text) in VAGUE_SHAPES and re.search(r"\band\b", text, re.I):
        return False  # "what is Power Saving Mode and Motion Lighting?": two definitions
    if is_troubleshooting(text) and not _WHO_TO_CALL.search(text):
        return False  # "what is wrong with my VPN" is a problem to troubleshoot, not a fact
    if not _content_terms(text) and not _FACT_NOUN.search(text):
        return False  # "what is it?" names nothing to look up
    if re.match(r"^\s*what\s+are\b", text, re.I):
        return bool(_WHAT_ARE_FACT.match(text))  # "what are the password rules" wants a list
    if _FACT_OPENING.match(text):
        return True
    # no question opening: "service desk phone number?", "I need the VPN address"
    return bool(_FACT_NOUN.search(text)) and not _PROCEDURE.match(text)


# --- 2. expected answer shape ------------------------------------------------------------------------------
_SHAPE_RULES: tuple[tuple[Shape, re.Pattern[str]], ...] = (
    ("port", re.compile(r"\bports?\b", re.I)),
    (
        "quantity",
        re.compile(
            r"\bhow\s+(?:many|much|long|often|old|big|large|fast)\b|\b(?:port|limit|size|maximum|"
            r"minimum|max|min|version|pin)\b",
            re.I,
        ),
    ),
    ("phone", re.compile(r"\b(phone|telephone|extension|ext|hotline|dial|ring|call)\b", re.I)),
    (
        "address",
        re.compile(
            r"\b(address|url|link|website|web\s*site|site|portal|hostname|host|server|gateway|"
            r"domain|e-?mail\s+address|ip)\b",
            re.I,
        ),
    ),
    ("time", re.compile(r"\b(when|what\s+time|what\s+day|date|hours|deadline|until|open|close[sd]?)\b", re.I)),
    ("name", re.compile(r"\b(name|named|called|ssid)\b", re.I)),
    ("contact", re.compile(r"\b(who|whom|contact|team|responsible)\b", re.I)),
    ("place", re.compile(r"\bwhere\b", re.I)),
)


def expected_shape(question: str) -> Shape:
    """What the answer to a fact question looks like, from its question and fact words."""
    for shape, pattern in _SHAPE_RULES:
        if pattern.search(question):
            return shape
    return "definition"


_NUMBER_WORDS = (
    r"(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty|"
    r"forty|fifty|sixty|ninety|hundred)"
)
_UNITS = (
    r"(?:seconds?|secs?|minutes?|mins?|hours?|hrs?|days?|weeks?|months?|years?|characters?|chars?|digits?|"
    r"times|attempts?|tries|devices?|gb|mb|kb|tb|%|percent|inch(?:es)?|cm|mm|meters?|metres?|feet|ft|"
    r"users?|people|passwords?|licen[cs]es?|pages?|hz|w|v)"
)
_URL = r"https?://[^\s)>\]`'\"]+"
_EMAIL = r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+"
_HOST = (
    r"\b(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+(?:example|com|net|org|io|local|internal|corp|lan|test|"
    r"co|uk|de|fr|nl|eu|us|gov|edu|cloud|app|dev|ai|info|biz)\b"
)
_IP = r"\b\d{1,3}(?:\.\d{1,3}){3}\b"
_PHONE = r"\b(?:ext\.?|extension|x)\s?\d{3,6}\b|(?:\+\d{1,3}[\s.-]?)?\(?\d{2,4}\)?[\s.-]\d{3,4}[\s.-]?\d{2,4}\b"
_CLOCK = r"\b\d{1,2}[:.]\d{2}\b|\b\d{1,2}\s?(?:am|pm)\b"
_DAY = (
    r"\b(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|weekdays?|weekends?|midnight|noon|"
    r"january|february|march|april|may|june|july|august|september|october|november|december|"
    r"daily|weekly|monthly|yearly|annually)\b"
)
_QUANTITY = rf"\b(?:\d+(?:[.,]\d+)?|{_NUMBER_WORDS})\s*(?:-\s*)?{_UNITS}\b|\b\d+(?:[.,]\d+)?\b|'\d+'"
_NAME = r"(?<![.!?]\s)(?<!^)\b[A-Z][a-z]+(?:\s+[A-Z][A-Za-z]+)+\b"
_MENU_PATH = r"\b\w[\w ]{0,30}\s*>\s*\w[\w ]{0,30}"
_CODE = r"`[^`\n]{2,60}`|'[^'\n]{2,40}'"

_SHAPE_PATTERNS: dict[Shape, tuple[tuple[re.Pattern[str], float], ...]] = {
    # (pattern, strength): a unit-bearing number is stronger evidence than a bare number
    "quantity": (
        (re.compile(rf"\b(?:\d+(?:[.,]\d+)?|{_NUMBER_WORDS})\s*(?:-\s*)?{_UNITS}\b", re.I), 1.0),
        (re.compile(r"\b\d+(?:[.,]\d+)?\b|'\d+\.?'"), 0.8),
    ),
    "time": (
        (re.compile(_CLOCK, re.I), 1.0),
        (re.compile(_DAY, re.I), 0.9),
        (re.compile(rf"\b(?:\d+|{_NUMBER_WORDS})\s*{_UNITS}\b", re.I), 0.8),
        (re.compile(r"\b(?:before|after|within|until|every)\b", re.I), 0.4),
    ),
    "port": (
        (re.compile(r"\bports?\s+\d{2,5}\b|\b\d{2,5}/(?:tcp|udp)\b|:\d{2,5}\b", re.I), 1.0),
        (re.compile(r"\b\d{2,5}\b"), 0.5),
    ),
    "phone": ((re.compile(_PHONE, re.I), 1.0),),
    "address": (
        (re.compile(_URL, re.I), 1.0),
        (re.compile(_EMAIL, re.I), 1.0),
        (re.compile(_HOST, re.I), 1.0),
        (re.compile(_IP), 1.0),
        (re.compile(_CODE), 0.6),
    ),
    "name": (
        (re.compile(r"`[^`\n]{2,60}`|\"[^\"\n]{2,60}\"|'[^'\n]{2,40}'"), 0.9),
        (re.compile(r"\b[A-Z]\w{2,}-[A-Z]\w{2,}\b"), 0.9),
        (re.compile(_HOST, re.I), 0.8),
        (re.compile(_NAME), 0.5),
    ),
    "contact": (
        (re.compile(_PHONE, re.I), 1.0),
        (re.compile(_EMAIL, re.I), 1.0),
        (re.compile(_URL, re.I), 0.8),
        (re.compile(_NAME), 0.6),
    ),
    "place": (
        (re.compile(_URL, re.I), 1.0),
        (re.compile(_MENU_PATH), 0.9),
        (re.compile(r"\b(?:in|on|at|under|from)\s+(?:the\s+)?[A-Z*`]", re.M), 0.6),
    ),
    "definition": (
        (
            re.compile(
                r"\b(?:is|are|means|refers\s+to|lets\s+you|allows\s+you|enables|provides|"
                r"gives\s+you|is\s+used\s+to|can\s+be\s+used)\b",
                re.I,
            ),
            1.0,
        ),
    ),
}


def shape_strength(sentence: str, shape: Shape, question: str = "") -> float:
    """0..1: how clearly the sentence holds an answer of the expected shape (one the question does not
    already state: "what is port 443 for" is not answered by "443")."""
    asked = question.lower()
    best = 0.0
    for pattern, strength in _SHAPE_PATTERNS[shape]:
        for match in pattern.finditer(sentence):
            found = match.group(0).strip().lower()
            if shape != "definition" and found and found in asked:
                continue
            best = max(best, strength)
            break
    return best


# --- 3. span extraction ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class FactAnswer:
    """A short answer span, how sure the rules are of it (0..1), and the chunk it was quoted from."""

    span: str
    confidence: float
    chunk: RetrievedChunk
    shape: Shape


# question frame words say which *kind* of answer is wanted, not what it is about: the shape checks them
_FRAME = frozenset(
    "address addresses url urls link links website site hostname host server servers gateway domain number numbers "
    "phone telephone extension ext hotline call ring dial contact contacts port ports many much long often old "
    "big large fast time times day days date hours hour deadline name names named called ssid default value "
    "values limit exactly whom open opens close closes available what's whats who's whos where's wheres when's "
    "whens which's".split()
)
_ABBREVIATION = re.compile(r"\b(?:e\.g|i\.e|etc|ext|approx|no|vs|incl|dept|tel|min|max|fig|p)\.$", re.I)
_SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(\[*`])")
_LIST_MARKER = re.compile(r"^\s*(?:[-*•]|\d+[.)]|#+)\s+")


def _content_terms(text: str) -> list[str]:
    return [w.strip(".'-") for w in content_words(text) if w.strip(".'-")]


def sentences(text: str) -> list[str]:
    """The sentences of a chunk: each line (a block: paragraph, list item) split at sentence ends."""
    found: list[str] = []
    for line in text.splitlines():
        line = _LIST_MARKER.sub("", line).strip()
        if not line:
            continue
        pieces: list[str] = []
        for piece in _SENTENCE_BREAK.split(line):
            if pieces and _ABBREVIATION.search(pieces[-1]):
                pieces[-1] += " " + piece  # "ext. 4357", "e.g. Outlook" do not end a sentence
            else:
                pieces.append(piece)
        found.extend(p.strip() for p in pieces if p.strip())
        if len(found) >= MAX_SENTENCES:
            break
    return found[:MAX_SENTENCES]


def _term_hits(terms: Sequence[str], text: str) -> float:
    """Share of terms found in the text; a shared 5-letter stem counts ("expires" ~ "expiry")."""
    if not terms:
        return 0.0
    present = {w.strip(".'-") for w in words(text)}
    stems = {w[:5] for w in present if len(w) > 4}
    hits = sum(
        1 for t in terms if t in present or (len(t) > 4 and t[:5] in stems) or (t.endswith("s") and t[:-1] in present)
    )
    return hits / len(terms)


def _echoes(question: str, sentence: str) -> bool:
    """The sentence says nothing the question did not: every one of its words is in the question."""
    asked = set(words(question))
    said = [w for w in words(sentence) if w not in asked]
    return len(said) <= 1


def _bounded(sentence: str, terms: list[str], shape: Shape, question: str) -> str:
    """The sentence, or — when it is longer than MAX_SPAN_CHARS — its best run of clauses."""
    if len(sentence) <= MAX_SPAN_CHARS:
        return sentence
    clauses = [c for c in re.split(r"(?<=[;:,])\s+|\s+(?=-\s)", sentence) if c]
    scored = [(_term_hits(terms, c) + shape_strength(c, shape, question), i) for i, c in enumerate(clauses)]
    _, best = max(scored)
    start = end = best
    while True:  # grow around the best clause while it fits, the higher-scoring neighbour first
        options = [i for i in (start - 1, end + 1) if 0 <= i < len(clauses)]
        options.sort(key=lambda i: -scored[i][0])
        grown = False
        for i in options:
            lo, hi = min(start, i), max(end, i)
            if len(" ".join(clauses[lo : hi + 1])) <= MAX_SPAN_CHARS:
                start, end, grown = lo, hi, True
                break
        if not grown:
            break
    span = " ".join(clauses[start : end + 1])
    if len(span) > MAX_SPAN_CHARS:
        span = span[: MAX_SPAN_CHARS - 1].rsplit(" ", 1)[0] + "…"
    return span


def score_sentence(
    question: str, sentence: str, chunk: RetrievedChunk, shape: Shape, terms: list[str], frame: Sequence[str] = ()
) -> float:
    """The 0..1 confidence that this sentence answers the question."""
    # a list item under "How to contact the service desk" is about the service desk: the heading counts
    heading = f"{chunk.get('title', '')} {chunk.get('section', '')}"
    overlap = 0.5 * _term_hits(terms, sentence) + 0.5 * _term_hits(terms, f"{heading} {sentence}")
    strength = shape_strength(sentence, shape, question)
    if strength and frame and _term_hits(frame, sentence):
        strength = min(1.0, strength + FRAME_BONUS)  # "Phone: ext. 4357" for "what's the phone number"
    retrieval = max(0.0, min(1.0, float(chunk.get("score", 0.0))))
    confidence = W_OVERLAP * overlap + W_SHAPE * strength + W_RETRIEVAL * retrieval
    if shape not in VAGUE_SHAPES and strength == 0.0:
        confidence *= 0.5  # "how many days …" answered without a number is not an answer
    if shape in VAGUE_SHAPES:
        confidence *= VAGUE_SHAPE_FACTOR
    if len(sentence) < MIN_SPAN_CHARS or len(words(sentence)) < 3:
        confidence *= 0.5  # a heading fragment, not a sentence
    return round(min(1.0, confidence), 4)


def extract_span(question: str, chunks: list[RetrievedChunk], max_chunks: int = MAX_CHUNKS) -> FactAnswer | None:
    """The best short answer span in the best chunks, with its confidence; None when no sentence fits."""
    shape = expected_shape(question)
    asked = _content_terms(question)
    terms = [t for t in asked if t not in _FRAME] or asked
    frame = [t for t in asked if t in _FRAME]
    best: FactAnswer | None = None
    for chunk in sorted(chunks, key=lambda c: c.get("score", 0.0), reverse=True)[:max_chunks]:
        for sentence in sentences(chunk.get("text", "")):
            if sentence.endswith("?") or _echoes(question, sentence):
                continue  # a heading such as "What is Remote Support?" restates the question, it does not answer it
            confidence = score_sentence(question, sentence, chunk, shape, terms, frame)
            if best is None or confidence > best.confidence:
                best = FactAnswer(
                    span=_bounded(sentence, terms, shape, question), confidence=confidence, chunk=chunk, shape=shape
                )
    if best is None or not best.span:
        return None
    return best


# --- 4. the answer node's fact path ----------------------------------------------------------------------
def fact_reply(state: Mapping[str, Any], ctx: Any) -> dict | None:
    """The answer node's update for a fact question answered confidently, else None (the normal path runs).

    Not for small talk, status questions (the status page answers those), a request that asked for
    general knowledge only (LLM_ONLY), or collections that leave out the main knowledge base.
    """
    query = state["turn"].get("query", "")
    if not getattr(ctx, "fact_path", False) or state["turn"].get("small_talk") or asks_status(query):
        return None
    mode = state["turn"].get("response_mode") or getattr(getattr(ctx, "policy", None), "response_mode", "") or ""
    if str(getattr(mode, "value", mode)).upper() == "LLM_ONLY":
        return None
    wanted = state["turn"].get("collections")
    if wanted and getattr(ctx, "main_collection", "kb") not in wanted:
        return None
    if not is_fact_question(query):
        return None
    if "articles" in state["turn"]:  # only from the article deskmate answers from, and only when it answers at all
        if not is_confident(state, ctx):  # type: ignore[arg-type]
            return None
        best = state["turn"]["articles"][0]["doc_id"]
        confident = [c for c in state["turn"].get("retrieved_chunks", []) if c["doc_id"] == best]
    else:
        confident = [c for c in state["turn"].get("retrieved_chunks", []) if c["score"] >= ctx.min_score]
    found = extract_span(query, confident) if confident else None
    if found is None or found.confidence < ctx.fact_min_confidence:
        return None
    source = to_source(1, found.chunk)
    log.info("fact path: %s answer, confidence %.2f from %s", found.shape, found.confidence, source["chunk_id"])
    return {"answer": f"{found.span} [1]\n\nSources:\n{cite(1, source)}", "sources": [source], "answer_path": "fact"}
