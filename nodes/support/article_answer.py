"""From a search to an answer over whole articles: assess what was found, then compose from the best article.

`assess` (called by the retrieve node) groups the searched chunks by article and gives each a calibrated
confidence (nodes/support/confidence.py); `read_target` (answer and troubleshoot nodes) reads the chosen article whole
through the lexical index and picks the part that answers (nodes/support/compose.py); `compose_reply` writes the offline
answer, and `composed_context` hands an LLM the same choice of passages, best first.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from core.document_screen import unsafe_instructions, warning_for
from core.filters import may_read
from core.lexicon import OS_LABELS
from core.records import ArticleRef, RetrievedChunk, Source
from nodes.support.compose import (
    ArticleHits,
    Target,
    article_sections,
    choose_target,
    follow_up_reference,
    question_type,
    rank_articles,
    referenced_alternative,
    render,
    target_steps,
)
from nodes.support.confidence import DEVICE_PENALTY, TRIED_PENALTY, article_features, foreign_penalty
from nodes.support.device_fit import asks_for_computer, asks_for_mobile, for_another_device
from nodes.support.extractive import cite, to_source
from nodes.support.foreign_terms import foreign_terms
from nodes.support.product_names import asked_products, other_products
from nodes.support.replies import (
    NOT_FOUND,
    NOT_FOUND_CLOSEST,
    NOT_FOUND_COMPUTER,
    NOT_FOUND_DEVICE,
    NOT_FOUND_SEARCHED,
    NOT_FOUND_TRIED,
)
from nodes.support.retrieval import fits_os
from nodes.support.tried_fixes import about_tried_fix, label, tried_fixes

if TYPE_CHECKING:
    from graphs.support import SupportContext, SupportState

# admin material (core/readers.py) is offered for the IT team, never as the employee's own step 1
FOR_IT_TEAM = (
    "This is a change for your IT team: the documented fix needs administrator access (admin settings, policies, "
    'scripts or registry edits). Say "open a ticket" and I\'ll pass it to them with these steps.'
)
RETIRED = "Important — the article says: {notice}"
ABOUT_QUOTED = "About the message you quoted, the article says: {passage}"
ALSO_FOR_IT_TEAM = 'For your IT team, the article also has {names} (admin steps; say "open a ticket" to pass them on).'
MAX_ARTICLES = 3  # articles kept in the state (the best, and the runners-up a tie or the trace may name)
FOLLOW_UP_BOOST = 1.25  # a follow-up ("and on windows?") prefers the article the conversation is in
TIE_MARGIN = 0.015  # two articles this close in score and confidence fit equally well
ALTERNATIVE_CHARS = 800  # of each other way ("Method 2") an LLM is shown beside the chosen one
LLM_SECTION_CHARS = 12000  # the chosen section an LLM is given whole (a bound against a runaway page, not a cut)


def assess(
    ctx: SupportContext,
    query: str,
    hits: list[RetrievedChunk],
    prefer_doc: str | None = None,
    message: str | None = None,
) -> list[ArticleRef]:
    """The articles behind `hits`, best first, each with how likely the knowledge base answers the question
    from it (`answerable`, compared with the threshold) and how likely that answer is right (`confidence`).
    `message`: the employee's own words (default: `query`), read for words foreign to the knowledge base; the
    search query may be reworded (a file name split into words)."""
    if not hits:
        return []
    if prefer_doc:
        hits = [
            h | {"score": min(1.0, round(h["score"] * FOLLOW_UP_BOOST, 4))} if h["doc_id"] == prefer_doc else h
            for h in hits
        ]
    ranked = rank_articles(hits)
    model = ctx.confidence_model
    coverage = None
    foreign: list[str] = []
    asked: dict[str, frozenset[str]] = {}
    if model is not None and ctx.lexical is not None:
        coverage = ctx.lexical.query_coverage(query, [a.doc_id for a in ranked[:MAX_ARTICLES]])
        # words the knowledge base holds in no form and that are no ordinary English: most often another product
        foreign = foreign_terms(message or query, ctx.lexical.held_terms)
        # the knowledge base's product names the question names: an article naming only another is no answer
        asked = asked_products(message or query, ctx.lexical.term_documents)
    # a question about a phone or tablet (a computer): an article for computers (phones) only is no answer
    device = asks_for_mobile(message or query) or asks_for_computer(message or query)
    # fixes the employee says they already tried: an article about doing one of them again is no answer
    tried = tried_fixes(message or query)
    refs = []
    for rank, article in enumerate(ranked[:MAX_ARTICLES]):
        if model is not None and coverage is not None:
            other_products = _other_products(ctx, asked, article.doc_id)
            assessed = foreign_penalty(
                model.assess(article_features(ranked, coverage, rank)), len(foreign) + len(other_products)
            )
            if device and _for_another_device(ctx, message or query, article.doc_id, article.title):
                assessed = foreign_penalty(assessed, 1, DEVICE_PENALTY)
            if about_tried_fix(tried, article.title, str(article.hits[0].get("section") or "")):
                assessed = foreign_penalty(assessed, 1, TRIED_PENALTY)
            answerable, confidence = assessed.answerable, assessed.confidence
        else:  # no model (or no lexical evidence): the best chunk's score, as before calibration existed
            answerable = confidence = float(article.hits[0]["score"])
        refs.append(
            ArticleRef(
                doc_id=article.doc_id,
                title=article.title,
                source=article.source,
                score=article.score,
                answerable=round(answerable, 4),
                confidence=round(confidence, 4),
                hits=[
                    {"chunk_id": h["chunk_id"], "score": h["score"], "section": h["section"], "role": h.get("role", "")}
                    for h in article.hits[:10]
                ],
            )
        )
    return refs


def found_articles(state: SupportState, ctx: SupportContext) -> list[ArticleRef]:
    """The articles this turn's search found, best first. A state that did not come through the retrieve node
    (a node run on its own, in Studio or a test) has them assessed from its chunks."""
    if "articles" in state["turn"]:
        return list(state["turn"].get("articles") or [])
    chunks = list(state["turn"].get("retrieved_chunks") or [])
    query = state["turn"].get("search_query") or state["turn"].get("query", "")
    return assess(ctx, query, chunks, message=state["turn"].get("query")) if chunks else []


def not_found_text(state: SupportState, ctx: SupportContext | None = None) -> str:
    """What a search that found no answer says: that, what was searched for, and the closest articles — and, when the
    closest is written for the other kind of device, that it is (read whole from `ctx`'s index, as the answer decision
    read it)."""
    articles = state["turn"].get("articles") or []
    titles = [a["title"] for a in articles] or list(
        dict.fromkeys(c["title"] for c in state["turn"].get("retrieved_chunks", []))
    )
    parts = [NOT_FOUND]
    searched = (state["turn"].get("search_query") or "").strip()
    if searched:
        parts.append(NOT_FOUND_SEARCHED.format(query=searched[:200]))
    if titles:
        parts.append(NOT_FOUND_CLOSEST.format(titles=", ".join(f"“{t}”" for t in titles[:3])))
    query = state["turn"].get("query", "")
    if articles and ctx is not None and _for_another_device(ctx, query, articles[0]["doc_id"], articles[0]["title"]):
        # why the closest is no answer: say it
        parts.append((NOT_FOUND_DEVICE if asks_for_mobile(query) else NOT_FOUND_COMPUTER).format(title=titles[0]))
    elif articles and (tried := _tried_in(articles[0], query)):
        parts.append(NOT_FOUND_TRIED.format(fix=label(tried), title=titles[0]))
    return " ".join(parts)


def is_confident(state: SupportState, ctx: SupportContext) -> bool:
    """The best article answers the message, as far as the evidence goes (answerable ≥ the threshold)."""
    articles = found_articles(state, ctx)
    return bool(articles) and articles[0]["answerable"] >= ctx.confidence_threshold()


@dataclass
class ArticleReading:
    """The chosen article and the part of it that answers."""

    article: ArticleRef
    chunks: list[RetrievedChunk]  # the article's chunks that fit the user's OS, in order
    target: Target
    qtype: str
    other_os: list[str]  # operating systems the article also has steps for (OS unknown)


def _tried_in(article: ArticleRef, message: str) -> str:
    """The fix the message says was tried that the article is about (nodes/support/tried_fixes.py), or ""."""
    hits = article.get("hits") or []
    return about_tried_fix(tried_fixes(message), article["title"], str(hits[0].get("section") or "") if hits else "")


def _for_another_device(ctx: SupportContext, message: str, doc_id: str, title: str) -> bool:
    """The article is for computers only and the message about a phone, or the reverse (nodes/support/device_fit.py),
    read whole from the index."""
    return ctx.lexical is not None and for_another_device(message, title, ctx.lexical.document_chunks(doc_id, None))


def _other_products(ctx: SupportContext, asked: dict[str, frozenset[str]], doc_id: str) -> list[str]:
    """The product names an article holds in place of the one the question names (nodes/support/product_names.py)."""
    if not asked or ctx.lexical is None or all(doc_id in docs for docs in asked.values()):
        return []
    text = "\n".join(f"{c['title']} {c['text']}" for c in ctx.lexical.document_chunks(doc_id, None))
    return other_products(asked, doc_id, text, ctx.lexical.term_documents)


def read_target(
    state: SupportState, ctx: SupportContext, article: ArticleRef | None = None, *, groups: frozenset[str] = frozenset()
) -> ArticleReading | None:
    """Read the best (or given) article whole — the part of it a caller in `groups` may read (none: only
    unrestricted text) — and choose the part that answers the message."""
    refs = found_articles(state, ctx)
    article = article or (refs[0] if refs else None)
    if article is None:
        return None
    if ctx.lexical is not None:
        chunks = ctx.lexical.document_chunks(article["doc_id"], groups)
    else:  # no lexical index: only what the search returned of it (searched with the caller's groups)
        chunks = [
            c
            for c in state["turn"].get("retrieved_chunks", [])
            if c["doc_id"] == article["doc_id"] and may_read(c, groups)
        ]
    user_os = state.get("user_os")
    usable = [c for c in chunks if fits_os(c, user_os)]
    if not usable:
        return None
    query = state["turn"].get("search_query") or state["turn"]["query"]
    qtype = state["turn"].get("question_type") or question_type(state["turn"]["query"])
    target = choose_target(article_sections(usable), _scored_hits(article), qtype, query)  # type: ignore[arg-type]
    if not target.sections:
        return None
    target_os = {c["os"] for s in target.sections for c in s.chunks if c["os"]}
    other_os = sorted({c["os"] for c in chunks if c["os"]} - target_os) if target_os and not user_os else []
    return ArticleReading(article, usable, target, qtype, other_os)


def target_for_os(reading: ArticleReading, os_name: str, query: str) -> Target:
    """The part of the read article that answers for another OS than the one its target is for: the same choice,
    among the article's sections for that OS and for none."""
    chunks = [c for c in reading.chunks if fits_os(c, os_name)]
    return choose_target(article_sections(chunks), _scored_hits(reading.article), reading.qtype, query)  # type: ignore[arg-type]


class Reading:
    """The best article read for one step of a node (`read_target` when it answers the message, else None), read once
    however many of the step's functions ask: a node's state does not change while it runs."""

    def __init__(self, state: SupportState, ctx: SupportContext, groups: frozenset[str] = frozenset()) -> None:
        self._state, self._ctx, self._groups = state, ctx, groups
        self._read = False
        self._reading: ArticleReading | None = None

    def confident(self) -> ArticleReading | None:
        if not self._read:
            confident = is_confident(self._state, self._ctx)
            self._reading = read_target(self._state, self._ctx, groups=self._groups) if confident else None
            self._read = True
        return self._reading


def _scored_hits(article: ArticleRef) -> list[RetrievedChunk]:
    return [
        RetrievedChunk(
            chunk_id=h["chunk_id"],
            doc_id=article["doc_id"],
            title=article["title"],
            source=article["source"],
            section=h.get("section", ""),
            os="",
            chunk_index=0,
            text="",
            score=h["score"],
        )
        for h in article["hits"]
    ]


def anchor_source(reading: ArticleReading, n: int = 1) -> Source:
    """The citation: the article at the section the answer quotes."""
    anchor = dict(reading.target.anchor or reading.target.sections[0].chunks[0])
    anchor["section"] = reading.target.sections[0].name
    anchor.setdefault("score", reading.article["score"])
    return to_source(n, anchor)  # type: ignore[arg-type]


def tie(state: SupportState, ctx: SupportContext) -> list[ArticleRef]:
    """The two best articles when they fit equally well (both confident, scores within TIE_MARGIN); else []."""
    refs = found_articles(state, ctx)
    if len(refs) < 2:
        return []
    first, second = refs[0], refs[1]
    if (
        second["answerable"] >= ctx.confidence_threshold()
        and first["score"] - second["score"] <= TIE_MARGIN
        and abs(first["confidence"] - second["confidence"]) <= 0.1
    ):
        return [first, second]
    return []


def compose_reply(
    state: SupportState, ctx: SupportContext, reading: ArticleReading, *, closing: str = ""
) -> tuple[str, list[Source]]:
    """The offline answer: the part of the article that answers, quoted as written, cited. `closing`: a line before
    the sources (a walkthrough shown whole asks whether it worked); with one, what the section says of a message the
    employee quoted leads the reply even when the quote shows it too (it is read before any step is tried)."""
    body, cut = render(reading.target)
    source = anchor_source(reading)
    path = reading.target.sections[0].path
    shown = " > ".join(path[-2:]) if len(path) <= 2 else "… > " + " > ".join(path[-2:])
    label = f"{reading.article['title']} › {shown}" if path else reading.article["title"]
    lines = []
    if unsafe := unsafe_instructions(body):  # the document asks for credentials, payments or less security
        lines += [warning_for(unsafe), ""]
    if reading.target.matches:
        lines += [f"This matches: {reading.target.matches}", ""]
    if reading.target.retired and reading.target.retired.rstrip(" …") not in " ".join(body.split()):
        lines += [RETIRED.format(notice=reading.target.retired), ""]
    if reading.target.on_quoted and (closing or reading.target.on_quoted not in " ".join(body.split())):
        lines += [ABOUT_QUOTED.format(passage=reading.target.on_quoted), ""]
    if reading.target.admin_only:
        lines += [FOR_IT_TEAM, ""]
    lines += [f"From **{label}** [1]:", "", body]
    if cut:
        lines += ["", "… the article goes on; open [1] for the rest."]
    for_it = set(reading.target.for_it_team)
    others = [name for name in reading.target.alternatives if name not in for_it]
    if others:
        names = ", ".join(f"**{name}**" for name in others[:4])
        lines += ["", f"If that doesn't help, the article has other ways: {names}."]
    if for_it:
        names = ", ".join(f"**{name.split(' > ')[-1]}**" for name in reading.target.for_it_team[:4])
        lines += ["", ALSO_FOR_IT_TEAM.format(names=names)]
    if reading.other_os:
        current = sorted({c["os"] for s in reading.target.sections for c in s.chunks if c["os"]})
        if current:
            hint = " or ".join(OS_LABELS[o] for o in reading.other_os)
            lines += ["", f"These are the {OS_LABELS[current[0]]} steps. If you're on {hint}, tell me."]
    if closing:
        lines += ["", closing]
    lines += ["", "Sources:", cite(1, source)]
    return "\n".join(lines), [source]


def with_runner_up(
    text: str,
    sources: list[Source],
    state: SupportState,
    ctx: SupportContext,
    runner_up: ArticleRef,
    *,
    groups: frozenset[str] = frozenset(),
) -> tuple[str, list[Source]]:
    """Two articles fit equally: say so, keep the first one's answer, and offer the second in one line."""
    reading = read_target(state, ctx, runner_up, groups=groups)
    line = reading.target.matches if reading is not None and reading.target.matches else ""
    second = Source(
        n=2,
        title=runner_up["title"],
        source=runner_up["source"],
        section="",
        chunk_id=runner_up["hits"][0]["chunk_id"],
        score=runner_up["score"],
        doc_id=runner_up["doc_id"],
    )
    body, _, cited = text.partition("\nSources:\n")
    offer = (
        f"Another article could fit your question as well: if it's rather **{runner_up['title']}** [2]"
        + (f" ({line})" if line else "")
        + ', say "the other one" and I\'ll show that instead.'
    )
    return f"{body.rstrip()}\n\n{offer}\n\nSources:\n{cited}\n{cite(2, second)}", sources + [second]


MAX_REFERENCE_WORDS = 10


def points_into_article(state: SupportState) -> bool:
    """A short follow-up naming a step or method ("what about step 3?") of the article last answered from, or
    taking the other of two equally fitting articles ("the other one")."""
    text = state["turn"].get("query", "")
    active = state.get("active_article") or {}
    reference = follow_up_reference(text) if len(text.split()) <= MAX_REFERENCE_WORDS else None
    if reference is None or not active.get("doc_id"):
        return False
    return reference[0] != "article" or bool(active.get("runner_up"))


def runner_up_reply(
    state: SupportState, ctx: SupportContext, groups: frozenset[str] = frozenset()
) -> tuple[str, list[Source]] | None:
    """ "The other one": the answer from the second of two equally fitting articles, as far as a caller in
    `groups` may read it now (the offer was made under the groups of an earlier request)."""
    runner_up = (state.get("active_article") or {}).get("runner_up")
    if not runner_up:
        return None
    article = ArticleRef(
        doc_id=runner_up["doc_id"],
        title=runner_up["title"],
        source=runner_up["source"],
        score=0.0,
        answerable=1.0,
        confidence=0.0,
        hits=[],
    )
    reading = read_target(state, ctx, article, groups=groups)
    return compose_reply(state, ctx, reading) if reading is not None else None


def reference_reply(
    state: SupportState, ctx: SupportContext, groups: frozenset[str] = frozenset()
) -> tuple[str, list[Source]] | None:
    """The step or method a follow-up points at, from the article in play; None when it cannot be found."""
    active = state.get("active_article") or {}
    reference = follow_up_reference(state["turn"].get("query", ""))
    if not active.get("doc_id") or reference is None or ctx.lexical is None:
        return None
    chunks = [c for c in ctx.lexical.document_chunks(active["doc_id"], groups) if fits_os(c, state.get("user_os"))]
    sections = article_sections(chunks)
    if not sections:
        return None
    kind, n = reference
    title = sections[0].chunks[0]["title"]
    if kind == "article":
        return None  # handled by runner_up_reply
    if kind == "method":
        target = referenced_alternative(sections, n)
        if target is None:
            return None
        body, _ = render(target)
        source = to_source(1, dict(target.sections[0].chunks[0], score=1.0))  # type: ignore[arg-type]
        source["section"] = target.sections[0].name
        text = f"From **{title} › {source['section']}** [1]:\n\n{body}\n\nSources:\n{cite(1, source)}"
        return text, [source]
    in_play = [
        s
        for s in sections
        if active.get("section") and (s.name == active["section"] or s.name.startswith(active["section"] + " > "))
    ]
    steps = target_steps(Target(in_play or sections))
    if not steps:
        return None
    first = (in_play or sections)[0]
    source = to_source(1, dict(first.chunks[0], score=1.0))  # type: ignore[arg-type]
    source["section"] = first.name
    where = f"**{title} › {first.name}**" if first.name else f"**{title}**"
    if n > len(steps):
        text = f"{where} [1] has {len(steps)} steps, so there is no step {n}. Step {len(steps)} is:\n\n{steps[-1]}"
    else:
        text = f"Step {n} of {len(steps)} in {where} [1]:\n\n{steps[n - 1]}"
    return f"{text}\n\nSources:\n{cite(1, source)}", [source]


def composed_context(
    state: SupportState,
    ctx: SupportContext,
    fallback: list[RetrievedChunk],
    *,
    groups: frozenset[str] = frozenset(),
    read: Reading | None = None,
) -> list[RetrievedChunk]:
    """What an LLM is given: the chosen part of the best article first (whole, as one source), then the
    article's other ways and the runners-up's best passages; `fallback` when no article can be read. `read`: the
    step's reading of the best article, when the step has one (read with the same `groups`)."""
    reading = (read or Reading(state, ctx, groups)).confident()
    if reading is None:
        return fallback
    body, _ = render(reading.target, limit=LLM_SECTION_CHARS)
    if reading.target.retired and reading.target.retired.rstrip(" …") not in " ".join(body.split()):
        body = f"(The article opens with this notice: {reading.target.retired})\n\n{body}"
    if reading.target.for_it_team:  # the employee's way is source [1]; the IT team's parts are named, not mixed in
        body += "\n\n(The article also has parts for the IT team only: " + "; ".join(reading.target.for_it_team) + ".)"
    first = dict(reading.target.sections[0].chunks[0])
    first.update(
        text=body,
        section=reading.target.sections[0].name,
        score=reading.article["score"],
        role=reading.target.sections[0].role,
        reader="admin" if reading.target.admin_only else "user",
    )
    context: list[RetrievedChunk] = [first]  # type: ignore[list-item]
    used = {c["chunk_id"] for s in reading.target.sections for c in s.chunks}
    sections = article_sections(reading.chunks)
    for name in reading.target.alternatives:  # the article's other ways, after the one chosen
        parts = [s for s in sections if name in s.path]
        if parts and len(context) < ctx.top_k:
            text, _ = render(Target(parts), limit=ALTERNATIVE_CHARS)
            alternative = dict(
                parts[0].chunks[0],
                text=text,
                section=parts[0].name,
                role=parts[0].role,
                score=reading.article["score"],
                reader="admin" if all(p.reader == "admin" for p in parts) else "user",
            )
            context.append(alternative)  # type: ignore[arg-type]
            used |= {c["chunk_id"] for s in parts for c in s.chunks}
    for chunk in fallback:
        if chunk["chunk_id"] not in used and len(context) < ctx.top_k:
            context.append(chunk)
    return context


__all__ = [
    "ArticleHits",
    "ArticleReading",
    "Reading",
    "assess",
    "compose_reply",
    "composed_context",
    "is_confident",
    "question_type",
    "read_target",
    "tie",
]
