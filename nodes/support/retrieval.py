"""The retrieval pipeline, shared by the `retrieve` node and bench/retrieval.py.

    dense + lexical candidates → fusion → the title as the question a page answers → section aggregation
    → neighbours of the top hit
    → optional cross-encoder rerank → feedback adjustment → top-k

Each stage is a small function over a `Ranking` (chunks best first, with the value they are ranked
by); `search_chunks` wires them and reaches the world only through the context's ports. Every
stage is switchable (RetrievalConfig), so the benchmark measures exactly what users get, one
feature at a time.

`score` stays a calibrated 0..1 confidence that the decision and answer steps compare with
`min_score`: the cosine when dense-only; with hybrid retrieval w·cosine + (1 − w)·BM25 share, where
the BM25 share is the chunk's BM25 divided by the best BM25 any chunk could reach for the query
(off-topic questions match neither and stay near 0); a reranker's probability when one is on.
The ranking value equals the score under weighted fusion and is the reciprocal-rank sum under rrf.
"""

from __future__ import annotations

import logging
import math
import re
from contextlib import nullcontext
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence, cast

from core.filters import SearchFilter, access_where, combine_where, fallback_where, primary_where, secondary_matches
from core.lexicon import is_troubleshooting, it_topics, platform_words, platforms
from core.records import RetrievedChunk
from core.text import Tokenizer

if TYPE_CHECKING:
    from graphs.support import RetrievalConfig, SupportContext

log = logging.getLogger(__name__)


def feedback_key(chunk: RetrievedChunk) -> str:
    """What votes attach to: the chunk's text within its document, so they survive re-uploads that
    leave the passage unchanged (a chunk id changes with every version)."""
    content_hash = chunk.get("content_hash")
    return f"{chunk['doc_id']}:{content_hash}" if content_hash else chunk["chunk_id"]


def fits_os(chunk: RetrievedChunk, user_os: str | None) -> bool:
    """A chunk written for another OS than the user's is not an answer for them."""
    return not user_os or not chunk["os"] or chunk["os"] == user_os


def _clip(value: float) -> float:
    return round(min(1.0, max(0.0, value)), 4)


@dataclass
class Ranking:
    """Chunks best first and the value each is ranked by (higher is better)."""

    chunks: list[RetrievedChunk] = field(default_factory=list)
    value: dict[str, float] = field(default_factory=dict)

    def sort(self) -> Ranking:
        self.chunks.sort(key=lambda c: self.value[c["chunk_id"]], reverse=True)
        return self

    def scale(self, chunk: RetrievedChunk, factor: float) -> None:
        """Multiply a chunk's ranking value and its confidence (the confidence stays within 0..1)."""
        self.value[chunk["chunk_id"]] *= factor
        chunk["score"] = _clip(chunk["score"] * factor)


# --- stage 1: fusion ---------------------------------------------------------------------------
def dense_only(dense: Sequence[RetrievedChunk]) -> Ranking:
    chunks = [RetrievedChunk(**hit) for hit in dense]
    for chunk in chunks:
        chunk.setdefault("dense_score", chunk["score"])
        chunk.setdefault("origin", "dense")
    return Ranking(chunks, {c["chunk_id"]: c["score"] for c in chunks}).sort()


def fuse(
    dense: Sequence[RetrievedChunk],
    lexical: Sequence[RetrievedChunk],
    *,
    dense_scores: dict[str, float],
    lexical_scores: dict[str, float],
    config: RetrievalConfig,
) -> Ranking:
    """Merge both candidate lists. Each chunk gets both scores (looked up when only one side found it)
    and `score` = w·dense + (1 − w)·lexical; ranked by that score, or by reciprocal rank under rrf."""
    merged: dict[str, RetrievedChunk] = {}
    for hit in dense:
        merged[hit["chunk_id"]] = RetrievedChunk(**hit)
        merged[hit["chunk_id"]].setdefault("dense_score", hit["score"])
        merged[hit["chunk_id"]].setdefault("origin", "dense")
    for hit in lexical:
        if hit["chunk_id"] in merged:
            both = merged[hit["chunk_id"]]
            for key, field_value in hit.items():  # e.g. the document context, when one side lacks it
                cast(dict[str, Any], both).setdefault(key, field_value)  # any key: both sides are chunks
            both.update({"lexical_score": hit["lexical_score"], "origin": "both"})
        else:
            merged[hit["chunk_id"]] = RetrievedChunk(**hit)
    w = config.dense_weight
    value: dict[str, float] = {}
    for chunk_id, chunk in merged.items():
        d = chunk.get("dense_score", dense_scores.get(chunk_id, 0.0))
        lex = chunk.get("lexical_score", lexical_scores.get(chunk_id, 0.0))
        chunk.update({"dense_score": d, "lexical_score": lex, "score": _clip(w * d + (1 - w) * lex)})
        value[chunk_id] = w * d + (1 - w) * lex
    if config.fusion == "rrf":
        ranks = [{h["chunk_id"]: r for r, h in enumerate(hits)} for hits in (dense, lexical)]
        value = {cid: sum(1.0 / (config.rrf_k + r[cid] + 1) for r in ranks if cid in r) for cid in merged}
    return Ranking(list(merged.values()), value).sort()


def boost_secondary(ranking: Ranking, search_filter: SearchFilter, boost: float) -> Ranking:
    """Secondary filters rank, not exclude: × (1 + boost × share of the secondary fields matched)."""
    if not search_filter.secondary or boost <= 0:
        return ranking
    for chunk in ranking.chunks:
        ranking.scale(chunk, 1 + boost * secondary_matches(chunk, search_filter))
    return ranking.sort()


# --- the title as the question a page answers ---------------------------------------------------
# A page's title says which question it answers ("Add a printer", "Shared mailboxes", "Why does my VPN drop every 8
# hours?"), in the words an asker uses for the thing, where the body's words come from the fix. That holds where the
# title names a page: a page of several headed parts, or a page whose title is a question. A collection of one-part
# documents titled like headings (a manual exported section by section) is different: each title is one heading among
# its siblings ("Using the guide", "Cancelling a scheduled viewing"), and there the body decides. So the stage applies
# when the articles competing for a question are made of headed parts (some candidate passage sits under a heading
# below its title), and always to a question title. Title words count by how few of the competing titles use them.
# Measured (the retrieval context of bench/dev_sets.py searched directly, weight 0.1): the right article first for
# .738 of the help-centre set's questions (.688 without) and .887 of the Microsoft set's (.875); tv-dev's nDCG@10
# unchanged at .848 (ungated, it fell to .840; unweighted at 0.2, to .833).
TITLE_MATCH_WEIGHT = 0.1


def title_term_weights(titles: Sequence[Sequence[str]]) -> dict[str, float]:
    """Each title term's weight among the competing titles: BM25's IDF over them, so a word every candidate's title
    shares (the product, the device) tells them apart little, a word only one title uses much."""
    df: dict[str, int] = {}
    for terms in titles:
        for term in set(terms):
            df[term] = df.get(term, 0) + 1
    n = len(titles)
    return {t: math.log(1 + (n - d + 0.5) / (d + 0.5)) for t, d in df.items()}


def title_match(
    title_terms: Sequence[str], question_terms: set[str], weights: Mapping[str, float] | None = None
) -> float:
    """The share of a title's terms (stop words dropped, stemmed) that the question uses (0..1), each term counted by
    its weight (`weights`; a term without one counts 1)."""
    weight = weights or {}
    total = sum(weight.get(t, 1.0) for t in title_terms)
    return sum(weight.get(t, 1.0) for t in title_terms if t in question_terms) / total if total else 0.0


def names_a_page(chunk: RetrievedChunk, headed: bool) -> bool:
    """The chunk's title names the page a question is about: its article has headed parts (`headed`: the competing
    articles do), or the title is itself a question."""
    return headed or chunk["title"].rstrip().endswith("?")


# knowledge-base titles and headings read turn after turn: their terms and topics are worked out once while they stay
# among the most recently used (short strings of the documents, never a person's words)
_HEADINGS_CACHED = 4096


@lru_cache(maxsize=_HEADINGS_CACHED)
def _title_terms(title: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(Tokenizer()(title)))


def prefer_title_match(ranking: Ranking, query: str, weight: float = TITLE_MATCH_WEIGHT) -> Ranking:
    """Passages rank higher by how much of their article's title the question says: × (1 + weight × share), so a
    title the question repeats whole adds `weight`, one it never touches nothing (a long title shares a smaller
    part, a short page's title-question a larger one). Only titles that name a page (`names_a_page`). The factor is
    kept on the chunk (`title_boost`): the answer confidence reads the score without it, as its model was fitted."""
    if weight <= 0 or not ranking.chunks:
        return ranking
    tokenize = Tokenizer()
    asked = set(tokenize(query))
    if not asked:
        return ranking
    headed = any(c["section"] for c in ranking.chunks)
    terms = {c["title"]: list(_title_terms(c["title"])) for c in ranking.chunks}
    weights = title_term_weights(list(terms.values()))
    shares = {title: title_match(title_terms, asked, weights) for title, title_terms in terms.items()}
    for chunk in ranking.chunks:
        if shares[chunk["title"]] and names_a_page(chunk, headed):
            chunk["title_boost"] = round(1 + weight * shares[chunk["title"]], 4)
            ranking.scale(chunk, chunk["title_boost"])
    return ranking.sort()


# a question that asks how to do something, and names no fault: an article about a fault ("VPN Troubleshooting: Can't
# Connect …") ranks behind one about doing it ("Connecting to the VPN") that its words match about as well
PROBLEM_ARTICLE_FACTOR = 0.93
_HOW_TO_ASK = re.compile(
    r"\bhow\s+(?:do|can|should|would)\s+(?:i|we|you)\b|\bhow\s+to\b|^\W*(?:please\s+)?(?:set\s*up|install|configure)\b",
    re.I,
)
_PROBLEM_TITLE = re.compile(
    r"\b(?:troubleshoot\w*|can'?t|cannot|unable|not\s+working|doesn'?t|don'?t|won'?t|isn'?t|aren'?t|fails?|failed|"
    r"failures?|errors?|problems?|issues?|missing|stuck|broken|crash\w*)\b",
    re.I,
)


def prefer_task_articles(ranking: Ranking, query: str) -> Ranking:
    """A how-to question that names no fault: passages of articles whose title names one (× PROBLEM_ARTICLE_FACTOR,
    kept in `title_boost` so that the answer confidence reads the score without it)."""
    if not ranking.chunks or not _HOW_TO_ASK.search(query) or is_troubleshooting(query):
        return ranking
    for chunk in ranking.chunks:
        if _PROBLEM_TITLE.search(chunk["title"]):
            chunk["title_boost"] = round(float(chunk.get("title_boost", 1.0)) * PROBLEM_ARTICLE_FACTOR, 4)
            ranking.scale(chunk, PROBLEM_ARTICLE_FACTOR)
    return ranking.sort()


# --- stage 2: section aggregation ---------------------------------------------------------------
def aggregate_sections(ranking: Ranking, *, max_per_section: int, bonus: float = 0.0) -> Ranking:
    """Rank sections (document + heading path) by their best chunk (+ bonus × their second best) and
    keep at most `max_per_section` chunks of each, so one long section cannot crowd the others out
    of the top-k. A section's further chunks slot in by value but never before its best one, so a
    section's rank is the position of its best chunk."""
    value = ranking.value
    sections: dict[tuple[str, str], list[RetrievedChunk]] = {}
    for chunk in ranking.chunks:  # best first
        sections.setdefault((chunk["doc_id"], chunk["section"]), []).append(chunk)

    def section_value(members: list[RetrievedChunk]) -> float:
        second = value[members[1]["chunk_id"]] if len(members) > 1 else 0.0
        return value[members[0]["chunk_id"]] + bonus * second

    ordered = sorted(sections.values(), key=section_value, reverse=True)
    out: list[RetrievedChunk] = []
    released: list[RetrievedChunk] = []  # further chunks whose section's best is already out
    for members in ordered:
        head = members[0]
        while released and value[released[0]["chunk_id"]] > value[head["chunk_id"]]:
            out.append(released.pop(0))
        out.append(head)
        released = sorted(released + members[1:max_per_section], key=lambda c: value[c["chunk_id"]], reverse=True)
    kept = out + released
    return Ranking(kept, {c["chunk_id"]: value[c["chunk_id"]] for c in kept})


# --- stage 3: neighbours of the top hit ---------------------------------------------------------
TOPIC_MISMATCH = 0.6  # a passage about another IT thing than the one the question names ranks this much lower
# topics too broad to tell two articles apart ("connection", "app", "computer" fit almost anything; "IT" in a title
# — "for IT admins" — names who a page is for, not a service desk question)
BROAD_TOPICS = frozenset({"network", "software", "laptop", "service desk"})


def _named_topics(text: str) -> set[str]:
    return set(it_topics(text)) - BROAD_TOPICS


@lru_cache(maxsize=_HEADINGS_CACHED)
def _heading_topics(title: str, section: str) -> frozenset[str]:
    return frozenset(_named_topics(f"{title} {section}"))


@lru_cache(maxsize=_HEADINGS_CACHED)
def _heading_platforms(title: str, section: str) -> frozenset[str]:
    return frozenset(platforms(f"{title} {section}"))


def _prefer_named(
    ranking: Ranking,
    asked: set[str],
    named_in: Callable[[str, str], frozenset[str]],
    factor: Callable[[frozenset[str]], float],
) -> Ranking:
    """When some passage's title or section names one of the things `asked`, every passage whose title or section
    names any such thing is scaled by `factor` of what it names; a knowledge base whose headings name none of them,
    and passages whose headings name nothing, are ranked as before."""
    if not asked:
        return ranking
    named = {c["chunk_id"]: named_in(c["title"], c["section"]) for c in ranking.chunks}
    if not any(found & asked for found in named.values()):
        return ranking
    for chunk in ranking.chunks:
        if found := named[chunk["chunk_id"]]:
            ranking.scale(chunk, factor(found))
    return ranking.sort()


def prefer_named_topic(ranking: Ranking, query: str) -> Ranking:
    """The question names the thing it is about ("the wifi keeps dropping"): when some passage's title or section
    names that thing too, passages whose title and section name only other things ("VPN Troubleshooting › The VPN
    keeps disconnecting") rank lower, and those also about things not asked about ("Enrolling a phone for e-mail"
    for MFA on a new phone) a little lower — the thing named decides the article, the symptom the section. A
    knowledge base whose titles name no such thing is ranked as before."""
    asked = _named_topics(query)
    # the less of what it is about was asked about, the lower: "MFA on my new phone" → the MFA article
    return _prefer_named(
        ranking,
        asked,
        _heading_topics,
        lambda found: TOPIC_MISMATCH + (1 - TOPIC_MISMATCH) * len(found & asked) / len(asked),
    )


def prefer_named_platform(ranking: Ranking, query: str) -> Ranking:
    """The question names the platform in hand ("on my iphone", "my ubuntu laptop"): when some passage's title or
    section names that platform, passages whose title and section name only other platforms ("Synchronizing with
    Android") rank lower. Passages that name no platform are ranked as before."""
    asked = platforms(query)
    return _prefer_named(ranking, asked, _heading_platforms, lambda found: 1.0 if found & asked else TOPIC_MISMATCH)


def expand_neighbours(ranking: Ranking, neighbours: Sequence[RetrievedChunk], *, decay: float) -> Ranking:
    """Put the top hit's adjacent chunks (same section) right after it, scored top × decay, so an
    answer that continues in the next chunk is not cut in half. Done before reranking,
    so a reranker scores them like every other candidate."""
    if not ranking.chunks or not neighbours:
        return ranking
    top = ranking.chunks[0]
    present = {c["chunk_id"] for c in ranking.chunks}
    added = []
    for neighbour in neighbours:
        if neighbour["chunk_id"] in present:
            continue
        chunk = RetrievedChunk(**neighbour)
        chunk.update({"score": _clip(top["score"] * decay), "origin": "neighbour"})
        ranking.value[chunk["chunk_id"]] = ranking.value[top["chunk_id"]] * decay
        added.append(chunk)
    ranking.chunks[1:1] = added
    return ranking


# --- stage 4: rerank -----------------------------------------------------------------------------
def rerank(ranking: Ranking, query: str, scores: Sequence[float], top_n: int) -> Ranking:
    """The first `top_n` candidates (neighbours included) rescored by a cross-encoder; the rest dropped."""
    pool = ranking.chunks[:top_n]
    for chunk, probability in zip(pool, scores):
        chunk.update({"rerank_score": _clip(probability), "score": _clip(probability)})
        chunk.pop("title_boost", None)  # the score is the reranker's now, with no boost in it
    return Ranking(pool, {c["chunk_id"]: c["score"] for c in pool}).sort()


def passage(chunk: RetrievedChunk) -> str:
    """What a cross-encoder reads: the heading path and the body."""
    heading = " > ".join(p for p in (chunk["title"], chunk["section"]) if p)
    return f"{heading}\n{chunk['text']}"


# --- stage 5: feedback ----------------------------------------------------------------------------
def apply_feedback(ranking: Ranking, multipliers: dict[str, float]) -> Ranking:
    """Bounded multipliers learned from votes (FeedbackSource), applied after fusion and rerank."""
    if not multipliers:
        return ranking
    for chunk in ranking.chunks:
        factor = multipliers.get(feedback_key(chunk))
        if factor is not None and factor != 1.0:
            chunk["feedback_multiplier"] = factor
            ranking.scale(chunk, factor)
    return ranking.sort()


# --- the pipeline ---------------------------------------------------------------------------------
def _candidates(ctx: SupportContext, query: str, embedding: Sequence[float], where: dict | None) -> Ranking:
    config = ctx.retrieval
    dense = ctx.index.query(embedding, k=ctx.candidate_k, where=where)
    if not (config.lexical and ctx.lexical is not None):
        return dense_only(dense)
    dense_ids = {h["chunk_id"] for h in dense}
    # the dense hits' BM25 shares come with the search (one call): those the search returned are not used
    words = platform_words(query)
    lexical_query = f"{query} {' '.join(words)}" if words else query
    lexical, shares = ctx.lexical.search_scored(
        lexical_query, ctx.candidate_k, where=where, chunk_ids=sorted(dense_ids)
    )
    lexical_ids = {h["chunk_id"] for h in lexical}
    return fuse(
        dense,
        lexical,
        dense_scores=ctx.index.similarities(embedding, sorted(lexical_ids - dense_ids)),
        lexical_scores={cid: share for cid, share in shares.items() if cid not in lexical_ids},
        config=config,
    )


def search_chunks(
    ctx: SupportContext,
    query: str,
    embedding: Sequence[float],
    *,
    k: int,
    groups: frozenset[str] | None,
    search_filter: SearchFilter | None = None,
    user_os: str | None = None,
) -> list[RetrievedChunk]:
    """The best `k` chunks for a query (text for BM25 and the reranker, embedding for the dense index).

    `groups`: the caller's groups — only unrestricted documents and those whose audience names one of
    them are searched (filtered inside the vector and BM25 queries); None searches everything (admin tools).
    """
    config = ctx.retrieval
    search_filter = search_filter or SearchFilter()
    allowed = access_where(groups)
    # a shared lexical index holds one connection for the calls below (search and scores, neighbours), and
    # gives it back before the reranker runs
    lexical_reads = ctx.lexical is not None and (config.lexical or config.neighbour_radius > 0)
    with ctx.lexical.reading() if ctx.lexical is not None and lexical_reads else nullcontext():
        ranking = _candidates(ctx, query, embedding, combine_where(allowed, primary_where(search_filter)))
        if not ranking.chunks and search_filter.primary and search_filter.secondary:
            # nothing matches the primary fields → any document matching a secondary value
            ranking = _candidates(ctx, query, embedding, combine_where(allowed, fallback_where(search_filter)))
        ranking.chunks = [c for c in ranking.chunks if fits_os(c, user_os)]
        ranking = boost_secondary(ranking, search_filter, config.secondary_boost)
        ranking = prefer_named_topic(ranking, query)
        ranking = prefer_named_platform(ranking, query)
        ranking = prefer_title_match(ranking, query, config.title_match_weight)
        ranking = prefer_task_articles(ranking, query)
        if config.aggregate_sections:
            ranking = aggregate_sections(
                ranking, max_per_section=config.max_chunks_per_section, bonus=config.section_bonus
            )
        if (
            config.neighbour_radius > 0
            and ctx.lexical is not None
            and ranking.chunks
            and ranking.chunks[0]["score"] >= ctx.min_score
        ):
            found = ctx.lexical.neighbours(ranking.chunks[0]["chunk_id"], config.neighbour_radius)
            ranking = expand_neighbours(
                ranking, [c for c in found if fits_os(c, user_os)], decay=config.neighbour_decay
            )
    if ctx.reranker is not None and ranking.chunks:
        pool = ranking.chunks[: config.rerank_top_n]
        ranking = rerank(ranking, query, ctx.reranker.score(query, [passage(c) for c in pool]), config.rerank_top_n)
    if config.feedback and ctx.feedback is not None and ranking.chunks:
        ranking = apply_feedback(
            ranking, ctx.feedback.multipliers([feedback_key(c) for c in ranking.chunks], embedding)
        )
    return ranking.chunks[:k]
