"""Retrieval quality and latency on the e-manual tech-support benchmark, through deskmate's own pipeline.

    python bench/retrieval.py --data ../shared/data/techsupport_qa_emanual --split tv-dev
    python bench/retrieval.py --data ../shared/data/techsupport_qa_emanual --split tv-test --compare
    python bench/retrieval.py --data ../shared/data/techsupport_qa_emanual --split s10 --compare --json
    python bench/retrieval.py --data ../shared/data/techsupport_qa_emanual --split tv-test s10 --backend postgres
    python bench/retrieval.py --data ../shared/data/techsupport_qa_emanual --split tv-test s10 \
        --encoders torch,onnx-fp32,onnx-int8,onnx-int8-ffn-fp32

Each manual section is indexed as one text document (title + body) by the indexing graph into a fresh
embedded Chroma with BM25 beside it (app.adapters.lexical_index.HybridIndex, as the app builds it);
each query is embedded and searched by nodes.support.retrieval.search_chunks with the settings' defaults —
exactly what the `retrieve` node runs. Relevance is section-level (qrels); a section's rank is the
rank of its first chunk. Prints hit@1, hit@5, MRR@10, nDCG@10, ans@5 (the answer section is among
the top-5 chunks handed to the answer step) and p50/p95 retrieval latency (embed + search).

--compare adds, on the same chunks in the same process: the peers a user would otherwise pick
("langchain": LangChain's Chroma vector store over the same MiniLM embeddings, similarity search;
"bm25": bm25s with its defaults) and one ablation row per pipeline stage. The "+feedback" row
(tv splits only) first simulates votes on tv-dev (bench/feedback.py), then searches with them.
Tune only on tv-dev.

--backend postgres runs the same pipeline twice over the same Chroma chunks, query by query in turn: with the
embedded in-process BM25 and with the lexical index in Postgres (app.adapters.lexical_postgres, what server
mode uses), filled from Chroma as a replica's start-up does, in a scratch database on the server at
$DESKMATE_TEST_POSTGRES (default: postgresql://postgres@127.0.0.1:5432/postgres), dropped afterwards. It also
times the lexical search alone. Several splits may be given.

--encoders indexes each split once per embedding encoder (torch: sentence-transformers, the reference;
onnx-<variant>: app/adapters/onnx_embeddings.py) and prints the default pipeline's figures for each, with the
nDCG@10 difference to the first encoder (the bar for an encoder: within .005). Several splits may be given.
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import json
import math
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Callable

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import app  # noqa: E402,F401  (offline defaults)

SPLITS = {
    "tv-dev": ("smart_tv_remote_corpus.jsonl", "smart_tv_remote_queries.jsonl", "smart_tv_remote_qrels.tsv", "dev"),
    "tv-test": ("smart_tv_remote_corpus.jsonl", "smart_tv_remote_queries.jsonl", "smart_tv_remote_qrels.tsv", "test"),
    "s10": ("s10_corpus.jsonl", "s10_queries.jsonl", "s10_qrels.tsv", None),
}
METRICS = ("hit@1", "hit@5", "mrr@10", "ndcg@10", "ans@5")
ANSWER_K = 5  # chunks the retrieve node hands to the answer step (DESKMATE_TOP_K)
POOL_K = 100  # chunks the benchmark reads from the pipeline (enough for 10 distinct sections)


def load_split(data: Path, split: str):
    corpus_file, queries_file, qrels_file, part = SPLITS[split]
    corpus = [json.loads(line) for line in (data / corpus_file).read_text().splitlines() if line.strip()]
    queries = {q["_id"]: q["text"] for q in map(json.loads, (data / queries_file).read_text().splitlines())}
    qrels: dict[str, set[str]] = defaultdict(set)
    with open(data / qrels_file) as handle:
        for row in csv.DictReader(handle, delimiter="\t"):
            if float(row["score"]) > 0:
                qrels[row["query-id"]].add(row["corpus-id"])
    if part:
        with open(data / "smart_tv_remote_split.tsv") as handle:
            wanted = {row["query-id"] for row in csv.DictReader(handle, delimiter="\t") if row["split"] == part}
        queries = {qid: text for qid, text in queries.items() if qid in wanted}
    queries = {qid: text for qid, text in queries.items() if qrels.get(qid)}  # unlabeled queries are dropped
    return corpus, queries, qrels


def section_document(doc: dict) -> bytes:
    """A section as a plain-text document. A few sections are a bare title; the title is then the body too,
    as any "title + text" indexer would see it (deskmate refuses documents with no text at all)."""
    title = (doc.get("title") or doc["_id"]).strip()
    body = doc["text"].strip() or title
    return f"{title}\n{'=' * len(title)}\n\n{body}\n".encode()


def section_of(source: str) -> str:
    return source.removeprefix("bench/").removesuffix(".txt")


def metrics(ranked: list[str], relevant: set[str], answer_sections: list[str] | None = None) -> dict[str, float]:
    first = next((i for i, sid in enumerate(ranked[:10]) if sid in relevant), None)
    dcg = sum(1 / math.log2(i + 2) for i, sid in enumerate(ranked[:10]) if sid in relevant)
    ideal = sum(1 / math.log2(i + 2) for i in range(min(len(relevant), 10)))
    answer_sections = ranked[:ANSWER_K] if answer_sections is None else answer_sections
    return {
        "hit@1": float(first == 0),
        "hit@5": float(first is not None and first < 5),
        "mrr@10": 1 / (first + 1) if first is not None else 0.0,
        "ndcg@10": dcg / ideal if ideal else 0.0,
        "ans@5": float(any(s in relevant for s in answer_sections)),
    }


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


# one system = a function query text → (ranked section ids, section ids of the answer's top-5 chunks)
System = Callable[[str], tuple[list[str], list[str]]]


def evaluate(system: System, queries: dict[str, str], qrels) -> dict[str, float]:
    return evaluate_side_by_side({"system": system}, queries, qrels)["system"]


def evaluate_side_by_side(
    systems: dict[str, System], queries: dict[str, str], qrels, latencies: dict[str, list[float]] | None = None
) -> dict[str, dict[str, float]]:
    """Each query through every system in turn, so a machine busy with other work slows them alike
    (`latencies`, when given, receives each system's per-query ms in query order)."""
    totals: dict[str, dict[str, float]] = {name: defaultdict(float) for name in systems}
    latencies = {name: [] for name in systems} if latencies is None else latencies
    latencies.update({name: [] for name in systems})
    for qid, text in queries.items():
        for name, system in systems.items():
            started = time.perf_counter()
            ranked, answer_sections = system(text)
            latencies[name].append((time.perf_counter() - started) * 1000)
            for metric, value in metrics(ranked, qrels[qid], answer_sections).items():
                totals[name][metric] += value
    results = {}
    for name in systems:
        result = {metric: round(totals[name][metric] / len(queries), 4) for metric in METRICS}
        result.update(
            p50_ms=round(statistics.median(latencies[name]), 1), p95_ms=round(percentile(latencies[name], 95), 1)
        )
        results[name] = result
    return results


def lexical_latency(indexes: dict[str, object], queries: dict[str, str], k: int) -> dict[str, dict[str, float]]:
    """p50/p95 ms of the lexical search alone (as the retrieve node calls it, for an anonymous caller)."""
    from core.filters import access_where

    where = access_where(frozenset())
    latencies: dict[str, list[float]] = {name: [] for name in indexes}
    for text in queries.values():
        for name, index in indexes.items():
            started = time.perf_counter()
            index.search(text, k, where)
            latencies[name].append((time.perf_counter() - started) * 1000)
    return {
        name: {"p50_ms": round(statistics.median(v), 2), "p95_ms": round(percentile(v, 95), 2)}
        for name, v in latencies.items()
    }


def deskmate_system(context, embedder) -> System:
    from nodes.support.retrieval import search_chunks

    def run(text: str):
        hits = search_chunks(context, text, embedder.embed_query(text), k=POOL_K, groups=None)
        sections = list(dict.fromkeys(section_of(h["source"]) for h in hits))
        return sections, [section_of(h["source"]) for h in hits[:ANSWER_K]]

    return run


def stored_chunks(chroma_index):
    """(chunk id, text as embedded, embedding, section id) of every stored chunk: the peers' input."""
    records = chroma_index._chunks.get(include=["documents", "metadatas", "embeddings"])
    rows = []
    for chunk_id, text, meta, vector in zip(
        records["ids"], records["documents"], records["metadatas"], records["embeddings"]
    ):
        heading = " > ".join(p for p in (meta["title"], meta["section"]) if p)
        rows.append((chunk_id, f"{heading}\n{text}", list(vector), section_of(meta["source"])))
    return rows


def langchain_system(client, embedder, rows) -> System:
    """The naive pipeline: LangChain's Chroma vector store, MiniLM, similarity_search, first chunk per section."""
    from langchain_chroma import Chroma
    from langchain_core.embeddings import Embeddings

    known = {text: vector for _, text, vector, _ in rows}

    class MiniLM(Embeddings):  # the same model; stored chunks reuse their vectors instead of re-encoding
        def embed_documents(self, texts):
            return [known.get(t) or embedder.embed_query(t) for t in texts]

        def embed_query(self, text):
            return embedder.embed_query(text)

    store = Chroma(collection_name="langchain_peer", embedding_function=MiniLM(), client=client)
    store.add_texts(
        [text for _, text, _, _ in rows], metadatas=[{"section": s} for *_, s in rows], ids=[cid for cid, *_ in rows]
    )

    def run(text: str):
        docs = store.similarity_search(text, k=POOL_K)
        sections = [d.metadata["section"] for d in docs]
        return list(dict.fromkeys(sections)), sections[:ANSWER_K]

    return run


def bm25_system(rows) -> System:
    """Plain BM25: bm25s with its defaults (English stop words, no stemming) on the same chunk texts."""
    import bm25s

    sections = [s for *_, s in rows]
    retriever = bm25s.BM25()
    retriever.index(
        bm25s.tokenize([text for _, text, _, _ in rows], stopwords="en", show_progress=False), show_progress=False
    )

    def run(text: str):
        tokens = bm25s.tokenize([text], stopwords="en", show_progress=False)
        if not tokens.vocab:
            return [], []
        found, _ = retriever.retrieve(tokens, k=min(POOL_K, len(rows)), show_progress=False)
        ranked = [sections[i] for i in found[0]]
        return list(dict.fromkeys(ranked)), ranked[:ANSWER_K]

    return run


def build_index(corpus: list[dict], settings, embedder, folder: str):
    """Index every section through the indexing graph into Chroma + BM25, as the app does."""
    from app.adapters.lexical_index import HybridIndex
    from app.adapters.parsers import FileParser
    from app.adapters.vector_index import ChromaVectorIndex, make_client
    from graphs.indexing import IndexingContext, build_indexing_graph

    client = make_client("persistent", path=folder)
    index = HybridIndex(ChromaVectorIndex(client, "bench_chunks"))
    graph = build_indexing_graph()
    indexing = IndexingContext(
        embedder=embedder, index=index, parser=FileParser(), chunk_max_tokens=settings.ingestion.chunk_max_tokens
    )
    for doc in corpus:
        graph.invoke({"source": f"bench/{doc['_id']}.txt", "data": section_document(doc)}, context=indexing)
    return client, index


def base_context(index, embedder, settings, candidates: int | None = None):
    """The SupportContext the app builds, minus what retrieval does not use."""
    from app.resources import answer_confidence, retrieval_config
    from graphs.support import SupportContext

    return SupportContext(
        embedder=embedder,
        index=index,
        redactor=None,
        lexical=index,
        top_k=settings.retrieval.top_k,
        candidate_k=candidates or settings.retrieval.candidate_k,
        min_score=settings.retrieval.min_score,
        retrieval=retrieval_config(settings),
        **answer_confidence(settings),
    )


def print_table(title: str, rows: list[tuple[str, dict[str, float] | None]]) -> None:
    print(title)
    print(
        f"{'system':<40} {'hit@1':>6} {'hit@5':>6} {'MRR@10':>7} {'nDCG@10':>8} {'ans@5':>6} {'p50 ms':>7} "
        f"{'p95 ms':>7}"
    )
    for name, r in rows:
        if r is None:
            print(f"{name:<40} {'n/a (no votes for this corpus)':>40}")
            continue
        print(
            f"{name:<40} {r['hit@1']:>6.3f} {r['hit@5']:>6.3f} {r['mrr@10']:>7.3f} {r['ndcg@10']:>8.3f} "
            f"{r['ans@5']:>6.3f} {r['p50_ms']:>7.1f} {r['p95_ms']:>7.1f}"
        )


def _recording(system: System, ranked: list[list[str]]) -> System:
    """The system, keeping each query's ranked sections (the backends must rank alike, not just score alike)."""

    def run(text: str):
        sections, answer = system(text)
        ranked.append(sections)
        return sections, answer

    return run


def compare_backends(args, settings, embedder) -> dict:
    """--backend postgres: per split, the embedded and the Postgres lexical index side by side."""
    from app.adapters.lexical_index import HybridIndex
    from app.adapters.lexical_postgres import PostgresBM25Index
    from app.storage import Database
    from tests.postgres import scratch_database

    figures: dict[str, dict] = {}
    for split in args.split:
        corpus, queries, qrels = load_split(args.data, split)
        with tempfile.TemporaryDirectory() as tmp, scratch_database() as url:
            started = time.perf_counter()
            _, embedded = build_index(corpus, settings, embedder, tmp)
            index_seconds = time.perf_counter() - started
            database = Database.open(url)
            shared = HybridIndex(embedded.vector, PostgresBM25Index(database, "bench_chunks"))
            started = time.perf_counter()
            shared.sync_lexical()  # a replica's start-up over an empty database: every document read from Chroma
            fill_ms = (time.perf_counter() - started) * 1000
            embedder.embed_query("warm up")
            systems = {
                "embedded (in-process BM25)": deskmate_system(
                    base_context(embedded, embedder, settings, args.candidates), embedder
                ),
                "postgres (shared BM25)": deskmate_system(
                    base_context(shared, embedder, settings, args.candidates), embedder
                ),
            }
            rankings: dict[str, list[list[str]]] = {name: [] for name in systems}
            systems = {name: _recording(system, rankings[name]) for name, system in systems.items()}
            per_query: dict[str, list[float]] = {}
            results = evaluate_side_by_side(systems, queries, qrels, per_query)
            differing = sum(a != b for a, b in zip(*rankings.values()))
            differing_top = sum(a[:10] != b[:10] for a, b in zip(*rankings.values()))
            # what the shared index adds to one retrieval, paired query by query (robust to a busy machine)
            extra = [pg - mem for mem, pg in zip(*per_query.values())]
            lexical = lexical_latency(
                {"embedded (in-process BM25)": embedded, "postgres (shared BM25)": shared},
                queries,
                settings.retrieval.candidate_k,
            )
            chunks = embedded.count()
            database.close()
        print(
            f"split={split} queries={len(queries)} sections={len(corpus)} chunks={chunks} (indexed in "
            f"{index_seconds:.1f} s; Postgres lexical index filled from Chroma in {fill_ms:.0f} ms)"
        )
        print_table("", list(results.items()))
        for name, figure in lexical.items():
            print(f"  lexical search alone, {name}: p50 {figure['p50_ms']:.2f} ms, p95 {figure['p95_ms']:.2f} ms")
        added = {"p50_ms": round(statistics.median(extra), 2), "p95_ms": round(percentile(extra, 95), 2)}
        print(f"  postgres minus embedded, same query: p50 {added['p50_ms']:+.2f} ms, p95 {added['p95_ms']:+.2f} ms")
        print(
            f"  queries whose ranked sections differ between the two: {differing} of {len(queries)} "
            f"({differing_top} within the first 10)"
        )
        print()
        figures[split] = {
            "pipeline": results,
            "lexical_search": lexical,
            "postgres_extra": added,
            "fill_ms": round(fill_ms),
            "rankings_differing": differing,
            "rankings_differing_top10": differing_top,
        }
    return figures


def make_encoder(name: str):
    """torch or onnx-<variant>, with no question cache (see main)."""
    from app.adapters.encoders import build_embedder

    if name == "torch":
        return build_embedder("torch", query_cache_size=0)
    if not name.startswith("onnx-"):
        raise SystemExit(f"unknown encoder {name!r}: torch or onnx-<variant>")
    return build_embedder("onnx", query_cache_size=0, onnx_variant=name[len("onnx-") :])


def compare_encoders(args, settings) -> dict:
    """Each split indexed and searched once per encoder; nDCG@10 against the first encoder's."""
    names = [n for n in args.encoders.split(",") if n]
    figures: dict[str, dict] = {}
    for split in args.split:
        corpus, queries, qrels = load_split(args.data, split)
        rows, figures[split] = [], {}
        for name in names:
            embedder = make_encoder(name)
            with tempfile.TemporaryDirectory() as tmp:
                started = time.perf_counter()
                _client, index = build_index(corpus, settings, embedder, tmp)
                seconds = time.perf_counter() - started
                base = base_context(index, embedder, settings, args.candidates)
                embedder.embed_query("warm up")
                result = evaluate(deskmate_system(base, embedder), queries, qrels)
            result["index_s"] = round(seconds, 1)
            figures[split][name] = result
            reference = figures[split][names[0]]["ndcg@10"]
            delta = result["ndcg@10"] - reference
            label = f"{name} (nDCG {delta:+.3f}, indexed {seconds:.0f} s)"
            rows.append((label, result))
        print_table(
            f"\nsplit={split} queries={len(queries)} sections={len(corpus)}, default pipeline per encoder", rows
        )
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, required=True, help="folder of techsupport_qa_emanual")
    parser.add_argument(
        "--split",
        choices=sorted(SPLITS),
        nargs="+",
        default=["tv-dev"],
        help="one split (several with --backend postgres)",
    )
    parser.add_argument(
        "--backend",
        choices=("memory", "postgres"),
        default="memory",
        help="postgres: the embedded and the Postgres lexical index side by side, same run",
    )
    parser.add_argument("--compare", action="store_true", help="also run the peers and one ablation row per stage")
    parser.add_argument("--json", action="store_true", help="also print the figures as one last line of JSON")
    parser.add_argument("--candidates", type=int, default=None, help="override DESKMATE_CANDIDATE_K")
    parser.add_argument("--encoders", help="comma-separated: torch, onnx-fp32, onnx-int8, onnx-int8-ffn-fp32")
    args = parser.parse_args()

    if args.backend == "postgres" and args.compare:
        parser.error("--compare runs with the embedded backend only")
    if args.encoders:
        from app.settings import Settings

        figures = compare_encoders(args, Settings(_env_file=None))
        if args.json:
            print(json.dumps(figures))
        return 0
    if args.backend == "memory" and len(args.split) > 1:
        parser.error("several splits only with --backend postgres")

    from app.adapters.embeddings import SentenceTransformerEmbedder
    from app.settings import Settings

    settings = Settings(_env_file=None)
    # no cache of question vectors: a retrieval's latency includes embedding its question, and side by side the
    # cache would hand the second system the first one's vector for free
    embedder = SentenceTransformerEmbedder(query_cache_size=0)
    if args.backend == "postgres":
        figures = compare_backends(args, settings, embedder)
        if args.json:
            print(json.dumps(figures))
        return 0
    args.split = args.split[0]
    corpus, queries, qrels = load_split(args.data, args.split)
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        client, index = build_index(corpus, settings, embedder, tmp)
        index_seconds = time.perf_counter() - started
        started = time.perf_counter()
        index.rebuild_lexical()  # what a restart does: measured, then searched exactly as after indexing
        rebuild_ms = (time.perf_counter() - started) * 1000

        base = base_context(index, embedder, settings, args.candidates)
        embedder.embed_query("warm up")
        results: dict[str, dict[str, float] | None] = {
            "deskmate": evaluate(deskmate_system(base, embedder), queries, qrels)
        }
        rows = [("deskmate (default pipeline)", results["deskmate"])]
        # what the title as the page's question (nodes/support/retrieval.py) does on this split: the other setting
        other = 0.0 if base.retrieval.title_match_weight > 0 else 0.2
        titled = dataclasses.replace(base, retrieval=dataclasses.replace(base.retrieval, title_match_weight=other))
        results["title_match_other"] = evaluate(deskmate_system(titled, embedder), queries, qrels)
        rows.append((f"  title match weight {other}", results["title_match_other"]))
        if args.compare:
            chunk_rows = stored_chunks(index.vector)
            results["langchain"] = evaluate(langchain_system(client, embedder, chunk_rows), queries, qrels)
            results["bm25"] = evaluate(bm25_system(chunk_rows), queries, qrels)
            rows += [("peer: langchain+chroma+minilm", results["langchain"]), ("peer: bm25 (bm25s)", results["bm25"])]
            cfg = base.retrieval
            off = dataclasses.replace(cfg, lexical=False, aggregate_sections=False, neighbour_radius=0, feedback=False)
            steps = [
                ("dense only", off),
                ("BM25 only (deskmate's lexical index)", dataclasses.replace(off, lexical=True, dense_weight=0.0)),
                ("+ BM25, reciprocal-rank fusion", dataclasses.replace(off, lexical=True, fusion="rrf")),
                ("+ BM25, weighted fusion", dataclasses.replace(off, lexical=True)),
                ("+ section aggregation", dataclasses.replace(off, lexical=True, aggregate_sections=True)),
                (
                    "+ neighbour expansion",
                    dataclasses.replace(
                        off, lexical=True, aggregate_sections=True, neighbour_radius=cfg.neighbour_radius
                    ),
                ),
            ]
            ablation = {}
            for name, config in steps:
                ablation[name] = evaluate(
                    deskmate_system(dataclasses.replace(base, retrieval=config), embedder), queries, qrels
                )
                rows.append((f"  {name}", ablation[name]))
            feedback_row = None
            if args.split.startswith("tv"):
                from feedback import simulate_votes  # bench/feedback.py (this script's folder is on sys.path)

                with tempfile.TemporaryDirectory() as votes_dir:
                    store, summary = simulate_votes(
                        args.data, base, embedder, Path(votes_dir) / "feedback.sqlite", settings
                    )
                    with_votes = dataclasses.replace(base, feedback=store)
                    feedback_row = evaluate(deskmate_system(with_votes, embedder), queries, qrels)
                    store.close()
                print(f"feedback: {summary}")
            ablation["+ feedback (votes simulated on tv-dev)"] = feedback_row
            rows.append(("  + feedback (votes on tv-dev)", feedback_row))
            results["ablation"] = ablation  # type: ignore[assignment]

    print(
        f"split={args.split} queries={len(queries)} sections={len(corpus)} chunks={index.count()} "
        f"(indexed in {index_seconds:.1f} s; BM25 rebuilt from Chroma in {rebuild_ms:.0f} ms)"
    )
    print_table("", rows)
    if args.json:
        print(json.dumps(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
