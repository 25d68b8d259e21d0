"""The Chroma adapter on a real embedded Chroma: versions switch atomically, crashes are recoverable."""

import pytest

from app.adapters.vector_index import ChromaVectorIndex, make_client
from core.records import ChunkRecord, DocumentInfo


def _doc(version, texts, doc_id="doc1"):
    info = DocumentInfo(
        doc_id=doc_id,
        version=version,
        title="Guide",
        source="kb/guide.md",
        content_type="markdown",
        chunk_count=len(texts),
        size_bytes=10,
        indexed_at="2026-01-01T00:00:00+00:00",
    )
    chunks = [
        ChunkRecord(
            chunk_id=f"{doc_id}-{version}-{i}",
            doc_id=doc_id,
            version=version,
            title="Guide",
            source="kb/guide.md",
            section="",
            os="",
            chunk_index=i,
            content_hash=str(i),
            text=t,
            embed_text=t,
        )
        for i, t in enumerate(texts)
    ]
    vectors = [[1.0, float(i), 0.0] for i in range(len(texts))]
    return info, chunks, vectors


@pytest.fixture
def index(tmp_path):
    return ChromaVectorIndex(make_client("persistent", path=str(tmp_path / "chroma")), "test_chunks")


def _texts(index):
    return sorted(h["text"] for h in index.query([1.0, 0.0, 0.0], k=10))


def test_replace_switches_every_reader_to_the_new_version(index):
    index.replace_document(*_doc("v1", ["old a", "old b"]))
    index.replace_document(*_doc("v2", ["new a"]))
    assert _texts(index) == ["new a"]
    assert index.count() == 1
    assert index.get_document("doc1")["version"] == "v2"


def test_readers_see_the_old_version_until_the_switch(index, monkeypatch):
    index.replace_document(*_doc("v1", ["old a"]))
    seen = {}
    real_upsert = index._manifest.upsert

    def observe_then_switch(**kwargs):
        seen["before_switch"] = _texts(index)  # new chunks are written, the manifest not yet
        return real_upsert(**kwargs)

    monkeypatch.setattr(index._manifest, "upsert", observe_then_switch)
    index.replace_document(*_doc("v2", ["new a"]))
    assert seen["before_switch"] == ["old a"]
    assert _texts(index) == ["new a"]


def test_a_crash_before_the_switch_keeps_the_old_version_and_reconcile_cleans_up(index, monkeypatch):
    index.replace_document(*_doc("v1", ["old a"]))

    def crash(**kwargs):
        raise RuntimeError("power cut")

    monkeypatch.setattr(index._manifest, "upsert", crash)
    with pytest.raises(RuntimeError):
        index.replace_document(*_doc("v2", ["new a", "new b"]))
    monkeypatch.undo()
    assert _texts(index) == ["old a"]  # readers never noticed
    assert index.reconcile() == 2  # the orphaned new chunks
    index.replace_document(*_doc("v2", ["new a", "new b"]))  # re-running completes the job
    assert _texts(index) == ["new a", "new b"]


def test_delete_removes_document_and_chunks(index):
    index.replace_document(*_doc("v1", ["a"]))
    index.replace_document(*_doc("v1", ["b"], doc_id="doc2"))
    assert index.delete_document("doc1") is True
    assert index.delete_document("doc1") is False
    assert _texts(index) == ["b"]
    assert [d["doc_id"] for d in index.list_documents()] == ["doc2"]


def test_the_index_survives_reopening(tmp_path):
    first = ChromaVectorIndex(make_client("persistent", path=str(tmp_path / "c")), "test_chunks")
    first.replace_document(*_doc("v1", ["kept"]))
    reopened = ChromaVectorIndex(make_client("persistent", path=str(tmp_path / "c")), "test_chunks")
    assert _texts(reopened) == ["kept"]


def test_a_batch_switches_each_document_and_sweeps_only_its_own_older_versions(index):
    index.replace_document(*_doc("v1", ["first old"], doc_id="doc1"))
    index.replace_document(*_doc("v1", ["second old"], doc_id="doc2"))
    # doc3 arrives with doc1's old version id (the same bytes have the same content hash): its chunks must not
    # keep doc1's old chunks alive, and sweeping doc1 must not touch doc3
    index.replace_documents(
        [
            _doc("v2", ["first new"], doc_id="doc1"),
            _doc("v1", ["third"], doc_id="doc3"),
            _doc("v1", ["second old"], doc_id="doc2"),
        ]
    )
    assert _texts(index) == ["first new", "second old", "third"]
    assert index.count() == 3
    assert {d["doc_id"]: d["version"] for d in index.list_documents()} == {"doc1": "v2", "doc2": "v1", "doc3": "v1"}


def test_a_batch_with_a_mismatched_document_writes_nothing(index):
    info, chunks, _ = _doc("v1", ["a", "b"], doc_id="doc2")
    with pytest.raises(ValueError, match="doc2"):
        index.replace_documents([_doc("v1", ["fine"]), (info, chunks, [[1.0, 0.0, 0.0]])])
    assert index.count() == 0 and index.list_documents() == []


def test_similarities_read_each_chunks_stored_vector_once_while_it_stays_recently_used(index, monkeypatch):
    index.replace_document(*_doc("v1", ["a", "b", "c"]))
    ids = ["doc1-v1-0", "doc1-v1-1", "doc1-v1-2"]
    first = index.similarities([0.0, 1.0, 0.0], ids[:2])
    assert first == {"doc1-v1-0": 0.0, "doc1-v1-1": 0.7071}
    asked = []
    real_get = index._chunks.get
    monkeypatch.setattr(index._chunks, "get", lambda **kw: asked.append(kw["ids"]) or real_get(**kw))
    again = index.similarities([0.0, 1.0, 0.0], [*ids, "gone"])
    assert asked == [["doc1-v1-2", "gone"]]  # only the vectors not read before; an unknown chunk is left out
    assert again == {**first, "doc1-v1-2": 0.8944}


def test_chunks_embedded_again_are_compared_by_their_new_vectors(index):
    index.replace_document(*_doc("v1", ["a", "b"]))
    assert index.similarities([1.0, 0.0, 0.0], ["doc1-v1-1"]) == {"doc1-v1-1": 0.7071}
    index.reembed(lambda texts: [[0.0, 1.0, 0.0] for _ in texts])
    assert index.similarities([1.0, 0.0, 0.0], ["doc1-v1-1"]) == {"doc1-v1-1": 0.0}


def test_kept_vectors_are_bounded_and_a_read_from_before_a_clear_is_not_kept():
    from app.adapters.vector_index import StoredVectors

    kept = StoredVectors(size=2)
    _, generation = kept.get([])
    kept.put({"a": [1.0], "b": [2.0]}, generation)
    kept.get(["a"])  # "a" used last: "b" goes first
    kept.put({"c": [3.0]}, generation)
    assert kept.get(["a", "b", "c"])[0] == {"a": [1.0], "c": [3.0]}
    kept.clear()
    kept.put({"d": [4.0]}, generation)  # read before the clear
    assert kept.get(["a", "c", "d"])[0] == {}
