"""The answer node over whole articles: two equal fits, "the other one", and references into the article."""

from langgraph.runtime import Runtime

from app.adapters.redactor import PatternRedactor
from graphs.support import SupportContext, turn_result
from nodes.support.answer import answer
from nodes.support.article_answer import assess
from tests.fakes import HashingEmbedder, InMemoryIndex, chunk, support_state


def _ctx():
    return SupportContext(embedder=HashingEmbedder(), index=InMemoryIndex(), redactor=PatternRedactor(), min_score=0.4)


PRINTER = [
    chunk(
        "The printer shows Offline.",
        section="Symptoms",
        doc_id="p",
        chunk_index=0,
        score=0.60,
        title="Printer offline",
        source="kb/printer.md",
    ),
    chunk(
        "1. Turn the printer off and on.\n2. Remove and add it again.",
        section="Resolution",
        doc_id="p",
        chunk_index=1,
        score=0.50,
        title="Printer offline",
        source="kb/printer.md",
    ),
]
QUEUE = [
    chunk(
        "Jobs stay in the queue.",
        section="Symptoms",
        doc_id="q",
        chunk_index=0,
        score=0.595,
        title="Print queue stuck",
        source="kb/queue.md",
    ),
    chunk(
        "1. Open the queue.\n2. Cancel all documents.",
        section="Resolution",
        doc_id="q",
        chunk_index=1,
        score=0.45,
        title="Print queue stuck",
        source="kb/queue.md",
    ),
]


def _state(query, chunks):
    ctx = _ctx()
    return {"query": query, "retrieved_chunks": chunks, "articles": assess(ctx, query, chunks), "search_count": 1}


def test_two_articles_that_fit_equally_are_both_named_and_the_first_answered():
    out = turn_result(
        answer(support_state(_state("my printer does not print", PRINTER + QUEUE)), Runtime(context=_ctx()), {})
    )
    assert "1. Turn the printer off and on." in out["answer"]  # the first, answered whole
    assert (
        "Another article could fit your question as well" in out["answer"]
        and "**Print queue stuck** [2]" in out["answer"]
    )
    assert [s["source"] for s in out["sources"]] == ["kb/printer.md", "kb/queue.md"]


def test_a_clear_winner_is_answered_alone():
    lone = [dict(c, score=c["score"] - 0.2) for c in QUEUE]
    out = turn_result(
        answer(support_state(_state("my printer does not print", PRINTER + lone)), Runtime(context=_ctx()), {})
    )
    assert "Two articles" not in out["answer"] and [s["source"] for s in out["sources"]] == ["kb/printer.md"]


def test_the_other_one_answers_from_the_second_article():
    state = _state("the other one", PRINTER + QUEUE) | {
        "active_article": {
            "doc_id": "p",
            "title": "Printer offline",
            "source": "kb/printer.md",
            "section": "Resolution",
            "runner_up": {"doc_id": "q", "title": "Print queue stuck", "source": "kb/queue.md"},
        }
    }
    out = turn_result(answer(support_state(state), Runtime(context=_ctx()), {}))
    assert "Cancel all documents" in out["answer"] and out["sources"][0]["source"] == "kb/queue.md"
