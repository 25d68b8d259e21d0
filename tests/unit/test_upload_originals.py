"""A failed upload's stored file is dropped, unless the same bytes were uploaded again and a queued job needs them."""

from types import SimpleNamespace

from app.job_worker import forget_unused_original


class Originals:
    def __init__(self) -> None:
        self.dropped: list[tuple[str, str]] = []

    def drop(self, doc_id: str, version: str) -> None:
        self.dropped.append((doc_id, version))


def resources_with(queued_versions: list[str]) -> SimpleNamespace:
    index = SimpleNamespace(get_document=lambda doc_id: None)  # the failed upload never reached the index
    indexer = SimpleNamespace(index=index)
    jobs = SimpleNamespace(
        uploads_of=lambda doc_id: [{"payload": {"doc_id": doc_id, "version": v}} for v in queued_versions]
    )
    return SimpleNamespace(indexer=indexer, indexer_for=lambda name: indexer, jobs=jobs, originals=Originals())


def test_a_failed_uploads_file_is_dropped_when_nothing_else_needs_it():
    resources = resources_with(queued_versions=["other-version"])
    forget_unused_original(resources, {"doc_id": "d1", "version": "v1"})
    assert resources.originals.dropped == [("d1", "v1")]


def test_the_same_bytes_uploaded_again_keep_their_file_for_the_queued_job():
    resources = resources_with(queued_versions=["v1"])
    forget_unused_original(resources, {"doc_id": "d1", "version": "v1"})
    assert resources.originals.dropped == []
