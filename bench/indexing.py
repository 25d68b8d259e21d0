"""Indexing throughput: chunks/s through the whole indexing graph vs the raw encoder on the same chunks.

    python bench/indexing.py                       # the bundled sample knowledge base (kb/), the default encoder
    python bench/indexing.py --backend torch       # … indexed with the torch encoder instead
    python bench/indexing.py --docs ../shared/data/it_kb_rtechsupport_wiki/docs   # a bigger real corpus
    python bench/indexing.py --jobs                # one 1.6 MB manual uploaded through the job queue

All figures come from one run on the same chunk texts: first every file goes through
load → parse → chunk → embed → store into a fresh embedded Chroma with the --backend encoder (default: onnx,
the service's default), then that encoder alone embeds the chunks the run produced, then the raw
sentence-transformers torch encoder (batches of 32 on every core, what indexing ran before the ONNX backend)
embeds them too. Model loading is excluded. Targets: graph ≥ 0.9 × its own encoder, and ≥ 2 × raw torch.

--jobs: one manual (the Galaxy S10 e-manual's sections from $EVAL_DATA, repeated to --manual-mb; a generated
one without the data) is stored and queued as an upload and run by a JobWorker over the real stack (sandboxed
parser, MiniLM, embedded Chroma, the SQLite job queue with its heartbeats); the job's own run time — queue,
parse, chunk, embed, store — against the raw encoder on the same chunk texts. A document this large is written
to the index while it is embedded (nodes/indexing/steps.embed); --manual-mb 0.4 is a quicker run (~1,200 chunks).

    python bench/indexing.py --jobs --replica      # chat latency on a replica while a worker indexes

--jobs --replica: server mode from bench/stack.py — a scratch Postgres database, a `chroma run`, one
`deskmate serve` replica (it indexes the bundled KB) and one `deskmate worker`. POST /chat on the replica,
one client, the question mix of bench/chat_latency.py (no LLM): --requests turns with the worker idle, then the
manual is uploaded to the replica (POST /documents → an index_upload job the worker runs) and turns go on until
the job ends. Prints p50/p95 of both phases, and the job's chunks/s (its own started → finished time, in the
worker). What it shows: the replica keeps its chat latency while indexing runs in another process — on this
2-core machine the two still share the cores, so some rise is the machine, not the design.
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
    parser.add_argument(
        "--data",
        type=Path,
        default=Path(os.environ.get("EVAL_DATA", REPO.parent / "shared" / "data")),
        help="the evaluation data (for --jobs: techsupport_qa_emanual/s10_manual_corpus.json)",
    )
    parser.add_argument("--manual-mb", type=float, default=1.6, help="--jobs: the manual's size in MB")
    parser.add_argument(
        "--replica",
        action="store_true",
        help="--jobs: chat p50/p95 on a `deskmate serve` replica "
        "with a `deskmate worker` idle, then indexing the manual (server mode)",
    )
    parser.add_argument("--requests", type=int, default=100, help="--replica: chat turns with the worker idle")
    parser.add_argument("--backend", choices=("onnx", "torch"), default="onnx", help="the encoder the graph runs")
    parser.add_argument("--onnx-variant", default=None, help="DESKMATE_EMBEDDING_ONNX_VARIANT (default: the setting's)")
    args = parser.parse_args()
    if args.replica:
        return run_replica(args)
    if args.jobs:
        return run_jobs(args)

    from app.adapters.encoders import build_embedder
    from app.adapters.parsers import FileParser
    from app.adapters.vector_index import ChromaVectorIndex, make_client
    from app.indexing_service import supported_files
    from app.settings import Settings
    from core.errors import DocumentRejected
    from graphs.indexing import IndexingContext, build_indexing_graph

    files = supported_files(args.docs)
    if args.limit:
        files = files[: args.limit]
    settings = Settings(_env_file=None)
    variant = args.onnx_variant or settings.embeddings.embedding_onnx_variant
    embedder = build_embedder(args.backend, onnx_variant=variant)
    embedder.embed_documents(["warm up the encoder"] * 8)
    with tempfile.TemporaryDirectory() as tmp:
        index = ChromaVectorIndex(make_client("persistent", path=tmp), "bench_chunks")
        recorder = RecordingEmbedder(embedder)
        context = IndexingContext(
            embedder=recorder, index=index, parser=FileParser(), chunk_max_tokens=settings.ingestion.chunk_max_tokens
        )
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
    encoder_seconds = raw_seconds(embedder, texts)
    if args.backend == "torch":
        torch_seconds = encoder_seconds
    else:
        torch_encoder = build_embedder("torch")
        torch_encoder.embed_documents(["warm up the encoder"] * 8)
        torch_seconds = raw_seconds(torch_encoder, texts)

    n = len(texts)
    graph_rate, encoder_rate, torch_rate = n / graph_seconds, n / encoder_seconds, n / torch_seconds
    name = f"{args.backend}{'-' + variant if args.backend == 'onnx' else ''}"
    print(f"files={len(files)} (refused {failed}) chunks={n} bytes={sum(len(d) for _, d in payloads):,}")
    print(f"cores {os.cpu_count()}, load average {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"indexing graph ({name}): {graph_seconds:7.2f} s  {graph_rate:6.1f} chunks/s  (parse, chunk, embed, store)")
    print(f"raw encoder ({name})   : {encoder_seconds:7.2f} s  {encoder_rate:6.1f} chunks/s  (same chunk texts)")
    print(f"raw torch encoder       : {torch_seconds:7.2f} s  {torch_rate:6.1f} chunks/s  (same texts, batch 32)")
    print(f"graph / its encoder     : {graph_rate / encoder_rate:.2f} x   (target >= 0.90)")
    print(f"graph / raw torch       : {graph_rate / torch_rate:.2f} x   (target >= 2)")
    return 0


def raw_seconds(embedder, texts: list[str]) -> float:
    """Seconds `embedder` takes for `texts` in batches of 32 (the indexing graph's batch)."""
    started = time.perf_counter()
    for i in range(0, len(texts), 32):
        embedder.embed_documents(texts[i : i + 32])
    return time.perf_counter() - started


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
        sections = [
            f"## Procedure {n}\n\n"
            + " ".join(f"Check relay {k} of cabinet {n} and note its reading." for k in range(12))
            for n in range(500)
        ]
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
            recorder.first_started = None
            started = started_at = time.perf_counter()
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
        embedder.embed_documents(texts[i : i + 32])
    encoder_seconds = time.perf_counter() - started
    n = len(texts)
    job_rate, encoder_rate = n / job_seconds, n / encoder_seconds
    before, embedding = recorder.first_started - started_at, recorder.last_ended - recorder.first_started
    after = job_seconds - before - embedding
    print(
        f"manual: {len(manual):,} bytes ({origin}); chunks={n}; job progress {job['progress_done']}/"
        f"{job['progress_total']}"
    )
    print(
        f"upload job     : {job_seconds:7.2f} s  {job_rate:6.1f} chunks/s  (store + queue, claim, parse, chunk, "
        "embed, store, heartbeats)"
    )
    print(f"raw encoder    : {encoder_seconds:7.2f} s  {encoder_rate:6.1f} chunks/s  (same chunk texts, batch 32)")
    print(f"ratio          : {job_rate / encoder_rate:.2f} x   (target >= 0.90)")
    print(
        f"the job's time : {before:.2f} s before its first encoder batch (store, queue, claim, parse, chunk), "
        f"{embedding:.2f} s from first to last batch, {after:.2f} s after it (the rest of the writes, the switch, "
        "the outcome)"
    )
    return 0


def run_replica(args) -> int:
    """Chat p50/p95 on a replica with the worker idle, then while the worker indexes the manual."""
    import statistics

    import httpx

    sys.path.insert(0, str(REPO / "bench"))
    from chat_latency import Results, client_loop, percentile
    from stack import server_mode

    manual, origin = manual_text(args.data, args.manual_mb)
    print(
        f"server mode: 1 replica + 1 worker, Postgres, chroma run; {os.cpu_count()} cores; manual "
        f"{len(manual):,} bytes ({origin})",
        flush=True,
    )
    with (
        tempfile.TemporaryDirectory(prefix="deskmate-replica-") as tmp,
        server_mode(Path(tmp), 1, {"DESKMATE_JOB_LEASE_S": "30"}, workers=1) as stack,
    ):
        url = stack.urls[0]
        client_loop([url], 10, 0, Results())  # warm-up: models, caches, pooled connections
        idle = Results()
        load_idle = os.getloadavg()[0]
        client_loop([url], args.requests, 0, idle)
        with httpx.Client(base_url=url, timeout=120) as http:
            accepted = http.post("/documents", files={"file": ("manual.md", manual, "text/markdown")})
            if accepted.status_code != 202:
                print(f"the upload was refused: {accepted.status_code} {accepted.text[:300]}")
                return 1
            job_id = accepted.json()["job"]["id"]
            busy, offset = Results(), 0
            while (job := http.get(f"/jobs/{job_id}").json())["state"] in ("queued", "running"):
                if job["state"] == "running":  # turns while the worker indexes (not while it waits to claim)
                    client_loop([url], 10, offset, busy)
                    offset += 10
                else:
                    time.sleep(0.1)
            load_busy = os.getloadavg()[0]
        import psycopg

        with psycopg.connect(stack.database_url, connect_timeout=5) as conn:  # the row's own times, to the ms
            started, finished = conn.execute(
                "SELECT started_at, finished_at FROM jobs WHERE id = %s", (job_id,)
            ).fetchone()
    if job["state"] != "done":
        print(f"the job ended {job['state']}: {job['error']}")
        return 1
    seconds = finished - started
    chunks = job["progress"]["total"]
    for label, results, load in (("worker idle", idle, load_idle), ("worker indexing", busy, load_busy)):
        latencies = results.latencies or [float("nan")]
        print(
            f"replica chat, {label:<15}: n={len(results.latencies):4d}  p50 {statistics.median(latencies):7.1f} ms"
            f"  p95 {percentile(latencies, 95):7.1f} ms  errors {len(results.errors)}  (load {load:.2f})"
        )
        for error in results.errors[:3]:
            print("   ", error)
    print(
        f"upload job on the worker     : {chunks} chunks in {seconds:.1f} s = {chunks / seconds:.1f} chunks/s "
        f"(claim, parse, chunk, embed, store)"
    )
    print(
        f"machine load average at the end: {', '.join(f'{x:.2f}' for x in os.getloadavg())} "
        f"(other programs share these {os.cpu_count()} cores)"
    )
    return 0


class RecordingEmbedder:
    """Passes through to the real embedder and keeps the texts, so the encoder run uses the same chunks."""

    def __init__(self, inner) -> None:
        self._inner = inner
        self.dimension = inner.dimension
        self.texts: list[str] = []

    def embed_documents(self, texts):
        self.texts.extend(texts)
        self.first_started = getattr(self, "first_started", None) or time.perf_counter()
        vectors = self._inner.embed_documents(texts)
        self.last_ended = time.perf_counter()
        return vectors

    def embed_query(self, text):
        return self._inner.embed_query(text)

    def count_tokens(self, text):
        return self._inner.count_tokens(text)


if __name__ == "__main__":
    raise SystemExit(main())
