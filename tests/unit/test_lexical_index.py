"""The BM25 index beside Chroma: ranking, versions, filters, neighbours, restart and other replicas."""

from __future__ import annotations

import threading

import pytest

from app.adapters.lexical_index import BM25Index, HybridIndex
from app.adapters.vector_index import ChromaVectorIndex, make_client
from core.records import ChunkRecord, DocumentInfo
from core.text import Tokenizer


def chunk(
    doc_id: str, index: int, text: str, *, version: str = "v1", title: str = "Doc", section: str = "", **context
) -> ChunkRecord:
    record = ChunkRecord(
        chunk_id=f"{doc_id}-{version}-{index}",
        doc_id=doc_id,
        version=version,
        title=title,
        source=f"kb/{doc_id}.md",
        section=section,
        os="",
        chunk_index=index,
        content_hash=f"h{index}{text[:8]}",
        text=text,
        embed_text=f"{title}\n{text}",
    )
    record.update(context)
    return record


def info(doc_id: str, version: str = "v1", n: int = 1) -> DocumentInfo:
    return DocumentInfo(
        doc_id=doc_id,
        version=version,
        title=doc_id,
        source=f"kb/{doc_id}.md",
        content_type="markdown",
        chunk_count=n,
        size_bytes=10,
        indexed_at="2025-01-01T00:00:00",
    )


@pytest.fixture
def bm25():
    index = BM25Index()
    index.replace_document(
        "vpn",
        "v1",
        [
            chunk("vpn", 0, "Open the Cisco client and connect to vpn.example.test", title="VPN"),
            chunk("vpn", 1, "If the connection drops, restart the client", title="VPN"),
        ],
    )
    index.replace_document("printer", "v1", [chunk("printer", 0, "Add the printer from Settings", title="Printers")])
    index.replace_document("wifi", "v1", [chunk("wifi", 0, "Join the office wireless network", title="Wi-Fi")])
    return index


def test_bm25_ranks_the_chunk_that_shares_the_rare_words_first(bm25):
    hits = bm25.search("how do I add a printer", k=5)
    assert hits[0]["doc_id"] == "printer"
    assert all(h["doc_id"] != "wifi" for h in hits)  # no shared word, no hit


def test_stemming_matches_other_forms_of_a_word(bm25):
    assert bm25.search("connecting", k=1)[0]["doc_id"] == "vpn"  # "connect" in the text
    assert bm25.search("printers", k=1)[0]["doc_id"] == "printer"


def test_lexical_score_is_a_share_of_the_best_possible_and_unknown_words_lower_it(bm25):
    full = bm25.search("printer settings", k=1)[0]["lexical_score"]
    half = bm25.search("printer zorbulator", k=1)[0]["lexical_score"]
    assert 0 < half < full <= 1
    assert bm25.search("capital of France", k=5) == []


def test_replacing_a_document_leaves_only_the_new_version(bm25):
    bm25.replace_document("vpn", "v2", [chunk("vpn", 0, "Use the new GlobalProtect portal", version="v2")])
    assert bm25.search("Cisco client", k=5) == []
    hits = bm25.search("GlobalProtect portal", k=5)
    assert [h["chunk_id"] for h in hits] == ["vpn-v2-0"]
    assert bm25.versions()["vpn"] == "v2" and bm25.count() == 3


def test_deleting_a_document_removes_its_chunks_and_frees_their_rows(bm25):
    assert bm25.delete_document("printer")
    assert bm25.search("printer", k=5) == []
    assert not bm25.delete_document("printer")
    bm25.replace_document("scanner", "v1", [chunk("scanner", 0, "Scan to e-mail from the printer panel")])
    assert bm25.search("printer", k=5)[0]["doc_id"] == "scanner"


def test_scores_for_given_chunks_match_the_search_scores(bm25):
    hit = bm25.search("restart the client", k=1)[0]
    assert bm25.lexical_scores("restart the client", [hit["chunk_id"], "missing"]) == {
        hit["chunk_id"]: hit["lexical_score"]
    }


@pytest.mark.parametrize(
    ("query", "where"),
    [
        ("restart the client", None),
        ("printer settings network", {"doc_id": "printer"}),
        ("capital of France", None),
        ("the a of", None),  # stop words only: no terms
    ],
)
def test_one_scored_search_gives_what_a_search_and_the_scores_of_given_chunks_give(bm25, query, where):
    given = ["vpn-v1-0", "vpn-v1-1", "printer-v1-0", "wifi-v1-0", "missing"]
    hits, shares = bm25.search_scored(query, 2, where=where, chunk_ids=given)
    assert hits == bm25.search(query, 2, where=where)
    assert shares == bm25.lexical_scores(query, given)
    assert bm25.search_scored(query, 0, chunk_ids=given) == ([], shares)


def test_where_filters_apply_to_the_lexical_side_as_to_chroma():
    index = BM25Index()
    index.replace_document("a", "v1", [chunk("a", 0, "reset your password", context_type=["how-to"])])
    index.replace_document("b", "v1", [chunk("b", 0, "password policy", context_type=["policy"])])
    index.replace_document("c", "v1", [chunk("c", 0, "password")])
    assert [h["doc_id"] for h in index.search("password", 5, where={"context_type": {"$contains": "policy"}})] == ["b"]
    where = {"$or": [{"context_type": {"$contains": "policy"}}, {"context_type": {"$contains": "how-to"}}]}
    assert sorted(h["doc_id"] for h in index.search("password", 5, where=where)) == ["a", "b"]
    assert index.search("password", 5, where={"context_type": {"$contains": "none"}}) == []


def test_neighbours_are_the_adjacent_chunks_of_the_same_section_in_order():
    index = BM25Index()
    index.replace_document(
        "d", "v1", [chunk("d", i, f"step {i}", section="Setup" if i < 4 else "Other") for i in range(6)]
    )
    assert [n["chunk_index"] for n in index.neighbours("d-v1-2", 1)] == [1, 3]
    assert [n["chunk_index"] for n in index.neighbours("d-v1-3", 1)] == [2]  # chunk 4 is another section
    assert index.neighbours("d-v1-2", 0) == [] and index.neighbours("nope", 1) == []


def _hybrid(path) -> HybridIndex:
    index = HybridIndex(ChromaVectorIndex(make_client("persistent", path=str(path)), "lexical_test"))
    index.reconcile()
    return index


def _write(index: HybridIndex, doc_id: str, texts: list[str], version: str = "v1") -> None:
    chunks = [chunk(doc_id, i, t, version=version) for i, t in enumerate(texts)]
    index.replace_document(
        info(doc_id, version, len(chunks)), chunks, [[1.0, float(i), 0.5] for i in range(len(chunks))]
    )


def test_the_lexical_index_is_rebuilt_from_chroma_after_a_restart_and_follows_deletes(tmp_path):
    first = _hybrid(tmp_path)
    _write(first, "vpn", ["Open the Cisco client", "Reconnect when it drops"])
    _write(first, "printer", ["Add the printer from Settings"])
    assert first.search("cisco", 5)[0]["doc_id"] == "vpn"
    assert first.delete_document("vpn")
    assert first.search("cisco", 5) == []

    restarted = _hybrid(tmp_path)  # a new process: BM25 starts empty and is rebuilt from Chroma
    assert restarted.lexical.count() == 1
    assert restarted.search("cisco", 5) == []
    assert restarted.search("printer settings", 5)[0]["doc_id"] == "printer"


def test_the_lexical_index_follows_a_document_written_by_another_replica(tmp_path):
    here, there = _hybrid(tmp_path), _hybrid(tmp_path)
    _write(there, "wifi", ["Join the office wireless network"])
    _write(there, "vpn", ["Cisco client"], version="v1")
    here.vector._forget_manifest_cache()  # what the manifest TTL does within 2 s
    assert here.search("wireless network", 5)[0]["doc_id"] == "wifi"
    _write(there, "vpn", ["GlobalProtect portal"], version="v2")
    there.delete_document("wifi")
    here.vector._forget_manifest_cache()
    assert here.search("wireless", 5) == []
    assert [h["chunk_id"] for h in here.search("globalprotect cisco", 5)] == ["vpn-v2-0"]


def test_readers_never_see_two_versions_of_a_document_while_it_is_rewritten(tmp_path):
    index = _hybrid(tmp_path)
    _write(index, "doc", ["alpha bravo", "alpha charlie"], version="v0")
    mixed: list[set[str]] = []
    done = threading.Event()

    def read() -> None:
        while not done.is_set():
            versions = {h["chunk_id"].split("-")[1] for h in index.search("alpha", 10)}
            if len(versions) > 1:
                mixed.append(versions)

    reader = threading.Thread(target=read)
    reader.start()
    for n in range(1, 15):
        _write(index, "doc", ["alpha bravo", "alpha charlie"], version=f"v{n}")
    done.set()
    reader.join()
    assert mixed == []


def _absence_and_calendar(index: BM25Index | None = None) -> BM25Index:
    index = index or BM25Index()
    index.replace_document(
        "absence",
        "v1",
        [chunk("absence", 0, "Out-of-office replies: choose the dates you are away and a short note.")],
    )
    index.replace_document(
        "calendar",
        "v1",
        [chunk("calendar", 0, "Holiday calendar: set the office holidays to show up in your calendar.")],
    )
    index.replace_document("signin", "v1", [chunk("signin", 0, "If sign-in fails, clear the browser's cookies.")])
    index.replace_document(
        "signature", "v1", [chunk("signature", 0, "Sign e-mails: a signed mail shows a sign badge.")]
    )
    return index


def test_words_a_question_writes_apart_find_the_page_that_hyphenates_them():
    index = _absence_and_calendar()
    hits = index.search("away for two weeks, how do I set an out of office", k=3)
    assert hits[0]["doc_id"] == "absence"
    assert index.search("I can't sign in", k=1)[0]["doc_id"] == "signin"


def test_a_pair_of_words_no_document_joins_changes_no_score():
    index = _absence_and_calendar()
    tokenize = Tokenizer()
    plain = _absence_and_calendar(BM25Index(tokenizer=lambda text: tokenize(text)))  # type: ignore[arg-type]
    question = "the holiday calendar shows every week"
    assert [(h["chunk_id"], h["score"]) for h in index.search(question, k=3)] == [
        (h["chunk_id"], h["score"]) for h in plain.search(question, k=3)
    ]


def _accounts() -> BM25Index:
    index = BM25Index()
    index.replace_document(
        "password",
        "v1",
        [
            chunk("password", 0, "Forgot your password? Reset your password from the sign-in page.", title="Passwords"),
            chunk("password", 1, "A strong password has twelve characters.", title="Passwords"),
        ],
    )
    index.replace_document(
        "notifications", "v1", [chunk("notifications", 0, "Turn notifications off for one channel.", title="Alerts")]
    )
    index.replace_document("black", "v1", [chunk("black", 0, "A black screen when sharing: restart the app.")])
    index.replace_document("webcal", "v1", [chunk("webcal", 0, "Subscribe to a calendar with its webcal link.")])
    index.replace_document("visit", "v1", [chunk("visit", 0, "Visitors sign in at reception before their visit.")])
    return index


@pytest.mark.parametrize(
    ("typed", "read"),
    [
        ("forgot my pasword", "forgot my password"),  # a letter left out
        ("I forgot my passwrod!", "I forgot my password!"),  # two letters swapped
        ("Too many notifcations", "Too many notifications"),  # … in a word whose stem the slip changes
        ("reset my Passwotd", "reset my password"),  # a letter changed, in any case
    ],
)
def test_a_typing_slip_is_read_as_the_word_the_documents_hold(typed, read):
    assert _accounts().read_slips(typed) == read


@pytest.mark.parametrize(
    "question",
    [
        "slack keeps crashing",  # an ordinary word the documents never use is meant as written ("black" is one edit)
        "my webcam shows nothing in calls",  # … an everyday word no model vocabulary holds whole ("webcal": one edit)
        "my passwords expired",  # the documents hold the word (its stem) as written
        "reset pw",  # too short to tell a slip from another word
        "error 0x8007005 on sign-in",  # no word
        "globalprotect disconnects",  # nothing one edit away
        "I'd like to have Visio on my laptop",  # a product's name, a word English text uses ("visit" is one edit)
    ],
)
def test_words_that_are_no_slips_are_searched_as_written(question):
    assert _accounts().read_slips(question) == question
