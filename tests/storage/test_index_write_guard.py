"""Two processes on one Chroma and one Postgres (two connection pools here): a replica starting up sweeps
leftover chunks only when no other process is between writing a new version's chunks and switching to it, so
it never deletes another process's in-flight version."""

from __future__ import annotations

import threading

from app.adapters.vector_index import ChromaVectorIndex, make_client
from app.resources import index_write_guard
from app.settings import Settings
from app.storage import Database
from tests.unit.test_chroma_index import _doc, _texts


def test_a_starting_replica_waits_for_another_process_mid_write_and_keeps_its_new_version(postgres_url, tmp_path):
    settings = Settings(_env_file=None, data_dir=tmp_path / "data")
    writer_db, starter_db = Database.open(postgres_url), Database(postgres_url)
    client = make_client("persistent", path=str(tmp_path / "chroma"))
    try:
        writer = ChromaVectorIndex(client, "shared", write_guard=index_write_guard(writer_db, "shared", settings))
        starter = ChromaVectorIndex(client, "shared", write_guard=index_write_guard(starter_db, "shared", settings))
        writer.replace_document(*_doc("v1", ["old a"]))
        in_flight = threading.Event()
        switch = threading.Event()
        real_upsert = writer._manifest.upsert

        def hold_before_switch(**kwargs):
            in_flight.set()  # v2's chunks are written, the manifest still says v1
            switch.wait(timeout=60)
            return real_upsert(**kwargs)

        writer._manifest.upsert = hold_before_switch
        writing = threading.Thread(target=writer.replace_document, args=_doc("v2", ["new a", "new b"]))
        writing.start()
        assert in_flight.wait(timeout=60)
        swept: list[int] = []
        sweeping = threading.Thread(target=lambda: swept.append(starter.reconcile()))
        sweeping.start()
        sweeping.join(timeout=1.0)
        assert sweeping.is_alive() and swept == []  # the sweep waits for the writer's switch
        switch.set()
        writing.join(timeout=60)
        sweeping.join(timeout=60)
        assert swept == [0]  # v2 is active by the time the sweep looks, and v1's chunks went with the switch
        assert _texts(starter) == ["new a", "new b"]
    finally:
        writer_db.close()
        starter_db.close()
