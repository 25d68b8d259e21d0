"""Searching the knowledge base as a chat turn does, for admins checking documents and filters (GET and
POST /search): the query redacted first, then the same retrieval pipeline over the same candidates, ranked
by article as the chat ranks them (an article's chunks together, the article chat would cite first), every
score returned."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from app.schemas import SearchHit, SearchRequest, SearchResponse, clean_message
from core.errors import InvalidRequest
from core.filters import parse_filter
from core.lexicon import strip_placeholders
from nodes.support.compose import rank_articles
from nodes.support.retrieval import search_chunks

if TYPE_CHECKING:
    from app.resources import Resources


def run_search(resources: Resources, request: SearchRequest) -> SearchResponse:
    """What the retrieval pipeline returns for the request's query, with every score (InvalidRequest → 422
    for a query with nothing in it)."""
    query = clean_message(request.query)
    if not query:
        raise InvalidRequest("'query' is empty; type what to search for.")
    # searched and echoed as a chat turn would see it: a password typed here never comes back in the reply
    query = resources.redactor.redact(query).text
    searched = strip_placeholders(query) or query  # the wording a chat turn searches with
    context = resources.retrieval_context
    if context is None:
        raise RuntimeError("search runs on the retrieval context built at start-up")
    read = context.lexical.read_slips(searched) if context.lexical is not None else searched
    started = time.perf_counter()
    candidates = search_chunks(
        context,
        read,
        resources.embedder.embed_query(read),
        k=max(request.top_k, context.candidate_k),  # the candidates a chat turn weighs
        groups=None,
        search_filter=parse_filter(request.filters),
        user_os=request.user_os,
    )
    articles = rank_articles(candidates)
    article_score = {a.doc_id: a.score for a in articles}
    hits = [hit for article in articles for hit in article.hits][: request.top_k]
    took = (time.perf_counter() - started) * 1000
    return SearchResponse(
        query=query,
        searched_as=read if read != searched else None,
        filters=request.filters,
        took_ms=round(took, 1),
        results=[
            SearchHit(
                rank=n,
                confident=hit["score"] >= context.min_score,
                article_score=article_score[hit["doc_id"]],
                **{k: hit.get(k) for k in SearchHit.model_fields if k not in ("rank", "confident", "article_score")},
            )
            for n, hit in enumerate(hits, start=1)
        ],
    )
