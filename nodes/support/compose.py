"""The answer composer: pick the article, then the part of it that answers what was asked.

A search finds the passage most *like* the question. For a problem, that is usually the article's Symptoms —
the user's own words — while what the user needs is its Resolution. So the composer works on the article, not
on the chunk:

1. `question_type` — what the message asks: fix a problem, how do I, why, where, what is.
2. `rank_articles` — the searched chunks grouped by document; several good chunks of one article beat one
   lucky chunk.
3. `article_sections` — the chosen article read whole (every chunk, in order), as sections with their roles
   (core/roles.py).
4. `choose_target` — for a fix or a how-to, the resolution / workaround / procedure (all of it, in order; when
   the article offers "Method 1 / Method 2" the best-supported one, with the others named as alternatives); for
   "why", the cause; for "where" / "what is", the best-matching section.
5. `render` — the target quoted as written (numbered steps, the code and lists under them kept), a one-line
   "This matches: …" from the symptoms when the question was a problem, and the citation.

Pure functions: the answer and troubleshoot nodes call them with chunks the ports returned.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterable, Literal, Sequence

from core.lexicon import OS_LABELS, is_troubleshooting, is_wish, platforms
from core.readers import is_admin
from core.records import RetrievedChunk
from core.roles import ACTIONABLE, clean_heading, heading_role, section_role
from nodes.support.device_fit import asked_device, heading_device
from nodes.support.section_fit import SectionText, fit, question_terms

QuestionType = Literal["fix", "how-to", "why", "where", "what-is"]

MAX_ANSWER_CHARS = 2400  # the quoted part of an answer; longer resolutions end with a pointer to the article
MATCH_LINE_CHARS = 180
MATCH_LINE_SHARED = 2  # topic words the symptom line must share with the question to be shown as "This matches"
ARTICLE_SECOND_WEIGHT = 0.1  # an article's second-best chunk adds this share of its score
FIT_WEIGHT = 0.3  # a section whose heading covers the whole question gains this much over one that covers none
CONTENT_ROLES = frozenset({"info", "reference"})  # sections whose heading names no role: what they say is the answer
MIN_EVIDENCE = 0.1  # a section with less than this (no search hit, little of the question) is no candidate
# per step of the wanted roles' order (a fix: resolution, workaround, procedure): the evidence a role the question
# wants more is given ahead — much for a problem described ("keeps dropping"), whose answer is the troubleshooting
# rather than a set-up procedure that shares its words, a little otherwise
PROBLEM_PREFERENCE = 0.1
ROLE_PREFERENCE = 0.03
# an employee's section is preferred to one for the IT team unless the IT team's fits the question this much better
FOR_USER_MARGIN = 0.1
ALTERNATIVE_MARGIN = 0.05  # a later "Method n" is quoted first only when the search supports it this much more
ALTERNATIVE = re.compile(r"^(method|option|solution|resolution|workaround|approach|fix|way)\s*([0-9]+|[ivx]+)\b", re.I)
# headings that name only their part of a problem/solution pair ("Problem", "Solution 2", "Answer"): a list of
# known problems repeats them, so the problem statement's text says what each pair is about
_GENERIC_PROBLEM = re.compile(r"^(problem|issue|symptoms?|question|error|q)\s*([0-9]+|[ivx]+)?$", re.I)
_GENERIC_ANSWER = re.compile(
    r"^(solutions?|resolution|answer|workaround|fix|cause|explanation|a)\s*([0-9]+|[ivx]+)?$", re.I
)
# the verb of "how do I …" / "how to …" / "I need to …", and verbs too general to name a task
_ACTION = re.compile(
    r"\bhow (?:do|can|could|should|would|shall) (?:i|we|you|one)\s+([a-z]+)\b|\bhow to\s+([a-z]+)\b|"
    r"\b(?:i|we) (?:need|want|would like|'d like) to\s+([a-z]+)\b",
    re.I,
)
_VAGUE_ACTIONS = frozenset({"do", "get", "make", "use", "go", "be", "have", "fix", "know", "see", "try", "find"})
ACTION_WEIGHT = 0.15  # a section whose heading opens with the very verb asked about ("how do I report" → "Report …")
# "I got a phishing mail, what do I do?" asks for something to do: the article's steps, not a note beside them
# ("Phishing simulations") whose words match as well
WHAT_TO_DO_WEIGHT = 0.1
_WHAT_TO_DO = re.compile(
    r"\bwhat\s+(?:do|should|can|must|shall)\s+(?:i|we)\s+do\b|\bwhat(?:'s|\s+is)?\s+(?:now|next)\s*\?|"
    r"\bwhat\s+(?:are\s+)?(?:the\s+)?(?:next\s+)?steps\b|\bhow\s+(?:do|should)\s+(?:i|we)\s+(?:handle|deal\s+with)\b",
    re.I,
)
# asked where something is or what it is, by someone who named no platform: a section for one platform ("Linux
# terminal (mount.cifs)") is the answer for that platform only; one for everyone (the page's table of shares) that
# matches about as well answers them
UNASKED_PLATFORM = 0.03
PLATFORM_ORDER_MARGIN = 0.12
_ASKS_A_FACT = ("where", "what-is")
# "when is the service desk open?", "what time does the backup run?": a section whose heading names times ("Service
# desk hours", "Maintenance schedule") answers ahead of one whose words match as well
WHEN_WEIGHT = 0.2
_ASKS_WHEN = re.compile(
    r"^\W*(?:when|until\s+when|what\s+time)\s+(?:is|are|does|do|will|can|should|shall|would)\b|"
    r"\bopening\s+(?:hours|times)\b",
    re.I,
)
_TIME_HEADING = re.compile(r"\b(?:hours|times|timings?|schedules?|opening|availability|dates|deadlines?|when)\b", re.I)
_PREPARATION = re.compile(r"^(before|prior to|ahead of|in preparation for)\b", re.I)
PROBLEM_STATEMENT_CHARS = 400  # of a problem statement read as its solution's heading
SEQUENTIAL = re.compile(r"^(step|phase|part)\s*([0-9]+|[ivx]+)\b", re.I)
_STEP_LINE = re.compile(r"^\d+[.)]\s+\S")
_LINK_TARGET = re.compile(r"\s*\((?:https?://|/)[^)\s]*\)")  # "@mention (https://…)": the link's address, not its words
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")

# --- 1. what is asked ----------------------------------------------------------------------------------
_WHY = re.compile(
    r"^\s*(why|how come)\b|\bwhy\b\s*[?!.]*\s*$|\bwhy so\b|\bwhat gives\b|\bhow come\b|"
    r"\bwhy (is|are|does|do|did|was|were|am|can'?t|won'?t|doesn'?t|isn'?t|"
    r"would|does it|is it|do i|is my|are my)\b|\bwhat (causes|caused|is causing)\b|"
    r"\breason (why|for)\b",
    re.I,
)
_WHERE = re.compile(
    r"^\s*(where|which (folder|menu|tab|setting|page|site|place))\b|"
    r"\bwhere (do|can|is|are|does|should|would) (i|we|it|they|you|the|my)\b|\bwhere'?s\b",
    re.I,
)
_WHAT_IS = re.compile(
    r"^\s*(what(\s+is|'s|s|\s+are|\s+does)\b(?!\s+(the\s+)?(best\s+)?(way|steps?|procedure)\b)"
    r"(?!.*\b(do|fix|should|can)\s+i\b)|what does .{1,60} mean\b|meaning of\b)|"
    r"\bwhat (is|are) (that|this|those|these|it)\b",
    re.I,
)
_HOW_TO = re.compile(
    r"\bhow (do|can|could|should|would|to|does one)\b|\b(is there|what'?s) (a|an|any) "
    r"(proper |easy |quick |better |good )?way\b|\bsteps? to\b|\bhow (i|we) can\b|"
    r"^\s*(can|could) (i|we|you|it)\b|\bi (need|want|would like|'d like) to\b|\bhow\b.*\?\s*$",
    re.I,
)
# "may I…", "can I use X on my own laptop?", "is Dropbox allowed?": a question of policy, answered by the section
# that states it, not by a procedure
_ALLOWED = re.compile(
    r"^\s*(may|can|could) (i|we) (use|install|bring|connect|keep|take|run|store|share|access)\b.*"
    r"\b(personal|own|home|private|family|non-company|byod)\b|"
    r"\b(am i|are we|is it|is that|are they) (allowed|permitted|ok|okay|supported)\b|"
    r"^\s*may (i|we)\b|\bis .{1,40} (allowed|permitted|supported)\b(?!.*\bhow\b)",
    re.I,
)
# "how long / how many / how often …?" asks for a fact, not for steps
_QUANTITY = re.compile(r"^\s*how (long|many|much|often|big|large|old|far|soon|fast)\b", re.I)
_FIX_VERB = re.compile(
    r"\bhow (do|can|could|should) (i|we|you) (fix|resolve|repair|solve|stop|get rid|get around|"
    r"work around|troubleshoot|make it (stop|work))\b|\b(fix|resolve|solve) (this|it|that)\b",
    re.I,
)


def question_type(text: str) -> QuestionType:
    """What the message asks for. A problem described, or "how do I fix it", is a fix."""
    if _FIX_VERB.search(text):
        return "fix"
    if _QUANTITY.search(text):
        return "what-is"
    if _WHY.search(text):
        return "why"
    if _WHERE.search(text):
        return "where"
    if (_WHAT_IS.search(text) or _ALLOWED.search(text)) and not is_troubleshooting(text):
        return "what-is"
    if _HOW_TO.search(text) and not (is_troubleshooting(text) and not re.search(r"\bhow (do|can|to)\b", text, re.I)):
        return "how-to"
    if is_wish(text):
        return "how-to"
    return "fix"


# --- 2. articles --------------------------------------------------------------------------------------
@dataclass
class ArticleHits:
    """The chunks a search returned from one document, best first, and the article's aggregated score."""

    doc_id: str
    title: str
    source: str
    hits: list[RetrievedChunk]
    score: float


def rank_articles(chunks: Sequence[RetrievedChunk]) -> list[ArticleHits]:
    """Documents ranked by their best chunk plus a share of their second best."""
    grouped: dict[str, list[RetrievedChunk]] = {}
    for chunk in sorted(chunks, key=lambda c: c["score"], reverse=True):
        grouped.setdefault(chunk["doc_id"], []).append(chunk)
    articles = []
    for doc_id, hits in grouped.items():
        second = hits[1]["score"] if len(hits) > 1 else 0.0
        articles.append(
            ArticleHits(
                doc_id,
                hits[0]["title"],
                hits[0]["source"],
                hits,
                round(hits[0]["score"] + ARTICLE_SECOND_WEIGHT * second, 4),
            )
        )
    return sorted(articles, key=lambda a: a.score, reverse=True)


# --- 3. the article read whole ------------------------------------------------------------------------------
@dataclass
class Section:
    path: list[str]  # headings below the title
    role: str
    chunks: list[RetrievedChunk] = field(default_factory=list)

    @property
    def name(self) -> str:
        return " > ".join(self.path)

    @property
    def text(self) -> str:
        return "\n".join(c["text"] for c in self.chunks)

    @property
    def heading(self) -> str:
        return self.path[-1] if self.path else ""

    @property
    def reader(self) -> str:
        """Whom the section addresses (core/readers.py): admin when every chunk of it is admin material."""
        return "admin" if self.chunks and all(is_admin(c) for c in self.chunks) else "user"


def role_of(chunk: RetrievedChunk) -> str:
    """The stored role; chunks indexed before roles existed get theirs from the heading path and text."""
    return chunk.get("role") or section_role(
        chunk["section"].split(" > ") if chunk["section"] else [], chunk["text"].splitlines()
    )


def article_sections(chunks: Sequence[RetrievedChunk]) -> list[Section]:
    """An article's chunks (any order) as its sections in document order."""
    sections: list[Section] = []
    for chunk in sorted(chunks, key=lambda c: c["chunk_index"]):
        if sections and sections[-1].name == chunk["section"]:
            sections[-1].chunks.append(chunk)
            continue
        sections.append(Section(chunk["section"].split(" > ") if chunk["section"] else [], role_of(chunk), [chunk]))
    return sections


# --- 4. the part that answers -------------------------------------------------------------------------------
@dataclass
class Target:
    """What to quote: sections in order (a unit: a resolution with its sequential steps, or one alternative),
    the alternatives left out (named, not quoted), and the symptoms line."""

    sections: list[Section]
    alternatives: list[str] = field(default_factory=list)  # headings of the other ways the article offers
    matches: str = ""  # "This matches: …" — a symptom sentence, for a problem
    anchor: RetrievedChunk | None = None  # the chunk the citation points at
    for_it_team: list[str] = field(default_factory=list)  # admin-only parts left out of a user answer (named)
    on_quoted: str = ""  # the passage of the quoted sections that speaks of the message the employee quoted
    retired: str = ""  # the article's opening notice that what it describes is retired or no longer available

    @property
    def admin_only(self) -> bool:
        """Every section quoted addresses the IT team: the employee is not to carry it out themselves."""
        return bool(self.sections) and all(s.reader == "admin" for s in self.sections)


def _searched(section: Section, hits: dict[str, RetrievedChunk]) -> float:
    """What the search found of a section: its best retrieved chunk's score, 0 when it returned none of it."""
    return max((hits[c["chunk_id"]]["score"] for c in section.chunks if c["chunk_id"] in hits), default=0.0)


def problems_answered(sections: Sequence[Section]) -> list[int | None]:
    """For each section, the sibling problem statement it answers, when its own heading names nothing but its role
    and the problem is one of several stated side by side.

    A "Known problems" list pairs a "Problem" with the "Solution" (or "Solution 1", "Solution 2", "Answer") after
    it, every pair under the same two headings: what such a solution is about is its problem's text, not its
    heading, which every solution of the list shares."""
    paired: list[int | None] = [None] * len(sections)
    statements: dict[tuple[str, ...], int] = {}
    for section in sections:
        if section.path and _is_problem_statement(section.heading):
            statements[tuple(section.path[:-1])] = statements.get(tuple(section.path[:-1]), 0) + 1
    problem: int | None = None
    for i, section in enumerate(sections):
        if not section.path:
            problem = None
            continue
        if problem is not None and sections[problem].path[:-1] != section.path[: len(sections[problem].path) - 1]:
            problem = None  # left the list the problem was stated in
        if _is_problem_statement(section.heading) and statements[tuple(section.path[:-1])] >= 2:
            problem = i  # one of a list of problems (an article's single "Symptoms" is the whole article's)
        elif problem is not None and len(section.path) >= len(sections[problem].path):
            depth = len(sections[problem].path) - 1
            if len(section.path) == depth + 1 and not _GENERIC_ANSWER.match(clean_heading(section.heading)):
                problem = None  # a sibling with a heading of its own is no answer to the problem above it
            else:
                paired[i] = problem
    return paired


def _is_problem_statement(heading: str) -> bool:
    return bool(_GENERIC_PROBLEM.match(clean_heading(heading)))


def _evidence(sections: list[Section], hits: dict[str, RetrievedChunk], query: str) -> list[float]:
    """How well each section answers: what the search found of it, plus how well its heading path and body cover
    the question (nodes/support/section_fit.py) — the evidence for the many sections a search returns nothing of.
    A solution under a generic heading is read with the problem statement it answers as its heading, and what the
    search found of that statement counts for it."""
    paired = problems_answered(sections)
    texts = []
    for s, p in zip(sections, paired):
        if p is None:
            texts.append(SectionText(s.path, s.text))
        else:
            statement = sections[p].text[:PROBLEM_STATEMENT_CHARS]
            texts.append(SectionText([*s.path[:-1], f"{s.heading} {statement}"], s.text))
    fits = fit(texts, query)
    # among "Method 1 … Method 3" the article's order rules unless the search itself favours a later one: their
    # headings name a way to fix, not the problem asked about
    return [
        round(
            max(_searched(s, hits), _searched(sections[p], hits) if p is not None else 0.0)
            + (0.0 if _numbered_way(s) and p is None else FIT_WEIGHT * f),
            4,
        )
        for s, f, p in zip(sections, fits, paired)
    ]


def _platform_of(section: Section) -> tuple[str, tuple[str, ...]]:
    """The one platform a section's headings name, and the headings above the first that names it (the part of the
    article whose sections are its platforms); ("", ()) when they name none or several."""
    named = platforms(" ".join(section.path))
    if len(named) != 1:
        return "", ()
    depth = next(i for i, heading in enumerate(section.path) if platforms(heading))
    return next(iter(named)), tuple(section.path[:depth])


def _first_platform(sections: list[Section], target: int, evidence: Sequence[float]) -> int:
    """Asked with no platform named, of an article with the same task for several platforms ("Windows", "macOS",
    "Linux (Ubuntu)"): the one the article gives first, unless the chosen one leads it by PLATFORM_ORDER_MARGIN — its
    words may match a little better ("First connection on a new macOS laptop" for "connect"), which says nothing of
    the employee's platform. The reply names the others ("If you're on macOS or Linux, tell me")."""
    chosen, part = _platform_of(sections[target])
    if not chosen:
        return target
    kind = sections[target].role in ACTIONABLE
    rivals = [
        i
        for i, s in enumerate(sections)
        if i < target
        and (platform := _platform_of(s))[0] not in ("", chosen)
        and platform[1] == part  # the same task's section for another platform, not another part's
        and (s.role in ACTIONABLE) == kind
        and evidence[i] >= evidence[target] - PLATFORM_ORDER_MARGIN
    ]
    return rivals[0] if rivals else target


_CONDITIONAL = re.compile(r"^(?:if|when|in\s+case)\s+", re.I)


def _unless_conditional(sections: list[Section], target: int, query: str) -> int:
    """A sub-section for a condition ("If you do not see the Report button") under steps of its own is the way for
    someone in that condition: unless the question names it, its parent's steps — the way for everyone — answer."""
    section = sections[target]
    if len(section.path) < 2 or not _CONDITIONAL.match(clean_heading(section.heading)):
        return target
    condition = question_terms(_CONDITIONAL.sub("", clean_heading(section.heading)))
    if condition & question_terms(query):
        return target
    parent = next((i for i, s in enumerate(sections) if s.path == section.path[:-1]), None)
    return parent if parent is not None and sections[parent].role in ACTIONABLE else target


def _numbered_way(section: Section) -> bool:
    return any(ALTERNATIVE.match(heading) for heading in section.path)


def _is_alternative(section: Section, depth: int, role: str) -> bool:
    """The heading at `depth` names one of several ways to do the same thing ("Method 2: …", or FAQ-style
    questions of the same role side by side)."""
    heading = section.path[depth] if len(section.path) > depth else ""
    named = heading_role(heading)
    return (bool(ALTERNATIVE.match(heading)) or heading.endswith("?")) and named in (role, None)


def _unit_prefix(sections: list[Section], index: int, wanted: tuple[str, ...]) -> list[str]:
    """The heading path whose subtree answers. A section whose own heading names its role ("Archive a list",
    "Method 2: …") is its own unit; one whose heading names none ("macOS") or only a step ("Step 2: …") climbs
    to the nearest heading above it that does, so "Resolution > macOS" quotes the resolution."""
    path, role = sections[index].path, sections[index].role
    if not path:
        return path
    if heading_role(path[-1]) is not None and not SEQUENTIAL.match(path[-1]):
        return path
    for depth in range(len(path) - 1, 0, -1):
        named = heading_role(path[depth - 1])
        if named is not None and (named == role or named in wanted):
            return path[:depth]
    return path


def _under(section: Section, prefix: list[str]) -> bool:
    return section.path[: len(prefix)] == prefix


def _pick(names: list[str], support: dict[str, float], admin: set[str] | None = None) -> str:
    """Of alternatives in the article's order, the first — unless the search clearly favours another
    (the article lists the likeliest fix first; a later one wins only on evidence). An employee is given a way
    they can carry out themselves: alternatives for the IT team only when every way is one."""
    names = [n for n in names if n not in (admin or set())] or names
    first = names[0]
    best = max(names, key=lambda n: (support[n], -names.index(n)))
    return best if support[best] >= support[first] + ALTERNATIVE_MARGIN else first


def _admin_names(groups: dict[str, list[Section]]) -> set[str]:
    return {name for name, parts in groups.items() if all(s.reader == "admin" for s in parts)}


def _choose_unit(
    sections: list[Section], prefix: list[str], hits: dict[str, RetrievedChunk], query: str, chosen: Section
) -> tuple[list[Section], list[str], list[str]]:
    """The sections under `prefix`, narrowed to one alternative when the article offers several.

    Alternatives are "Method 1 … Method 3" (or Option, Solution …) headings either below the unit's heading
    ("Resolution > Method 2") or beside it ("## Resolution" followed by "## Option 1", "## Option 2").
    Returns the unit, the alternatives left out, and the parts for the IT team left out of a user's unit.
    """
    if not prefix:
        return [s for s in sections if not s.path][:1], [], []
    depth = len(prefix)
    parent = prefix[:-1]
    if SEQUENTIAL.match(prefix[-1]):  # "Step 2: …" beside "Step 1: …": the steps in order, from the first
        steps = [
            s for s in sections if _under(s, parent) and len(s.path) >= depth and SEQUENTIAL.match(s.path[depth - 1])
        ]
        return steps, [], []
    unit = _run(sections, prefix, chosen)
    role = unit[0].role if unit else ""
    below = _alternatives_at(unit, depth, role)
    if len(below) >= 2:
        names, admin = list(below), _admin_names(below)
        best = _pick(names, {n: _support(below[n], hits, query) for n in names}, admin)
        way = [s for s in unit if len(s.path) == depth or s.path[depth] == best]
        return way, [n for n in names if n != best], sorted(admin - {best}, key=names.index)
    beside = _alternatives_at([s for s in sections if _under(s, parent)], depth - 1, role)
    if len(beside) >= 2:
        names, admin = list(beside), _admin_names(beside)
        best = _pick(names, {n: _support(beside[n], hits, query) for n in names}, admin)
        lead = [] if prefix[-1] in beside else [s for s in unit if len(s.path) == depth]  # "try these in order"
        return lead + beside[best], [n for n in names if n != best], sorted(admin - {best}, key=names.index)
    if unit and unit[0].reader == "user" and any(s.reader == "admin" for s in unit[1:]):
        # "Resolution" with a "For administrators" part under it: the employee's steps, the rest named for IT
        return [s for s in unit if s.reader == "user"], [], [s.name for s in unit if s.reader == "admin"]
    return unit, [], []


def _run(sections: list[Section], prefix: list[str], chosen: Section) -> list[Section]:
    """The sections under `prefix` that stand together with `chosen` in the article: two parts that share a heading
    path but are apart in the page ("Solution" of one problem and of another) are two units, not one."""
    at = next((i for i, s in enumerate(sections) if s is chosen), None)
    if at is None or not _under(chosen, prefix):
        return [s for s in sections if _under(s, prefix)]
    start = at
    while start > 0 and _under(sections[start - 1], prefix):
        start -= 1
    end = at + 1
    while end < len(sections) and _under(sections[end], prefix):
        end += 1
    return sections[start:end]


def _alternatives_at(sections: list[Section], depth: int, role: str) -> dict[str, list[Section]]:
    """Sections grouped by their heading at `depth` when that heading names an alternative, in order."""
    groups: dict[str, list[Section]] = {}
    for s in sections:
        if len(s.path) > depth and _is_alternative(s, depth, role):
            groups.setdefault(s.path[depth], []).append(s)
    return groups


def _support(group: list[Section], hits: dict[str, RetrievedChunk], query: str) -> float:
    """What the search itself found of an alternative (word overlap alone never overrides the article's order)."""
    return round(
        max((hits[c["chunk_id"]]["score"] for s in group for c in s.chunks if c["chunk_id"] in hits), default=0.0), 3
    )


def _symptom_line(sections: list[Section], query: str, statement: Section | None = None) -> str:
    """The first sentence of the article's symptoms, when it says what the employee described: it shares at least
    MATCH_LINE_SHARED of the question's topic words (their error message, their program). A fragment that shares
    none ("Resource temporarily unavailable" for a question about something else) means nothing to them."""
    symptoms = statement or next((s for s in sections if s.role == "symptoms"), None)
    if symptoms is None:
        return ""
    asked = question_terms(query)
    lines = [re.sub(r"^\s*(?:\d+[.)]|[-*•])\s+", "", line).strip() for line in symptoms.text.splitlines()]
    for at, line in enumerate(lines):
        if len(line) < 20:
            continue
        sentence = _SENTENCE_END.split(_LINK_TARGET.sub("", line))[0]
        if sentence.rstrip().endswith(":"):  # "… returns the following error message:" — the message is what matters
            quoted = next((following for following in lines[at + 1 :] if following), "")
            sentence = f"{sentence.rstrip()} {_LINK_TARGET.sub('', quoted)}".strip() if quoted else ""
            if not sentence:
                return ""
        if len(asked & question_terms(sentence)) < min(MATCH_LINE_SHARED, len(asked)):
            return ""
        if len(sentence) > MATCH_LINE_CHARS:
            sentence = sentence[:MATCH_LINE_CHARS].rsplit(" ", 1)[0] + " …"
        return sentence
    return ""


QUOTED_SHARED = 0.7  # share of a quoted message's words a passage must hold to be about it
_QUOTE = re.compile(
    r"'([^'\n]{12,200})'|\"([^\"\n]{12,200})\"|“([^”\n]{12,200})”|‘([^’\n]{12,200})’|`([^`\n]{12,200})`"
)
_STEP_LINE = re.compile(r"^\s*(?:\d+[.)]|[a-z][.)]|#\.)\s+")


def passage_on_quoted(sections: Sequence[Section], query: str) -> str:
    """The paragraph (a note, a warning, a line of prose, not a step) of `sections` that speaks of the message the
    employee quoted ("i get 'system error 67 has occurred'"): it holds QUOTED_SHARED of the quoted words. What the
    article says about exactly that message is what they need first, wherever it sits in the section."""
    for match in _QUOTE.finditer(query):
        quoted = question_terms(next(g for g in match.groups() if g))
        if len(quoted) < 3:
            continue
        for section in sections:
            for paragraph in re.split(r"\n\s*\n|\n(?=\S)", section.text):
                flat = " ".join(paragraph.split())
                if _STEP_LINE.match(paragraph) or len(flat) > 600:
                    continue
                if len(quoted & question_terms(flat)) >= QUOTED_SHARED * len(quoted):
                    return flat
    return ""


_RETIRED = re.compile(
    r"\b(?:is|was|are|were|has been|have been|will be) (?:now )?(?:retired|deprecated|discontinued|withdrawn)\b|"
    r"\bno longer (?:is |are )?(?:available|supported|maintained|offered|sold|receives?)\b|"
    r"\b(?:reached|reaches|past) (?:its )?end of (?:support|life)\b",
    re.I,
)
RETIRED_CHARS = 420  # the notice and what it recommends instead
_ADMONITION_LABEL = re.compile(r"^(?:important|note|warning|caution|notice|tip)\s*[:—-]\s*", re.I)
OPENING_SECTIONS = 2  # where an article announces that its subject is retired: before what it goes on to describe


def retirement_notice(sections: Sequence[Section]) -> str:
    """The sentence(s) of the article's opening that say what it describes is retired, deprecated or no longer
    available ("The Excel Viewer was retired in April 2018. It is no longer available for download."), whatever
    section is quoted: an employee about to follow a procedure for something that no longer exists needs that
    first."""
    for section in sections[:OPENING_SECTIONS]:
        for paragraph in re.split(r"\n\s*\n|\n(?=\S)", section.text):
            flat = _ADMONITION_LABEL.sub("", " ".join(paragraph.split()))
            if _STEP_LINE.match(paragraph) or not _RETIRED.search(flat) or len(flat) < 30:
                continue
            sentences = _SENTENCE_END.split(flat)
            shown = sentences[0]
            for sentence in sentences[1:]:
                # a sentence that introduces a list ("go to the store for your device:") is no use without it
                if len(shown) + len(sentence) + 1 > RETIRED_CHARS or sentence.rstrip().endswith(":"):
                    break
                shown += " " + sentence
            return shown if len(shown) <= RETIRED_CHARS else shown[:RETIRED_CHARS].rsplit(" ", 1)[0] + " …"
    return ""


# roles of sections that answer a "why" in their own right when their heading and text fit it best (see choose_target)
EXPLAINED_WITH_STEPS = frozenset({"procedure", "resolution"})
WANTED_ROLES: dict[str, tuple[str, ...]] = {
    "fix": ("resolution", "workaround", "procedure"),
    "how-to": ("procedure", "resolution", "workaround"),
    "why": ("cause",),
}


def choose_target(sections: list[Section], hits: Sequence[RetrievedChunk], qtype: QuestionType, query: str) -> Target:
    """The sections that answer `qtype` in this article (see the module docstring)."""
    if not sections:
        return Target([])
    by_id = {h["chunk_id"]: h for h in hits}
    evidence = _evidence(sections, by_id, query)
    if asked := _asked_action(query):  # "how do I report it?": the section headed "Report a suspicious message"
        evidence = [e + (ACTION_WEIGHT if asked in _heading_actions(s) else 0.0) for e, s in zip(evidence, sections)]
    if _ASKS_WHEN.search(query):  # "when is the service desk open?": the section headed for times ("… hours")
        evidence = [e + (WHEN_WEIGHT if _TIME_HEADING.search(s.heading) else 0.0) for e, s in zip(evidence, sections)]
    if _WHAT_TO_DO.search(query):  # steps asked for: a section of steps ahead of a note that matches as well
        evidence = [e + (WHAT_TO_DO_WEIGHT if s.role in ACTIONABLE else 0.0) for e, s in zip(evidence, sections)]
    evidence = _for_the_device(evidence, sections, query)
    if qtype in _ASKS_A_FACT and not platforms(query):  # "where is the team share?" asked by someone of any platform
        evidence = [
            e - UNASKED_PLATFORM if len(platforms(" ".join(s.path))) == 1 else e for e, s in zip(evidence, sections)
        ]

    def best_of(candidates: list[int]) -> int:
        # a tie goes to the article's order, except that the page's lead (above its first heading) introduces what
        # the headed sections below answer: one of them that fits as well is the more specific answer
        return max(candidates, key=lambda i: (round(evidence[i], 2), bool(sections[i].path), -i))

    best_hit = best_of(list(range(len(sections))))
    wanted = WANTED_ROLES.get(qtype, ())
    paired = problems_answered(sections)
    target = best_hit
    if wanted:
        candidates = [i for i, s in enumerate(sections) if s.role in wanted]
        # a manual's plain sections ("Outbox", "Unread count badge") and FAQ entries answer in their own right; only
        # a section *about* the problem (Symptoms, Environment, Summary) sends the answer on to its resolution
        # (asked why, a section that explains a behaviour and then how to change it — "Delay before sending emails",
        # two steps at its end — answers too: its steps do not make it any less the explanation)
        answering = [
            i
            for i, s in enumerate(sections)
            if s.role in wanted or _answers_itself(s) or (qtype == "why" and s.role in EXPLAINED_WITH_STEPS)
        ]
        supported = [i for i in answering if evidence[i] >= MIN_EVIDENCE]
        preference = PROBLEM_PREFERENCE if qtype == "fix" and is_troubleshooting(query) else ROLE_PREFERENCE
        if supported:  # the best-supported of them, the role the question wants most a little ahead

            def weighed(i: int) -> tuple[float, int]:
                # a solution of a known-problems list answers its own problem: its role ("Solution") says nothing of
                # whether that is the problem asked about, which its evidence (its statement's fit) already says
                role = _preference(wanted, sections[i].role) if paired[i] is None else 0
                return round(evidence[i] + preference * role, 2), -i

            weights = [weighed(i)[0] for i in range(len(sections))]
            target = max(_for_user(supported, sections, weights, wanted), key=weighed)
        elif candidates and sections[best_hit].role not in wanted:
            # none found: the one nearest the best match in the article's outline ("Availability" → "Availability >
            # Toggle invisible mode"), then the article's order of roles (Symptoms → Resolution, then Workaround)
            near = sections[best_hit].path
            target = min(
                _for_user(candidates, sections),
                key=lambda i: (-_shared_prefix(sections[i].path, near), wanted.index(sections[i].role), i),
            )
    target = _unless_conditional(sections, target, query)
    if not platforms(query):
        target = _first_platform(sections, target, evidence)
    if wanted and sections[target].reader == "admin":  # an employee's way, when the search found one too
        users = [  # found by the search itself: words shared with the question do not make a way the same fix
            i
            for i, s in enumerate(sections)
            if s.role in wanted
            and s.reader == "user"
            and _searched(s, by_id) >= MIN_EVIDENCE
            and evidence[i] >= evidence[target] - FOR_USER_MARGIN
        ]
        if users:
            target = best_of(users)
    problem = paired[target]
    # a solution of a known-problems list is chosen among the ways its own problem offers, never another problem's
    scope = [s for s, p in zip(sections, paired) if p == problem] if problem is not None else []
    unit, alternatives, for_it_team = _choose_unit(
        scope or sections, _unit_prefix(sections, target, wanted), by_id, query, sections[target]
    )
    unit = _one_os(unit or [sections[target]], sections[target], query)
    statement = sections[problem] if problem is not None else None
    matches = _symptom_line(sections, query, statement) if qtype == "fix" and unit[0].role in ACTIONABLE else ""
    # the article's own chunk (with its audience and metadata), scored as the search scored it
    anchor = next(
        (c | {"score": by_id[c["chunk_id"]]["score"]} for s in unit for c in s.chunks if c["chunk_id"] in by_id),
        unit[0].chunks[0],
    )
    return Target(
        unit, alternatives, matches, anchor, for_it_team, passage_on_quoted(unit, query), retirement_notice(sections)
    )


def _section_os(section: Section) -> str:
    return next((c["os"] for c in section.chunks if c.get("os")), "")


def _one_os(unit: list[Section], chosen: Section, query: str) -> list[Section]:
    """A unit holding one part per operating system ("Install > macOS > Disk image", "Install > Windows > Web
    installer": a page's tabs), for an employee whose OS is not known: the part for the OS the message names as an
    employee would ("on my PC"), else for the OS of the section that answers best (else the article's first),
    with what is for no OS; the reply names the others to ask for. The steps of every OS in a row would walk a
    Windows user through the Mac's."""
    systems = [_section_os(s) for s in unit]
    if len(set(systems) - {""}) < 2:
        return unit
    labels = {OS_LABELS.get(o, o): o for o in systems if o}
    asked = named_labels(list(labels), query)
    keep = labels[asked[0]] if len(asked) == 1 else _section_os(chosen) or next(o for o in systems if o)
    return [s for s, o in zip(unit, systems) if o in ("", keep)]


DEVICE_MISMATCH = 0.5  # a section headed for the other kind of device than the one asked about weighs this much


def _for_the_device(evidence: list[float], sections: list[Section], query: str) -> list[float]:
    """The question asks about a computer (a phone): when some section's heading is for that kind of device, the
    sections headed for the other kind ("Phone (iPhone or Android)" for "email on my personal laptop") weigh less.
    Sections whose headings name no device, and articles with no section for the device asked about, are left."""
    asked = asked_device(query)
    if not asked:
        return evidence
    kinds = [heading_device(" ".join(s.path)) for s in sections]
    if asked not in kinds:
        return evidence
    return [e * DEVICE_MISMATCH if kind and kind != asked else e for e, kind in zip(evidence, kinds)]


def _asked_action(query: str) -> str:
    """The stem of the verb a how-to asks about ("how do I report it" → report), "" when none is named."""
    match = _ACTION.search(query)
    verb = next((g for g in match.groups() if g), "") if match else ""
    terms = question_terms(verb) if verb.lower() not in _VAGUE_ACTIONS else frozenset()
    return next(iter(terms), "")


def _heading_action(heading: str) -> str:
    """The stem of the verb an instruction heading opens with ("Report a suspicious message" → report)."""
    first = clean_heading(heading).split(" ", 1)[0]
    terms = question_terms(first) if first and not first.lower().endswith("ing") else frozenset()
    return next(iter(terms), "")


def _heading_actions(section: Section) -> set[str]:
    """The verbs the instruction section is headed with: its own heading's, and — up through headings that only name
    a platform or a way ("Windows", "Web installer") — the one above them ("Install the latest release > Windows >
    Web installer" installs)."""
    if section.role not in ACTIONABLE or not section.heading:
        return set()
    actions = set()
    for heading in reversed(section.path):
        actions.add(_heading_action(heading))
        if heading_role(heading) is not None:
            break
    return actions - {""}


def _answers_itself(section: Section) -> bool:
    """A section that is its own answer though its role is none the question wants: plain content (no role named)
    or an FAQ entry (a question as its heading, its answer below). The page's lead, above its first heading,
    introduces what the sections below answer (a page that is all lead is answered whole anyway); a section on
    what comes before ("Before your first day", "Before you upgrade") prepares for the situation asked about, it
    does not answer it."""
    if not section.path or _PREPARATION.match(clean_heading(section.heading)) or section.role == "more_info":
        return False  # ("Need help?" points to the service desk: it answers no question asked of the article)
    return section.role in CONTENT_ROLES or section.heading.rstrip().endswith("?")


def _shared_prefix(path: list[str], other: list[str]) -> int:
    """How many headings two sections share from the top (0 for sections under different top-level headings)."""
    shared = 0
    for a, b in zip(path, other):
        if a != b:
            break
        shared += 1
    return shared


def _preference(wanted: tuple[str, ...], role: str) -> int:
    """How much more the question wants this role than the last it accepts (a problem: resolution 2, procedure 0)."""
    return len(wanted) - 1 - wanted.index(role) if role in wanted else 0


def _for_user(
    candidates: list[int], sections: list[Section], weight: Sequence[float] | None = None, wanted: tuple[str, ...] = ()
) -> list[int]:
    """The candidates an employee can carry out, when there are any; else all of them. Given each section's
    `weight` (its evidence), an employee's section must come within FOR_USER_MARGIN of the best of the IT team's
    `wanted` ways: the IT team's fix for the very thing asked ("Set the default font for Excel") is not traded
    for an employee's fix of something else ("… for Word"). An IT-team section of another role (an explanation)
    never outweighs an employee's."""
    admin_ways = [i for i in candidates if sections[i].reader == "admin" and sections[i].role in wanted]
    best = max((weight[i] for i in admin_ways), default=0.0) if weight is not None else 0.0
    users = [
        i
        for i in candidates
        if sections[i].reader == "user" and (weight is None or weight[i] >= best - FOR_USER_MARGIN)
    ]
    return users or candidates


# --- follow-ups that point into the article ("what about step 3?", "try method 2") --------------------------------
_NUMBERS = {
    "one": 1,
    "first": 1,
    "two": 2,
    "second": 2,
    "three": 3,
    "third": 3,
    "four": 4,
    "fourth": 4,
    "five": 5,
    "fifth": 5,
    "six": 6,
    "sixth": 6,
    "seven": 7,
    "seventh": 7,
    "eight": 8,
    "eighth": 8,
}
_REFERENCE = re.compile(
    r"\b(?:(step|method|option|solution|way|fix)\s*(?:number\s*|no\.?\s*|#\s*)?"
    r"(\d{1,2}|one|two|three|four|five|six|seven|eight)\b|"
    r"(first|second|third|fourth|fifth|sixth|seventh|eighth)\s+(step|method|option|solution|way))",
    re.I,
)


_OTHER_ARTICLE = re.compile(
    r"^\W*(the )?(other|second|2nd|last) (one|article|page)\b|^\W*(the )?other\W*$|"
    r"^\W*(it'?s |its )?(the )?(second|other|2nd) one\b|^\W*2\W*$",
    re.I,
)


def follow_up_reference(text: str) -> tuple[str, int] | None:
    """("step", 3) for "what about step 3?", ("method", 2) for "try the second method", ("article", 2) for "the
    other one" (of two articles offered); None otherwise."""
    if _OTHER_ARTICLE.search(text):
        return "article", 2
    match = _REFERENCE.search(text)
    if not match:
        return None
    kind = (match.group(1) or match.group(4)).lower()
    number = match.group(2) or match.group(3)
    n = int(number) if number.isdigit() else _NUMBERS[number.lower()]
    return ("step" if kind == "step" else "method"), n


def referenced_alternative(sections: list[Section], n: int) -> Target | None:
    """The n-th alternative ("Method n", "Option n" …) of the article, quoted whole."""
    for depth in range(0, 4):
        names: list[str] = []
        for s in sections:
            if len(s.path) > depth and ALTERNATIVE.match(s.path[depth]) and s.path[depth] not in names:
                names.append(s.path[depth])
        if len(names) >= 2 and n <= len(names):
            name = names[n - 1]
            chosen = [s for s in sections if len(s.path) > depth and s.path[depth] == name]
            return Target(chosen, [x for x in names if x != name], "", chosen[0].chunks[0])
    return None


# --- 5. the reply ---------------------------------------------------------------------------------------------
def _bounded(lines: list[str], limit: int) -> tuple[list[str], bool]:
    """Whole lines up to `limit` characters; a code block is never cut in the middle."""
    out: list[str] = []
    used = 0
    fence_open = False
    for line in lines:
        if used + len(line) > limit and out and not fence_open:
            return out, True
        out.append(line)
        used += len(line) + 1
        if line.strip().startswith("```"):
            fence_open = not fence_open
    return out, False


def target_lines(target: Target) -> list[str]:
    """The target's text, subsection headings shown in bold above their part."""
    lines: list[str] = []
    for i, section in enumerate(target.sections):
        if i > 0 and section.heading:
            lines += ["", f"**{section.heading}**"]
        lines += section.text.splitlines()
    return lines


def _step_lists(target: Target, lead_ins: set[int] | None = None) -> tuple[list[str], dict[int, str]]:
    """The numbered steps of the target in order, and the label of each labelled list by the index of its first
    step (see `target_steps`). `lead_ins`, when given, receives the lists whose label is a lead-in ending in a colon
    ("To find an add-in that conflicts:") rather than a name ("Windows", a tab's label)."""
    steps: list[str] = []
    step_indent: int | None = None  # the indent of the step open now
    labels: list[str] = []  # short lines since the last step: the name of the list that starts next
    named: dict[int, str] = {}  # the first step of each labelled list, and its label
    colon = False  # the nearest label line ends in a colon
    lines = target_lines(target)
    headings = {f"**{s.heading}**" for s in target.sections[1:] if s.heading}
    if len(target.sections) > 1 and target.sections[0].heading:
        # the first part's heading names its steps as the bold headings of the parts after it name theirs
        lines = [f"**{target.sections[0].heading}**", *lines]
        headings.add(lines[0])
    for line in lines:
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        if _STEP_LINE.match(line.lstrip()) and (step_indent is None or indent <= step_indent):
            if labels:
                named[len(steps)] = " › ".join(labels[-LIST_LABEL_DEPTH:])
                if colon and lead_ins is not None:
                    lead_ins.add(len(steps))
            steps.append(re.sub(r"^\d+[.)]\s+", "", line.lstrip()).strip())
            step_indent, labels = indent, []
        elif steps and step_indent is not None and indent > step_indent:
            steps[-1] += "\n" + line.rstrip()
        elif line.strip() in headings or _is_list_label(line):
            labels.append(line.strip().strip("*").strip().rstrip(":").strip())
            colon = line.strip().strip("*").strip().endswith(":")
        else:
            labels = []
    return steps, named


def target_steps(target: Target) -> list[str]:
    """The numbered steps of the target, in order, each with what sits under it (code, sub-steps). A numbered list
    indented under a paragraph ("In Access 2007:" then "  1. …") is steps too, not lost for want of a step above.
    When a section holds one list per platform or browser, each under a short label ("Chrome", "Desktop app >
    Windows", "Alternate instructions:"), the first step of each list says which it is: "Chrome: Click …"."""
    return _labelled(*_step_lists(target))


def _labelled(steps: list[str], named: dict[int, str]) -> list[str]:
    if len(named) < 2:  # one labelled list is the section's only list: its label names no choice between lists
        return steps
    return [f"{named[i]}: {step}" if i in named else step for i, step in enumerate(steps)]


# what an employee calls the device or program a list is labelled for ("on my phone" is the "Mobile" list)
_LABEL_SYNONYMS: dict[str, frozenset[str]] = {
    "mobile": frozenset({"phone", "smartphone", "cellphone", "android", "iphone", "ipad", "ios", "tablet"}),
    "web": frozenset({"browser", "chrome", "firefox", "safari", "edge"}),
    "macos": frozenset({"mac", "macbook", "imac", "osx"}),
    "windows": frozenset({"pc", "pcs"}),
}
_GENERIC_LABEL_WORDS = frozenset({"instructions", "alternate", "alternative", "other", "steps", "option", "method"})


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9]+", text.lower()))


def named_labels(
    labels: Sequence[str], message: str, user_os: str | None = None, topic: Iterable[str] = ()
) -> list[str]:
    """The labels of `labels` the message names ("in Firefox"; "on my phone" for "Mobile"). Only a label's own words
    count — none that another label also has ("desktop" of "Desktop app" beside "Desktop web"), none of the `topic`
    (the article's title and headings) — by name or by what an employee calls it."""
    said = _words(message) | ({user_os} if user_os else set())
    words = {label: _words(label) - _GENERIC_LABEL_WORDS - set(topic) for label in labels}
    named = []
    for label in labels:
        own = words[label] - set().union(*(words[other] for other in labels if other != label))
        if own & said or any(_LABEL_SYNONYMS.get(w, frozenset()) & said for w in own):
            named.append(label)
    return named


def named_label(labels: Sequence[str], message: str, user_os: str | None = None, topic: Iterable[str] = ()) -> str:
    """The one label of `labels` the message names, "" for none or several (`named_labels`)."""
    named = named_labels(labels, message, user_os, topic)
    return named[0] if len(named) == 1 else ""


# what a list label says when the lists are one per machine, program or client the employee might use ("Chrome",
# "Desktop app › Windows", "Mobile"); lists labelled otherwise ("System proxy settings", "Via the compose box",
# "Homebrew") are ways to the same end, any of which may do
_PLATFORM_LABEL_WORDS = (
    frozenset(_LABEL_SYNONYMS)
    | frozenset().union(*_LABEL_SYNONYMS.values())
    | frozenset({"desktop", "app", "apps", "client", "linux", "opera", "brave", "vivaldi", "chromebook", "chromeos"})
)


def are_ways(labels: Iterable[str]) -> bool:
    """The lists so labelled are ways to the same end, not one per device or browser: none names a platform."""
    return not any(_words(label) & _PLATFORM_LABEL_WORDS or platforms(label) for label in labels)


def steps_for(target: Target, message: str, user_os: str | None = None) -> tuple[list[str], str, dict[str, list[str]]]:
    """The steps to walk through for this message: `target_steps`, or — when the section holds labelled lists (one
    per platform, device or browser, or several ways to the same end) — one list alone, after the steps before the
    first list: the one the message (or the employee's known OS) names, else the article's first. Also the chosen
    list's label ("" for all: the message names several) and the other lists, each with the steps it would walk
    (named to the employee, switched to when they name one, and — ways — walked next when one did not fix it)."""
    lead_ins: set[int] = set()
    steps, named = _step_lists(target, lead_ins)
    labelled = _labelled(steps, named)
    if len(named) < 2:
        return steps, "", {}
    topic = {w for s in target.sections for h in [s.chunks[0]["title"], *s.path] for w in _words(h)}
    # a list under a label of no words of its own ("Alternate instructions") is another way within the list above it
    starts = [i for i in sorted(named) if _words(named[i]) - _GENERIC_LABEL_WORDS or i == min(named)]
    if len(starts) < 2 or len({named[i] for i in starts}) < len(starts):  # (a label twice: no choice between them)
        return labelled, "", {}
    lists = {}
    for n, first in enumerate(starts):
        end = starts[n + 1] if n + 1 < len(starts) else len(steps)
        # its first step without the label the introduction names
        lists[named[first]] = labelled[: min(named)] + [steps[first], *labelled[first + 1 : end]]
    asked = named_labels(list(lists), message, user_os, topic)
    if len(asked) > 1 or (not asked and (len(target.sections) > 1 or lead_ins & set(starts))):
        # several named: each is the employee's. None named, and the lists may be parts of one procedure, not
        # choices: in a part of several sections, short lines may be the sections' own sub-headings; a lead-in
        # ("To find an add-in that conflicts:") opens the next part of the fix
        return labelled, "", {}
    # none named: the article's first list, the others named to switch to (the next way, when the lists are ways)
    chosen = asked[0] if asked else next(iter(lists))
    return lists[chosen], chosen, {label: walked for label, walked in lists.items() if label != chosen}


LIST_LABEL_CHARS = 40  # a line this short, with no sentence in it, names the list below it ("macOS", "Desktop web")
LIST_LABEL_DEPTH = 2  # labels kept, the nearest last ("Desktop app › Windows")


def _is_list_label(line: str) -> bool:
    text = line.strip().strip("*").strip()
    return 0 < len(text) <= LIST_LABEL_CHARS and not _SENTENCE_END.search(text) and not text.endswith((".", "!", "?"))


def render(target: Target, *, limit: int = MAX_ANSWER_CHARS) -> tuple[str, bool]:
    """The quoted part of an answer and whether it was cut short."""
    lines, cut = _bounded(target_lines(target), limit)
    return "\n".join(lines).strip(), cut


def target_label(title: str, target: Target) -> str:
    section = target.sections[0].name if target.sections else ""
    return f"{title} › {section}" if section else title
