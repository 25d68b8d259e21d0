"""A knowledge base's vectors all come from one encoder: the one it records, or all re-embedded at start-up.

Vectors of the torch encoder and of an ONNX one (or of two ONNX precisions) are close but not the same, and
a search compares a question's vector with the chunks'; so the collection records the encoder that wrote it
(`ChromaVectorIndex.record_encoder`), and when the service starts with another one
(DESKMATE_EMBEDDING_BACKEND, DESKMATE_EMBEDDING_ONNX_VARIANT changed), every chunk is embedded again from its
stored text before the first question is searched. The record changes only after the last chunk, so a start
stopped half-way re-embeds again on the next one; it never serves a mix.
"""

from __future__ import annotations

import logging
import time

log = logging.getLogger(__name__)


def match_encoder(vector_index, embedder, collection: str) -> int:
    """Re-embed `vector_index` when its recorded encoder is not `embedder`'s; the number of chunks re-embedded.
    An embedder that does not name its encoder (a test double) leaves the record alone."""
    encoder = getattr(embedder, "encoder", None)
    if encoder is None:
        return 0
    recorded = vector_index.recorded_encoder()
    if recorded == encoder:
        return 0
    if recorded is None:  # empty: its first vectors will be this encoder's
        vector_index.record_encoder(encoder)
        return 0
    log.warning("collection %s holds %s vectors; re-embedding every chunk with %s", collection, recorded, encoder)
    started = time.monotonic()
    count = vector_index.reembed(embedder.embed_documents)
    vector_index.record_encoder(encoder)
    log.warning(
        "collection %s: %d chunks re-embedded with %s in %.1f s", collection, count, encoder, time.monotonic() - started
    )
    return count
