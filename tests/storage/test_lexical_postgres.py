"""The lexical index in Postgres: the in-process index's rankings and scores, shared by replicas without a
rebuild, and never a replaced document's old version."""

from __future__ import annotations

import threading

import pytest
from sqlalchemy import event, text

from app.adapters import lexical_index, lexical_postgres
from app.adapters.lexical_index import BULK_READ_DOCS, BM25Index, HybridIndex
from app.adapters.lexical_postgres import PostgresBM25Index, UnsupportedFilter
from app.adapters.vector_index import ChromaVectorIndex, make_client
from app.settings import Settings
from app.storage import Database
from app.storage.database import DatabaseUnavailable
from core.filters import access_where, combine_where, fallback_where, parse_filter, primary_where
from tests.unit.test_lexical_index import chunk, info

# a small help-desk corpus with contexts, audiences, sections and repeated words (df > 1, varied lengths)
CORPUS = {
    "vpn": [
        chunk(
            "vpn",
            0,
            "Open the Cisco client and connect to vpn.example.test",
            title="VPN",
            section="Connect",
            context_type=["how-to"],
            content_domain=["network"],
            document_category=["guide"],
        ),
        chunk(
            "vpn",
            1,
            "If the connection drops, restart the client and connect again",
            title="VPN",
            section="Connect",
            context_type=["how-to"],
            content_domain=["network"],
            document_category=["guide"],
        ),
        chunk(
            "vpn",
            2,
            "Certificates expire yearly; the client warns a week before",
            title="VPN",
            section="Certificates",
            context_type=["how-to"],
            content_domain=["network"],
            document_category=["guide"],
        ),
    ],
    "wifi": [
        chunk(
            "wifi",
            0,
            "Join the office wireless network with your laptop; the Wi-Fi password rotates",
            title="Wi-Fi",
            context_type=["how-to"],
            content_domain=["network"],
            document_category=["faq"],
        )
    ],
    "password": [
        chunk(
            "password",
            0,
            "Reset your password from the portal; a password must have 12 characters",
            title="Passwords",
            context_type=["policy"],
            content_domain=["security"],
            document_category=["policy"],
            relevance_tags=["account"],
        )
    ],
    "payroll": [
        chunk(
            "payroll",
            0,
            "Payroll questions and the salary portal password for HR staff",
            title="Payroll",
            audience=["hr"],
            restricted=True,
            context_type=["policy"],
            content_domain=["hr"],
            document_category=["policy"],
        ),
        chunk(
            "payroll",
            1,
            "The payroll network share is mapped on login",
            title="Payroll",
            audience=["hr"],
            restricted=True,
            context_type=["policy"],
            content_domain=["hr"],
            document_category=["policy"],
        ),
    ],
    "printer": [
        chunk("printer", 0, "Add the printer from Settings, then print a test page", title="Printers", section="Setup"),
        chunk(
            "printer", 1, "A printer that jams: open the tray and remove the paper", title="Printers", section="Setup"
        ),
    ],
}
QUERIES = [
    "how do I connect to the vpn",
    "password reset portal",
    "network",
    "printer settings jam",
    "wifi password",
    "payroll salary",
    "client certificates expire",
    "capital of France",
    "connecting printers to the wireless network password",
    "wi fi password",  # written apart, hyphenated in the page: the joined form is searched on both backends
    "pasword reset portal",  # a typing slip, read as the word the documents hold on both backends
    "printer setings jamm",
]
WHERES = [
    None,
    access_where(frozenset()),
    access_where(frozenset({"hr"})),
    combine_where(access_where(frozenset()), primary_where(parse_filter({"context_type": ["how-to"]}))),
    combine_where(
        access_where(frozenset({"hr"})),
        primary_where(parse_filter({"context_type": "policy", "content_domain": ["hr", "security"]})),
    ),
    fallback_where(parse_filter({"document_category": ["faq"], "relevance_tags": ["account"]})),
]


def fill(index, corpus=CORPUS) -> None:
    for doc_id, chunks in corpus.items():
        index.replace_document(doc_id, "v1", chunks)


def ranked(hits) -> list[tuple[str, float]]:
    """(chunk id, score) best first; chunks with equal scores (either index may order a tie either way) by id."""
    return sorted(((h["chunk_id"], h["lexical_score"]) for h in hits), key=lambda hit: (-round(hit[1], 3), hit[0]))


def assert_same_results(memory: BM25Index, shared: PostgresBM25Index) -> None:
    for query in QUERIES:
        for where in WHERES:
            expected, found = ranked(memory.search(query, 10, where)), ranked(shared.search(query, 10, where))
            assert [c for c, _ in found] == [c for c, _ in expected], (query, where)
            assert [s for _, s in found] == pytest.approx([s for _, s in expected], abs=2e-4), (query, where)
        ids = ["vpn-v1-0", "wifi-v1-0", "printer-v1-1", "payroll-v1-0", "missing"]
        assert shared.lexical_scores(query, ids) == pytest.approx(memory.lexical_scores(query, ids), abs=2e-4)
        for where in WHERES:  # a search with the scores of given chunks, in one statement: the two calls' results
            for k, wanted in ((10, ids), (2, ids), (10, ["printer-v1-1"]), (10, []), (0, ids)):
                hits, scores = shared.search_scored(query, k, where, chunk_ids=wanted)
                assert hits == shared.search(query, k, where) and scores == shared.lexical_scores(query, wanted)
                if k != 2:  # a tie at the cut may keep either chunk, in either index
                    assert ranked(hits) == ranked(memory.search(query, k, where)), (query, where, k)
                assert scores == pytest.approx(memory.lexical_scores(query, wanted), abs=2e-4)
        assert shared.read_slips(query) == memory.read_slips(query), query
        docs = ["vpn", "password", "printer", "nothing"]
        expected_coverage, coverage = memory.query_coverage(query, docs), shared.query_coverage(query, docs)
        assert coverage == expected_coverage, query
        terms = {*memory._tokenize(query), "zzqx" * 60, "nosuchterm"}  # a word too long for an index entry is hashed
        assert shared.held_terms(terms) == memory.held_terms(terms), query
        assert shared.term_documents(terms) == memory.term_documents(terms), query
    for doc_id in (*CORPUS, "nothing"):
        for groups in (None, frozenset(), frozenset({"finance"})):
            assert shared.document_chunks(doc_id, groups) == memory.document_chunks(doc_id, groups)
    for chunk_id, radius in (("vpn-v1-0", 1), ("vpn-v1-1", 2), ("printer-v1-0", 1), ("nope", 1), ("vpn-v1-0", 0)):
        assert shared.neighbours(chunk_id, radius) == memory.neighbours(chunk_id, radius)
    assert shared.versions() == memory.versions() and shared.count() == memory.count()


@pytest.fixture
def database(postgres_url):
    db = Database.open(postgres_url)
    yield db
    db.close()


def test_postgres_bm25_returns_the_in_process_rankings_and_scores_with_filters_and_audiences(database):
    memory, shared = BM25Index(), PostgresBM25Index(database, "kb")
    fill(memory)
    fill(shared)
    assert_same_results(memory, shared)
    assert shared.read_slips("printer setings jamm") == "printer settings jamm"  # a short word stays as written
    # which documents hold a term: "connect" is in the VPN page only, "password" in more than one (and after the
    # writes below, "connect" in none: the replaced page no longer says it)
    held = shared.term_documents(["connect", "password", "nosuchterm"])
    assert held.documents == len(CORPUS) and held.holding["connect"] == frozenset({"vpn"})
    assert len(held.holding["password"]) > 1 and "nosuchterm" not in held.holding
    # the corpus statistics are kept in step by writes: a replaced and a deleted document change N, avgdl, df
    for index in (memory, shared):
        index.replace_document(
            "vpn",
            "v2",
            [
                chunk(
                    "vpn",
                    0,
                    "Use the GlobalProtect portal; the VPN client is gone",
                    version="v2",
                    title="VPN",
                    context_type=["how-to"],
                )
            ],
        )
        index.delete_document("wifi")
        index.replace_document("printer", "v1", CORPUS["printer"])  # the same version again changes nothing
    assert_same_results(memory, shared)
    assert "connect" not in shared.term_documents(["connect"]).holding
    with database.connect() as conn:
        df_mismatch = conn.execute(
            text(
                "SELECT count(*) FROM lexical_terms t FULL JOIN (SELECT term, count(*) AS df FROM lexical_postings "
                "GROUP BY term) p ON p.term = t.term WHERE t.df IS DISTINCT FROM p.df"
            )
        ).scalar()
    assert df_mismatch == 0


def test_collections_keep_separate_statistics(database):
    main, other = PostgresBM25Index(database, "kb"), PostgresBM25Index(database, "hr")
    fill(main)
    other.replace_document("leave", "v1", [chunk("leave", 0, "Request parental leave from the HR portal")])
    assert [h["doc_id"] for h in other.search("portal password", 5)] == ["leave"]
    alone = BM25Index()
    alone.replace_document("leave", "v1", [chunk("leave", 0, "Request parental leave from the HR portal")])
    assert ranked(other.search("leave portal", 5)) == ranked(alone.search("leave portal", 5))
    assert "leave" not in main.versions() and main.count() == 9


def test_a_write_on_one_replica_is_searched_on_another_without_a_rebuild(postgres_url):
    first, second = Database.open(postgres_url), Database.open(postgres_url)  # two processes' engines
    try:
        here, there = PostgresBM25Index(first, "kb"), PostgresBM25Index(second, "kb")
        assert there.search("cisco client", 5) == []
        here.replace_document("vpn", "v1", CORPUS["vpn"])
        assert there.search("cisco client", 5)[0]["chunk_id"] == "vpn-v1-0"
        here.replace_document("vpn", "v2", [chunk("vpn", 0, "Use the GlobalProtect portal", version="v2")])
        assert there.search("cisco client", 5) == []
        assert [h["chunk_id"] for h in there.search("globalprotect", 5)] == ["vpn-v2-0"]
        assert there.versions() == {"vpn": "v2"}
        assert here.delete_document("vpn") and not there.delete_document("vpn")
        assert there.search("globalprotect", 5) == [] and there.count() == 0
    finally:
        first.close()
        second.close()


def test_a_replaced_documents_old_version_never_shows_while_writers_race(postgres_url):
    """Two replicas rewrite one document in turn while a third searches: every search sees one whole
    version, and once the last write is done the older versions are gone."""
    dbs = [Database.open(postgres_url) for _ in range(3)]
    try:
        writers = [PostgresBM25Index(db, "kb") for db in dbs[:2]]
        reader = PostgresBM25Index(dbs[2], "kb")
        writers[0].replace_document("doc", "v0", [chunk("doc", i, f"alpha bravo {i}", version="v0") for i in range(3)])
        mixed, partial, errors = [], [], []
        done = threading.Event()

        def read() -> None:
            while not done.is_set():
                hits = reader.search("alpha", 10)
                versions = {h["chunk_id"].split("-")[1] for h in hits}
                if len(versions) != 1:
                    mixed.append(versions)
                if len(hits) != 3:
                    partial.append(len(hits))

        def write(index: PostgresBM25Index, versions: range) -> None:
            try:
                for n in versions:
                    index.replace_document(
                        "doc", f"v{n}", [chunk("doc", i, f"alpha bravo {i}", version=f"v{n}") for i in range(3)]
                    )
            except Exception as exc:  # noqa: BLE001 - asserted below
                errors.append(exc)

        threads = [
            threading.Thread(target=read),
            threading.Thread(target=write, args=(writers[0], range(1, 30, 2))),
            threading.Thread(target=write, args=(writers[1], range(2, 30, 2))),
        ]
        for thread in threads[1:]:
            thread.start()
        threads[0].start()
        for thread in threads[1:]:
            thread.join(120)
        done.set()
        threads[0].join(30)
        assert errors == [] and mixed == [] and partial == []
        final = reader.versions()["doc"]
        assert {h["chunk_id"].split("-")[1] for h in reader.search("alpha", 10)} == {final}
        assert reader.count() == 3
    finally:
        for db in dbs:
            db.close()


def _hybrid(path, database: Database) -> HybridIndex:
    index = HybridIndex(
        ChromaVectorIndex(make_client("persistent", path=str(path)), "lexical_pg_test"),
        PostgresBM25Index(database, "lexical_pg_test"),
    )
    index.reconcile()
    return index


def _write(index: HybridIndex, doc_id: str, texts: list[str], version: str = "v1") -> None:
    chunks = [chunk(doc_id, i, t, version=version) for i, t in enumerate(texts)]
    index.replace_document(
        info(doc_id, version, len(chunks)), chunks, [[1.0, float(i), 0.5] for i in range(len(chunks))]
    )


def test_replicas_over_one_chroma_and_one_postgres_share_the_index_and_a_restart_reads_nothing_again(
    tmp_path, postgres_url
):
    first, second = Database.open(postgres_url), Database.open(postgres_url)
    try:
        here, there = _hybrid(tmp_path, first), _hybrid(tmp_path, second)
        _write(there, "wifi", ["Join the office wireless network"])
        _write(there, "vpn", ["Cisco client"])
        here.vector._forget_manifest_cache()  # what the manifest TTL does within 2 s
        assert here.search("wireless network", 5)[0]["doc_id"] == "wifi"
        _write(there, "vpn", ["GlobalProtect portal"], version="v2")
        assert there.delete_document("wifi")
        here.vector._forget_manifest_cache()
        assert here.search("wireless", 5) == []
        assert [h["chunk_id"] for h in here.search("globalprotect cisco", 5)] == ["vpn-v2-0"]

        restarted = _hybrid(tmp_path, first)  # a new process: nothing to re-read, the index is already in step
        assert restarted.sync_lexical() == 0
        assert [h["chunk_id"] for h in restarted.search("globalprotect", 5)] == ["vpn-v2-0"]
    finally:
        first.close()
        second.close()


def test_the_first_server_mode_start_fills_the_shared_index_from_an_embedded_chroma(tmp_path, postgres_url):
    embedded = HybridIndex(ChromaVectorIndex(make_client("persistent", path=str(tmp_path)), "lexical_pg_test"))
    for n in range(BULK_READ_DOCS + 5):  # enough documents for the one-pass read of Chroma
        _write(embedded, f"doc{n}", [f"article {n} about topic{n}", f"more on topic{n}"])
    database = Database.open(postgres_url)
    try:
        shared = _hybrid(tmp_path, database)
        assert shared.lexical.count() == embedded.lexical.count() == 2 * (BULK_READ_DOCS + 5)
        assert ranked(shared.search("topic7 topic42", 5)) == ranked(embedded.search("topic7 topic42", 5))
        assert len(shared.search("topic7 topic42", 5)) == 4
        assert shared.sync_lexical() == 0
        with database.connect() as conn:  # the filled tables' statistics were refreshed: plans for their size
            analyzed = dict(
                conn.execute(
                    text("SELECT relname, analyze_count FROM pg_stat_user_tables WHERE relname LIKE 'lexical_%'")
                ).all()
            )
        assert all(analyzed[t] >= 1 for t in ("lexical_chunks", "lexical_postings", "lexical_terms")), analyzed
    finally:
        database.close()


def test_a_writer_that_died_between_chroma_and_postgres_is_caught_up_at_the_next_start(tmp_path, postgres_url):
    database = Database.open(postgres_url)
    try:
        index = _hybrid(tmp_path, database)
        _write(index, "vpn", ["Cisco client"])
        chunks = [chunk("vpn", 0, "GlobalProtect portal", version="v2")]
        index.vector.replace_document(info("vpn", "v2"), chunks, [[1.0, 0.0, 0.5]])  # Chroma only: then a crash
        index.vector._forget_manifest_cache()
        assert index.search("globalprotect", 5) == []  # the shared index lags; no older text is shown either
        assert index.search("cisco", 5) == []  # v1 is no longer active in Chroma
        restarted = _hybrid(tmp_path, database)
        assert [h["chunk_id"] for h in restarted.search("globalprotect", 5)] == ["vpn-v2-0"]
    finally:
        database.close()


def test_a_running_replica_catches_up_a_lag_that_outlasts_the_grace_period(tmp_path, postgres_url, monkeypatch):
    database = Database.open(postgres_url)
    try:
        index = _hybrid(tmp_path, database)
        _write(index, "vpn", ["Cisco client"])
        index.vector.replace_document(
            info("vpn", "v2"), [chunk("vpn", 0, "GlobalProtect portal", version="v2")], [[1.0, 0.0, 0.5]]
        )  # Chroma only: the writer died before Postgres
        index.vector._forget_manifest_cache()
        assert index.search("globalprotect", 5) == []  # first seen: within the grace, the writer may still come
        monkeypatch.setattr(lexical_index, "LAG_GRACE_S", 0.0)  # … and now it has outlasted it
        index.vector._forget_manifest_cache()
        assert [h["chunk_id"] for h in index.search("globalprotect", 5)] == ["vpn-v2-0"]
        assert index.lexical.versions() == {"vpn": "v2"}
    finally:
        database.close()


def test_a_retrievals_lexical_reads_share_one_connection_and_a_dropped_one_is_a_clear_outage(database):
    index = PostgresBM25Index(database, "kb")
    fill(index)
    checkouts = []
    event.listen(database.engine, "checkout", lambda *_: checkouts.append(1))
    with index.reading():
        with index.reading():  # a nested block (another node's reads) shares it too
            hits, _ = index.search_scored(
                "connect the vpn client", 10, access_where(frozenset()), chunk_ids=["printer-v1-0"]
            )
        index.neighbours(hits[0]["chunk_id"], 1)
        index.query_coverage("connect the vpn client", ["vpn"])
        index.document_chunks("vpn", frozenset())
    assert len(checkouts) == 1
    index.search("vpn", 5)
    index.neighbours("vpn-v1-0", 1)
    assert len(checkouts) == 3  # outside a block, each read checks one out (and gives it back)

    # the server drops the held connection (a restart, an idle timeout): the read fails fast and says so …
    with pytest.raises(DatabaseUnavailable, match="went away"):
        with index.reading():
            pid = index._held.conn.execute(text("SELECT pg_backend_pid()")).scalar()
            with database.connect() as admin:
                assert admin.execute(text("SELECT pg_terminate_backend(:pid)"), {"pid": pid}).scalar()
            index.search("vpn", 5)
    # … and the next retrieval is served on a live connection, without a restart
    with index.reading():
        assert index.search("vpn", 5)[0]["doc_id"] == "vpn"


def test_the_scores_of_dense_hits_are_index_lookups_even_before_the_planner_has_statistics(database):
    """Right after a fill, before any ANALYZE, a join on the chunk's row was planned as a walk over every posting
    of the collection per chunk; each (chunk, term) posting is looked up by its whole primary key instead."""
    index = PostgresBM25Index(database, "kb")
    fill(index)
    params = index._params(
        index._query_terms("connecting printers to the wireless network"), {"ids": ["vpn-v1-0", "printer-v1-1"]}
    )
    with database.connect() as conn:
        lines = [r[0] for r in conn.execute(text("EXPLAIN " + lexical_postgres._LEXICAL_SCORES.text), params)]
    plan = "\n".join(lines)
    scans = [(line, lines[i + 1]) for i, line in enumerate(lines) if "on lexical_postings" in line]
    assert scans, plan
    for scan, condition in scans:  # keyed on the chunk's row (and the term, for the primary key's order)
        assert "Index Cond" in condition and "row_id = " in condition, plan
        assert "lexical_postings_pkey" not in scan or "term = " in condition, plan


def test_filters_outside_the_search_language_are_refused_not_ignored(database):
    index = PostgresBM25Index(database, "kb")
    fill(index)
    with pytest.raises(UnsupportedFilter, match="title"):
        index.search("vpn", 5, where={"title": {"$gt": "A"}})


def test_a_word_longer_than_an_index_entry_is_still_found_by_itself(database):
    blob = "x" * 5000
    memory, shared = BM25Index(), PostgresBM25Index(database, "kb")
    for index in (memory, shared):
        index.replace_document("log", "v1", [chunk("log", 0, f"error token {blob} in the log")])
    assert ranked(shared.search(blob, 5)) == ranked(memory.search(blob, 5))
    assert shared.search(blob, 5)[0]["chunk_id"] == "log-v1-0"


def test_the_postgres_lexical_backend_is_chosen_and_refused_without_postgres():
    assert Settings(_env_file=None).retrieval.lexical_backend == "memory"
    assert (
        Settings(
            _env_file=None, database_url="postgresql://db/deskmate", lexical_backend="postgres"
        ).retrieval.lexical_backend
        == "postgres"
    )
    with pytest.raises(ValueError, match="DESKMATE_LEXICAL_BACKEND=postgres .* needs DESKMATE_DATABASE_URL"):
        Settings(_env_file=None, lexical_backend="postgres")


def test_a_staged_upload_switches_the_postgres_lexical_index_with_the_terms_counted_while_it_was_embedded(
    postgres_url, tmp_path
):
    from app.adapters.parsers import FileParser
    from graphs.indexing import IndexingContext, build_indexing_graph
    from nodes.indexing.steps import STAGE_MIN_CHUNKS
    from tests.fakes import HashingEmbedder

    database = Database.open(postgres_url)
    try:
        index = HybridIndex(
            ChromaVectorIndex(make_client("persistent", path=str(tmp_path / "chroma")), "staged_pg"),
            PostgresBM25Index(database, "staged_pg"),
        )
        manual = (
            "# Field manual\n"
            + "".join(
                f"\n## Procedure {n}\n\nReseat the copper connector {n} of cabinet {'zebrafish' if n == 270 else n}.\n"
                for n in range(STAGE_MIN_CHUNKS + 40)
            )
        ).encode()
        out = build_indexing_graph().invoke(
            {"source": "uploads/manual.md", "data": manual},
            context=IndexingContext(embedder=HashingEmbedder(), index=index, parser=FileParser(), chunk_max_tokens=64),
        )
        chunks = out["document_info"]["chunk_count"]
        assert chunks >= STAGE_MIN_CHUNKS and index.count() == chunks == index.lexical.count()
        assert index._staged == {}  # every prepared record was used by the switch
        hit = index.search("zebrafish cabinet", 1)[0]  # a chunk staged late, found after the switch
        assert hit["doc_id"] == out["doc_id"] and "connector 270 of cabinet zebrafish" in hit["text"]
    finally:
        database.close()
