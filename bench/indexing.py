"""Indexing throughput: chunks/s through the whole indexing graph vs the raw encoder on the same chunks.

    python bench/indexing.py                       # the bundled sample knowledge base (kb/)
    python bench/indexing.py --docs ../shared/data/it_kb_rtechsupport_wiki/docs   # a bigger real corpus

Both figures come from one run on the same chunk texts: first every file goes through
load → parse → chunk → embed → store into a fresh embedded Chroma, then the encoder alone embeds
the chunks that run produced. Model loading is excluded from both. Target: graph ≥ 0.9 × encoder.
"""

from __future__ import annotations

import argparse
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
    args = parser.parse_args()

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
