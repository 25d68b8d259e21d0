"""Retrieval quality and latency on the e-manual tech-support benchmark, through deskmate's own indexing graph.

    python bench/retrieval.py --data ../shared/data/techsupport_qa_emanual --split tv-dev
    python bench/retrieval.py --data ../shared/data/techsupport_qa_emanual --split tv-test
    python bench/retrieval.py --data ../shared/data/techsupport_qa_emanual --split s10

Each manual section is indexed as one text document (title + body) by the indexing graph into a
fresh embedded Chroma; each query is embedded and searched exactly as the support graph does.
Relevance is section-level (qrels); a section's rank is the rank of its first chunk.
Prints hit@1, hit@5, MRR@10, nDCG@10 and p50/p95 retrieval latency (embed + search). Tune on tv-dev only.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import app  # noqa: E402,F401  (offline defaults)

SPLITS = {
    "tv-dev": ("smart_tv_remote_corpus.jsonl", "smart_tv_remote_queries.jsonl", "smart_tv_remote_qrels.tsv", "dev"),
    "tv-test": ("smart_tv_remote_corpus.jsonl", "smart_tv_remote_queries.jsonl", "smart_tv_remote_qrels.tsv", "test"),
    "s10": ("s10_corpus.jsonl", "s10_queries.jsonl", "s10_qrels.tsv", None),
}


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
    return f"{title}\n{'=' * len(title)}\n\n{body}\n".encode("utf-8")


def metrics(ranked: list[str], relevant: set[str]) -> dict[str, float]:
    first = next((i for i, sid in enumerate(ranked[:10]) if sid in relevant), None)
    dcg = sum(1 / math.log2(i + 2) for i, sid in enumerate(ranked[:10]) if sid in relevant)
    ideal = sum(1 / math.log2(i + 2) for i in range(min(len(relevant), 10)))
    return {"hit@1": float(first == 0), "hit@5": float(first is not None and first < 5),
            "mrr@10": 1 / (first + 1) if first is not None else 0.0, "ndcg@10": dcg / ideal if ideal else 0.0}


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, required=True, help="folder of techsupport_qa_emanual")
    parser.add_argument("--split", choices=sorted(SPLITS), default="tv-dev")
    parser.add_argument("--candidates", type=int, default=60, help="chunks fetched per query before section dedupe")
    parser.add_argument("--json", action="store_true", help="also print the figures as one JSON line")
    args = parser.parse_args()

    from app.adapters.embeddings import SentenceTransformerEmbedder
    from app.adapters.parsers import FileParser
    from app.adapters.vector_index import ChromaVectorIndex, make_client
    from app.settings import Settings
    from graphs.context import IndexingContext
    from graphs.indexing import build_indexing_graph

    corpus, queries, qrels = load_split(args.data, args.split)
    settings = Settings(_env_file=None)
    embedder = SentenceTransformerEmbedder()
    with tempfile.TemporaryDirectory() as tmp:
        index = ChromaVectorIndex(make_client("persistent", path=tmp), "bench_chunks")
        context = IndexingContext(embedder=embedder, index=index, parser=FileParser(),
                                  chunk_max_tokens=settings.chunk_max_tokens)
        graph = build_indexing_graph()
        started = time.perf_counter()
        for doc in corpus:
            graph.invoke({"source": f"bench/{doc['_id']}.txt", "data": section_document(doc)}, context=context)
        index_seconds = time.perf_counter() - started
        chunk_count = index.count()

        embedder.embed_query("warm up")
        totals: dict[str, float] = defaultdict(float)
        latencies: list[float] = []
        for qid, text in queries.items():
            t0 = time.perf_counter()
            hits = index.query(embedder.embed_query(text), k=args.candidates)
            latencies.append((time.perf_counter() - t0) * 1000)
            ranked = list(dict.fromkeys(h["source"].removeprefix("bench/").removesuffix(".txt") for h in hits))
            for name, value in metrics(ranked, qrels[qid]).items():
                totals[name] += value

    n = len(queries)
    result = {name: round(value / n, 4) for name, value in totals.items()}
    result.update(p50_ms=round(statistics.median(latencies), 1), p95_ms=round(percentile(latencies, 95), 1))
    print(f"split={args.split} queries={n} sections={len(corpus)} chunks={chunk_count} "
          f"(indexed in {index_seconds:.1f} s)")
    print(f"{'system':<10} {'hit@1':>6} {'hit@5':>6} {'MRR@10':>7} {'nDCG@10':>8} {'p50 ms':>7} {'p95 ms':>7}")
    print(f"{'deskmate':<10} {result['hit@1']:>6.3f} {result['hit@5']:>6.3f} {result['mrr@10']:>7.3f} "
          f"{result['ndcg@10']:>8.3f} {result['p50_ms']:>7.1f} {result['p95_ms']:>7.1f}")
    if args.json:
        print(json.dumps({"deskmate": result}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
