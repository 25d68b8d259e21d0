"""The indexing graph with fakes: content-hash skipping, replacement, refusal without side effects."""

import pytest

from app.adapters.parsers import FileParser
from graphs.context import IndexingContext
from graphs.errors import DocumentRejected
from graphs.indexing import build_indexing_graph
from tests.fakes import HashingEmbedder, InMemoryIndex

DOC_V1 = b"# Guide\n\n## Steps\n\n1. Open the app.\n2. Click Start.\n"
DOC_V2 = b"# Guide\n\n## Steps\n\n1. Open the new app.\n2. Click Begin.\n3. Wait.\n"


@pytest.fixture
def indexing():
    embedder, index = HashingEmbedder(), InMemoryIndex()
    context = IndexingContext(embedder=embedder, index=index, parser=FileParser(), chunk_max_tokens=64)
    graph = build_indexing_graph()
    return lambda source, data: graph.invoke({"source": source, "data": data}, context=context), embedder, index


def test_new_document_is_chunked_embedded_and_stored(indexing):
    run, embedder, index = indexing
    out = run("uploads/guide.md", DOC_V1)
    assert out["status"] == "new"
    assert out["document_info"]["title"] == "Guide" and out["document_info"]["chunk_count"] == index.count() >= 1
    assert embedder.calls


def test_reindexing_unchanged_bytes_changes_nothing(indexing):
    run, embedder, index = indexing
    first = run("uploads/guide.md", DOC_V1)
    calls, chunks = len(embedder.calls), dict(index.chunks)
    again = run("uploads/guide.md", DOC_V1)
    assert again["status"] == "unchanged"
    assert len(embedder.calls) == calls and index.chunks == chunks
    assert again["document_info"] == first["document_info"]


def test_changed_document_replaces_its_old_chunks(indexing):
    run, _, index = indexing
    run("uploads/guide.md", DOC_V1)
    out = run("uploads/guide.md", DOC_V2)
    assert out["status"] == "replaced"
    texts = " ".join(c["text"] for c, _ in index.chunks.values())
    assert "new app" in texts and "Click Start" not in texts
    assert len(index.list_documents()) == 1


def test_a_refused_upload_leaves_the_index_as_it_was(indexing):
    run, _, index = indexing
    run("uploads/guide.md", DOC_V1)
    before = (dict(index.chunks), dict(index.documents))
    with pytest.raises(DocumentRejected):
        run("uploads/guide.md", b"%PDF-1.4 this is not really a pdf")  # same name, broken content
    with pytest.raises(DocumentRejected):
        run("uploads/other.md", b"   \n\n  ")
    assert (index.chunks, index.documents) == before


def test_a_batch_embeds_many_documents_together_and_each_switches_in_the_real_index(tmp_path):
    from app.adapters.tracing import NullTracer
    from app.adapters.vector_index import ChromaVectorIndex, make_client
    from app.indexing_service import IndexingService, PendingDocument

    embedder = HashingEmbedder()
    index = ChromaVectorIndex(make_client("persistent", path=str(tmp_path / "chroma")), "batch")
    service = IndexingService(build_indexing_graph(), IndexingContext(
        embedder=embedder, index=index, parser=FileParser(), chunk_max_tokens=64, embed_batch_size=8), NullTracer())
    pages = [PendingDocument(f"https://wiki.example/pages/{n}", f"# Page {n}\n\nPrinter queue {n} is reset "
                             f"from the tray menu.\n".encode(), filename="page.md") for n in range(20)]
    results = service.index_many(pages)
    assert [r.status for r in results] == ["new"] * 20
    assert sum(len(call) for call in embedder.calls) == 20 and len(embedder.calls) == 3  # 8 + 8 + 4, not 20 calls
    assert len(index.list_documents()) == 20 and index.count() == 20

    embedder.calls.clear()
    edited = [pages[0], PendingDocument(pages[1].source, b"# Page 1\n\nThe badge reader is in the lobby.\n",
                                        filename="page.md"),
              PendingDocument("https://wiki.example/pages/broken", b"   \n\n ", filename="page.md")]
    again = service.index_many(edited)
    assert [r.status for r in again] == ["unchanged", "replaced", "failed"]
    assert "No text could be extracted" in again[2].error
    assert len(embedder.calls) == 1 and "badge reader" in embedder.calls[0][0]  # only the edited page
    hits = index.query(embedder.embed_query("badge reader lobby"), k=3)
    assert hits[0]["source"] == pages[1].source and "badge reader" in hits[0]["text"]
    assert not [c for c in index.iter_chunks(doc_id=again[1].document["doc_id"]) if "Printer" in c["text"]]
