"""The sources table in the relational store, on SQLite (embedded) and Postgres (server mode): replicas share
sources and their sync state, one sync at a time; an embedded data dir's sources.sqlite is copied in once."""

from __future__ import annotations

import sqlite3
import threading

from app.adapters.source_store import SourceStore
from app.resources import LEGACY_SOURCES_IMPORTED, _import_legacy_sources
from app.storage import Database

SOURCE = {
    "id": "0123456789ab",
    "type": "confluence",
    "name": "IT space",
    "base_url": "https://wiki.example/wiki",
    "scope": {"space_keys": ["IT"]},
    "credential_env": {"user": "CONF_USER", "token": "CONF_TOKEN"},
    "group_map": {"it-staff": "staff"},
    "schedule": "every 30m",
}


def test_a_source_added_on_one_replica_is_synced_once_and_its_documents_seen_on_the_other(database_url):
    a_db, b_db = Database.open(database_url), Database.open(database_url)
    a, b = SourceStore(a_db), SourceStore(b_db)
    try:
        assert a.add(SOURCE) and not b.add(SOURCE)  # the same source twice: one row
        assert [s["id"] for s in b.list()] == [SOURCE["id"]]
        assert b.get(SOURCE["id"])["scope"] == {"space_keys": ["IT"]} and b.get(SOURCE["id"])["status"] == "never"

        wins = []
        barrier = threading.Barrier(4)

        def claim(store):
            barrier.wait()
            wins.append(store.claim(SOURCE["id"]))

        threads = [threading.Thread(target=claim, args=(store,)) for store in (a, b, a, b)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
        assert sorted(wins) == [False, False, False, True]  # one sync at a time, whichever replica asks

        a.update(
            SOURCE["id"],
            status="ok",
            cursor="2026-11-26T01:00:00Z",
            last_sync_at="2026-11-26T01:00:05+00:00",
            last_counts={"added": 2},
        )
        a.put_document(
            SOURCE["id"],
            "1001",
            doc_id="d1",
            url="https://wiki.example/wiki/pages/1001",
            version="3",
            audience=[],
            title="VPN",
        )
        a.put_document(
            SOURCE["id"],
            "1002",
            doc_id="d2",
            url="https://wiki.example/wiki/pages/1002",
            version="1",
            audience=["staff"],
            title="Payroll",
        )
        a.put_document(
            SOURCE["id"],
            "1001",
            doc_id="d1",
            url="https://wiki.example/wiki/pages/1001",
            version="4",
            audience=[],
            title="VPN (edited)",
        )
        seen = b.documents(SOURCE["id"])
        assert {k: (v["version"], v["audience"], v["title"]) for k, v in seen.items()} == {
            "1001": ("4", [], "VPN (edited)"),
            "1002": ("1", ["staff"], "Payroll"),
        }
        assert b.get(SOURCE["id"])["last_counts"] == {"added": 2} and b.document_count(SOURCE["id"]) == 2

        # a scheduler that read the row before this sync must not start the same due sync again
        assert not b.claim(SOURCE["id"], last_sync_at=None)
        assert b.claim(SOURCE["id"], last_sync_at="2026-11-26T01:00:05+00:00")
        b.update(SOURCE["id"], status="ok")

        b.drop_document(SOURCE["id"], "1002")
        assert set(a.documents(SOURCE["id"])) == {"1001"}
        a.remove(SOURCE["id"])
        assert b.get(SOURCE["id"]) is None and b.documents(SOURCE["id"]) == {} and b.list() == []
    finally:
        a_db.close()
        b_db.close()


def _legacy_sources_file(data_dir) -> None:
    """sources.sqlite as the release before the relational store wrote it."""
    schema = """
    CREATE TABLE sources (id TEXT PRIMARY KEY, type TEXT NOT NULL, name TEXT NOT NULL, base_url TEXT NOT NULL,
        scope TEXT NOT NULL, credential_env TEXT NOT NULL, group_map TEXT NOT NULL, schedule TEXT NOT NULL,
        status TEXT NOT NULL, cursor TEXT, last_sync_at TEXT, last_error TEXT, last_counts TEXT NOT NULL,
        created_at TEXT NOT NULL);
    CREATE TABLE source_documents (source_id TEXT NOT NULL REFERENCES sources (id) ON DELETE CASCADE,
        external_id TEXT NOT NULL, doc_id TEXT NOT NULL, url TEXT NOT NULL, version TEXT NOT NULL,
        audience TEXT NOT NULL, title TEXT NOT NULL, PRIMARY KEY (source_id, external_id));
    """
    data_dir.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(data_dir / "sources.sqlite") as conn:
        conn.executescript(schema)
        conn.execute(
            "INSERT INTO sources VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                SOURCE["id"],
                "confluence",
                "IT space",
                SOURCE["base_url"],
                '{"space_keys": ["IT"]}',
                '{"token": "CONF_TOKEN", "user": "CONF_USER"}',
                '{"it-staff": "staff"}',
                "every 30m",
                "ok",
                "2026-11-25T10:00:00Z",
                "2026-11-25T10:00:04+00:00",
                None,
                '{"added": 1}',
                "2026-11-25T09:00:00+00:00",
            ),
        )
        conn.execute(
            "INSERT INTO source_documents VALUES (?, ?, ?, ?, ?, ?, ?)",
            (SOURCE["id"], "1001", "d1", "https://wiki.example/wiki/pages/1001", "3", "[]", "VPN"),
        )


def test_an_embedded_data_dir_keeps_its_synced_sources_and_a_deleted_one_does_not_come_back(tmp_path, make_settings):
    settings = make_settings(data_dir=tmp_path / "data")
    _legacy_sources_file(settings.storage.data_dir)
    db = Database.open(f"sqlite:///{settings.storage.data_dir / 'deskmate.sqlite'}")
    store = SourceStore(db)
    try:
        _import_legacy_sources(settings, db)  # the first start after the upgrade
        source = store.get(SOURCE["id"])
        assert source["cursor"] == "2026-11-25T10:00:00Z" and source["schedule"] == "every 30m"
        assert source["credential_env"] == {"token": "CONF_TOKEN", "user": "CONF_USER"}
        assert store.documents(SOURCE["id"])["1001"]["url"] == "https://wiki.example/wiki/pages/1001"
        assert (settings.storage.data_dir / LEGACY_SOURCES_IMPORTED).is_file()

        store.remove(SOURCE["id"])
        _import_legacy_sources(settings, db)  # every later start
        assert store.list() == []
    finally:
        db.close()
