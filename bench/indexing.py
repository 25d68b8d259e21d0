"""Indexing throughput: chunks/s through the whole indexing graph vs the raw encoder on the same chunks.

    python bench/indexing.py                       # the bundled sample knowledge base (kb/)
    python bench/indexing.py --docs ../shared/data/it_kb_rtechsupport_wiki/docs   # a bigger real corpus
    python bench/indexing.py --jobs                # one 1.6 MB manual uploaded through the job queue

Both figures come from one run on the same chunk texts: first every file goes through
load → parse → chunk → embed → store into a fresh embedded Chroma, then the encoder alone embeds
the chunks that run produced. Model loading is excluded from both. Target: graph ≥ 0.9 × encoder.

--jobs: one manual (the Galaxy S10 e-manual's sections from $EVAL_DATA, repeated to --manual-mb; a generated
one without the data) is stored and queued as an upload and run by a JobWorker over the real stack (sandboxed
parser, MiniLM, embedded Chroma, the SQLite job queue with its heartbeats); the job's own run time — queue,
parse, chunk, embed, store — against the raw encoder on the same chunk texts.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import app  # noqa: E402,F401  (offline defaults)

REPO = Path(__file__).resolve().parent.parent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--docs", type=Path, default=REPO / "kb", help="folder of documents to index")
    parser.add_argument("--limit", type=int, default=0, help="index at most this many files (0 = all)")
    parser.add_argument("--jobs", action="store_true", help="one large manual through the job queue instead")
    parser.add_argument("--data", type=Path, default=Path(os.environ.get("EVAL_DATA", REPO.parent / "shared" / "data")),
                        help="the evaluation data (for --jobs: techsupport_qa_emanual/s10_manual_corpus.json)")
    parser.add_argument("--manual-mb", type=float, default=1.6, help="--jobs: the manual's size in MB")
    args = parser.parse_args()
    if args.jobs:
        return run_jobs(args)

    from app.adapters.embeddings import SentenceTransformerEmbedder
    from app.adapters.parsers import FileParser
    from app.adapters.vector_index import ChromaVectorIndex, make_client
    from app.indexing_service import supported_files
    from app.settings import Settings
    from graphs.context import IndexingContext
    from graphs.errors import DocumentRejected
    from graphs.indexing import build_indexing_graph

    files = supported_files(args.docs)
    if args.limit:
        files = files[: args.limit]
    embedder = SentenceTransformerEmbedder()
    embedder.embed_documents(["warm up the encoder"] * 8)
    settings = Settings(_env_file=None)
    with tempfile.TemporaryDirectory() as tmp:
        index = ChromaVectorIndex(make_client("persistent", path=tmp), "bench_chunks")
        recorder = RecordingEmbedder(embedder)
        context = IndexingContext(embedder=recorder, index=index, parser=FileParser(),
                                  chunk_max_tokens=settings.chunk_max_tokens)
        graph = build_indexing_graph()
        payloads = [(f"bench/{p.relative_to(args.docs).as_posix()}", p.read_bytes()) for p in files]
        started = time.perf_counter()
        failed = 0
        for source, data in payloads:
            try:
                graph.invoke({"source": source, "data": data}, context=context)
            except DocumentRejected:
                failed += 1
        graph_seconds = time.perf_counter() - started
        texts = recorder.texts
    started = time.perf_counter()
    for i in range(0, len(texts), 32):
        embedder.embed_documents(texts[i:i + 32])
    encoder_seconds = time.perf_counter() - started

    n = len(texts)
    graph_rate, encoder_rate = n / graph_seconds, n / encoder_seconds
    print(f"files={len(files)} (refused {failed}) chunks={n} bytes={sum(len(d) for _, d in payloads):,}")
    print(f"indexing graph : {graph_seconds:7.2f} s  {graph_rate:6.1f} chunks/s  (load, parse, chunk, embed, store)")
    print(f"raw encoder    : {encoder_seconds:7.2f} s  {encoder_rate:6.1f} chunks/s  (same chunk texts, batch 32)")
    print(f"ratio          : {graph_rate / encoder_rate:.2f} x   (target >= 0.90)")
    return 0


def manual_text(data: Path, megabytes: float) -> tuple[bytes, str]:
    """A Markdown manual of about `megabytes`: the S10 e-manual's sections (repeated), or generated text."""
    import json

    corpus = data / "techsupport_qa_emanual" / "s10_manual_corpus.json"
    sections: list[str] = []
    if corpus.exists():
        for section in json.loads(corpus.read_text()).values():
            lines = section["text"] if isinstance(section["text"], list) else [section["text"]]
            sections.append(f"## {section['title']}\n\n" + "\n\n".join(line for line in lines if line.strip()))
        origin = f"{corpus.name} sections, repeated"
    else:
        sections = [f"## Procedure {n}\n\n" + " ".join(f"Check relay {k} of cabinet {n} and note its reading."
                                                        for k in range(12)) for n in range(500)]
        origin = "generated (no e-manual data found)"
    target, parts, size, rounds = int(megabytes * 1024 * 1024), ["# Field manual\n"], 0, 0
    while size < target:
        rounds += 1
        for section in sections:
            text = f"\n{section.replace('## ', f'## Part {rounds}: ', 1)}\n"
            parts.append(text)
            size += len(text.encode())
            if size >= target:
                break
    return "".join(parts).encode(), origin


def run_jobs(args) -> int:
    """One manual as an upload job, run by a JobWorker; its chunks/s against the raw encoder's."""
    from app.adapters.embeddings import SentenceTransformerEmbedder
    from app.job_worker import JobWorker, enqueue_index
    from app.resources import build_resources
    from app.settings import Settings

    manual, origin = manual_text(args.data, args.manual_mb)
    embedder = SentenceTransformerEmbedder()
    embedder.embed_documents(["warm up the encoder"] * 8)
    recorder = RecordingEmbedder(embedder)
    with tempfile.TemporaryDirectory() as tmp:
        resources = build_resources(Settings(_env_file=None, data_dir=Path(tmp), kb_dir=None), embedder=recorder)
        try:
            worker = JobWorker(resources, resources.jobs, resources.originals)
            started = time.perf_counter()
            job = enqueue_index(resources, "uploads/manual.md", "manual.md", manual, {})
            worker.run_next()
            job_seconds = time.perf_counter() - started
            job = resources.jobs.get(job["id"])
        finally:
            resources.close()
    if job["state"] != "done":
        print(f"the job ended {job['state']}: {job['error']}")
        return 1
    texts = recorder.texts
    started = time.perf_counter()
    for i in range(0, len(texts), 32):
        embedder.embed_documents(texts[i:i + 32])
    encoder_seconds = time.perf_counter() - started
    n = len(texts)
    job_rate, encoder_rate = n / job_seconds, n / encoder_seconds
    print(f"manual: {len(manual):,} bytes ({origin}); chunks={n}; job progress {job['progress_done']}/"
          f"{job['progress_total']}")
    print(f"upload job     : {job_seconds:7.2f} s  {job_rate:6.1f} chunks/s  (store + queue, claim, parse, chunk, "
          "embed, store, heartbeats)")
    print(f"raw encoder    : {encoder_seconds:7.2f} s  {encoder_rate:6.1f} chunks/s  (same chunk texts, batch 32)")
    print(f"ratio          : {job_rate / encoder_rate:.2f} x   (target >= 0.90)")
    return 0


class RecordingEmbedder:
    """Passes through to the real embedder and keeps the texts, so the encoder run uses the same chunks."""

    def __init__(self, inner) -> None:
        self._inner = inner
        self.dimension = inner.dimension
        self.texts: list[str] = []

    def embed_documents(self, texts):
        self.texts.extend(texts)
        return self._inner.embed_documents(texts)

    def embed_query(self, text):
        return self._inner.embed_query(text)

    def count_tokens(self, text):
        return self._inner.count_tokens(text)


if __name__ == "__main__":
    raise SystemExit(main())
