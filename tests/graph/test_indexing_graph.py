"""The indexing graph with fakes: content-hash skipping, replacement, refusal without side effects."""

import time

import pytest

from app.adapters.parsers import FileParser
from core.errors import DocumentRejected
from graphs.indexing import IndexingContext, build_indexing_graph
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


def _first_hits(index, vector, source: str, wait_s: float = 30.0) -> list:
    """The index's answer once `source` leads it: Chroma's vector index takes in a replaced document's vectors
    after the write returns, and on a busy machine a query can come first (once, in a full suite, past 10 s)."""
    import time

    deadline = time.monotonic() + wait_s
    hits = index.query(vector, k=3)
    while hits[0]["source"] != source and time.monotonic() < deadline:
        time.sleep(0.2)
        hits = index.query(vector, k=3)
    return hits


def test_a_batch_embeds_many_documents_together_and_each_switches_in_the_real_index(tmp_path):
    from app.adapters.tracing import NullTracer
    from app.adapters.vector_index import ChromaVectorIndex, make_client
    from app.indexing_service import IndexingService, PendingDocument

    embedder = HashingEmbedder()
    index = ChromaVectorIndex(make_client("persistent", path=str(tmp_path / "chroma")), "batch")
    service = IndexingService(
        build_indexing_graph(),
        IndexingContext(embedder=embedder, index=index, parser=FileParser(), chunk_max_tokens=64, embed_batch_size=8),
        NullTracer(),
    )
    pages = [
        PendingDocument(
            f"https://wiki.example/pages/{n}",
            f"# Page {n}\n\nPrinter queue {n} is reset from the tray menu.\n".encode(),
            filename="page.md",
        )
        for n in range(20)
    ]
    results = service.index_many(pages)
    assert [r.status for r in results] == ["new"] * 20
    assert sum(len(call) for call in embedder.calls) == 20 and len(embedder.calls) == 3  # 8 + 8 + 4, not 20 calls
    assert len(index.list_documents()) == 20 and index.count() == 20

    embedder.calls.clear()
    edited = [
        pages[0],
        PendingDocument(pages[1].source, b"# Page 1\n\nThe badge reader is in the lobby.\n", filename="page.md"),
        PendingDocument("https://wiki.example/pages/broken", b"   \n\n ", filename="page.md"),
    ]
    again = service.index_many(edited)
    assert [r.status for r in again] == ["unchanged", "replaced", "failed"]
    assert "No text could be extracted" in again[2].error
    assert len(embedder.calls) == 1 and "badge reader" in embedder.calls[0][0]  # only the edited page
    hits = _first_hits(index, embedder.embed_query("badge reader lobby"), pages[1].source)
    assert hits[0]["source"] == pages[1].source and "badge reader" in hits[0]["text"]
    assert not [c for c in index.iter_chunks(doc_id=again[1].document["doc_id"]) if "Printer" in c["text"]]


def _manual(sections: int, word: str) -> bytes:
    return (
        "# Field manual\n"
        + "".join(
            f"\n## Procedure {n}\n\nReseat the {word} connector {n} of cabinet {n} and note the reading.\n"
            for n in range(sections)
        )
    ).encode()


class _Stop(BaseException):
    """What a cancelled job raises from its progress report."""


def test_a_large_document_written_while_it_is_embedded_stays_invisible_until_its_switch_and_a_stop_removes_it(tmp_path):
    from app.adapters.lexical_index import HybridIndex
    from app.adapters.vector_index import ChromaVectorIndex, make_client
    from nodes.indexing.steps import STAGE_CHUNKS, STAGE_MIN_CHUNKS

    embedder = HashingEmbedder()
    index = HybridIndex(ChromaVectorIndex(make_client("persistent", path=str(tmp_path / "chroma")), "staged"))
    graph = build_indexing_graph()
    old = graph.invoke(
        {"source": "uploads/manual.md", "data": _manual(3, "amber")},
        context=IndexingContext(embedder=embedder, index=index, parser=FileParser(), chunk_max_tokens=64),
    )["document_info"]
    seen: list[tuple[int, int, list[str], str]] = []  # (done, chunks in Chroma, BM25 hits, active version)

    def watch(done: int, total: int) -> None:
        hits = index.query(embedder.embed_query("Reseat the violet connector"), k=3)
        seen.append(
            (
                done,
                index.count(),
                [h["text"] for h in index.search("violet", 3)],
                index.get_document(old["doc_id"])["version"],
            )
        )
        assert all("violet" not in h["text"] for h in hits)  # the new version's chunks are not found yet
        if stop_at is not None and done >= stop_at:
            raise _Stop()

    context = IndexingContext(embedder=embedder, index=index, parser=FileParser(), chunk_max_tokens=64, progress=watch)
    new_manual = _manual(STAGE_MIN_CHUNKS + 150, "violet")
    stop_at = STAGE_CHUNKS + 64  # stopped after one staged write
    with pytest.raises(_Stop):
        graph.invoke({"source": "uploads/manual.md", "data": new_manual}, context=context)
    assert max(count for _, count, _, _ in seen) > old["chunk_count"]  # it really wrote while embedding …
    assert all(hits == [] and version == old["version"] for _, _, hits, version in seen)
    assert index.count() == old["chunk_count"]  # … and the stop removed what it wrote
    assert index.get_document(old["doc_id"])["version"] == old["version"]
    assert "amber" in index.search("amber connector", 1)[0]["text"]

    seen.clear()
    stop_at = None
    out = graph.invoke({"source": "uploads/manual.md", "data": new_manual}, context=context)
    info = out["document_info"]
    assert out["status"] == "replaced" and info["chunk_count"] >= STAGE_MIN_CHUNKS
    assert index.count() == info["chunk_count"] and index.get_document(info["doc_id"])["version"] == info["version"]
    assert index.query(embedder.embed_query("Reseat the violet connector 7 of cabinet 7"), k=1)[0]["text"].count(
        "violet"
    )
    assert index.search("amber", 3) == [] and "violet" in index.search("violet", 1)[0]["text"]


def test_a_staged_chunk_swept_before_the_switch_is_written_again(tmp_path):
    from app.adapters.lexical_index import HybridIndex
    from app.adapters.vector_index import ChromaVectorIndex, make_client
    from nodes.indexing.steps import STAGE_MIN_CHUNKS

    embedder = HashingEmbedder()
    vector = ChromaVectorIndex(make_client("persistent", path=str(tmp_path / "chroma")), "swept")
    index = HybridIndex(vector)
    swept = []

    def sweep_midway(done: int, total: int) -> None:  # another process starting up sweeps unswitched chunks
        if done == total and not swept:
            deadline = time.monotonic() + 30
            while vector.count() == 0 and time.monotonic() < deadline:  # the first write is on its thread
                time.sleep(0.05)
            swept.append(vector.reconcile())

    context = IndexingContext(
        embedder=embedder, index=index, parser=FileParser(), chunk_max_tokens=64, progress=sweep_midway
    )
    out = build_indexing_graph().invoke(
        {"source": "uploads/manual.md", "data": _manual(STAGE_MIN_CHUNKS + 50, "teal")}, context=context
    )
    assert swept and swept[0] > 0
    assert index.count() == out["document_info"]["chunk_count"]  # whole after the switch


def test_a_folder_synced_again_unchanged_runs_no_graph_and_reads_the_store_once(tmp_path):
    """A start finds the bundled folder indexed already: one listing of the store, no graph run or per-file
    read; an edited file, or a file whose included fragment was edited, is still indexed again."""
    from app.adapters.tracing import NullTracer
    from app.indexing_service import IndexingService

    class CountingIndex(InMemoryIndex):
        def __init__(self) -> None:
            super().__init__()
            self.reads = 0

        def get_document(self, doc_id):
            self.reads += 1
            return super().get_document(doc_id)

    class CountingGraph:
        def __init__(self, graph) -> None:
            self.graph, self.runs = graph, 0

        def invoke(self, *args, **kwargs):
            self.runs += 1
            return self.graph.invoke(*args, **kwargs)

    folder = tmp_path / "kb"
    (folder / "includes").mkdir(parents=True)
    (folder / "guide.md").write_bytes(DOC_V1)
    (folder / "vpn.md").write_text('# VPN\n\n## Connect\n\nOpen the client.\n\n--8<-- "includes/note.md"\n')
    (folder / "includes" / "note.md").write_text("Ask the service desk for a token.\n")
    embedder, index, graph = HashingEmbedder(), CountingIndex(), CountingGraph(build_indexing_graph())
    service = IndexingService(
        graph, IndexingContext(embedder=embedder, index=index, parser=FileParser(), chunk_max_tokens=64), NullTracer()
    )
    first = {r.source: r.status for r in service.sync_directory(folder)}
    assert first == {"kb/guide.md": "new", "kb/vpn.md": "new", "kb/includes/note.md": "included"}

    graph.runs, index.reads, embedder.calls = 0, 0, []
    again = service.sync_directory(folder)
    assert {r.source: r.status for r in again} == first | {"kb/guide.md": "unchanged", "kb/vpn.md": "unchanged"}
    assert graph.runs == 0 and not embedder.calls
    assert index.reads == 1  # the fragment's own check; the articles were found in the one listing
    guide = next(r for r in again if r.source == "kb/guide.md").document
    assert guide is not None and guide == index.get_document(guide["doc_id"])  # what the graph would report

    (folder / "guide.md").write_bytes(DOC_V2)
    (folder / "includes" / "note.md").write_text("Ask the service desk for a new token.\n")
    edited = {r.source: r.status for r in service.sync_directory(folder)}
    assert edited == first | {"kb/guide.md": "replaced", "kb/vpn.md": "replaced"}
    assert graph.runs == 2
