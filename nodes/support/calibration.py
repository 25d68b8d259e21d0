"""The answer threshold of one collection, calibrated on that collection's own score distribution.

The confidence model (nodes/support/confidence.py) was fitted on development collections; its scores move with
the collection: short FAQ pages score lower against the right question than long articles do, and a collection
of one product's pages scores every question about that product high, answered or not. So each collection
measures where its own *unanswered* questions land:

- a probe is one of its documents' titles (what the page answers, in a few words) searched against the
  collection **without that document**, exactly as a chat turn searches; the best remaining article's
  `answerable` is what this collection gives an on-topic question it has no page for;
- the threshold moves by how far this collection's null quantile sits from the one measured on the fitting
  collection (`ConfidenceModel.null_reference`), within ±MAX_SHIFT.

A collection whose unanswered probes score high (one product, near-duplicate pages) gets a higher threshold; one
whose probes score low (short FAQ pages) a lower one, so the right page found is not declined. Probes are chosen
by document id (a content hash: a fixed, spread sample) and recomputed when the collection's documents change,
at most once per RECHECK_S.
"""

from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

from nodes.support.article_answer import assess
from nodes.support.retrieval import search_chunks

if TYPE_CHECKING:
    from graphs.support import SupportContext

PROBES = 40  # documents probed per collection
MIN_PROBES = 8  # fewer documents than this: too few to measure, the model's own threshold stands
NULL_QUANTILE = 0.5  # the median: higher quantiles saturate near 1 on a collection of near-duplicate articles
MAX_SHIFT = 0.15  # the threshold moves at most this far from the model's
RECHECK_S = 60.0  # a changed collection is re-measured at most this often


@dataclass(frozen=True)
class Calibration:
    threshold: float
    null_quantile: float  # of the probes' `answerable` (nan: not measured)
    probes: int


def quantile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    position = q * (len(ordered) - 1)
    low, high = math.floor(position), math.ceil(position)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def probe_scores(ctx: SupportContext, limit: int = PROBES) -> list[float]:
    """`answerable` of the best article for each probe (a document's title, that document left out)."""
    documents = sorted(ctx.index.list_documents(), key=lambda d: d["doc_id"])[:limit]
    scores = []
    for document in documents:
        title = (document.get("title") or "").strip()
        if not title:
            continue
        hits = search_chunks(ctx, title, ctx.embedder.embed_query(title), k=ctx.candidate_k, groups=None)
        others = [h for h in hits if h["doc_id"] != document["doc_id"]]
        articles = assess(ctx, title, others) if others else []
        scores.append(articles[0]["answerable"] if articles else 0.0)
    return scores


def calibrate(ctx: SupportContext, base: float) -> Calibration:
    """The collection's threshold: `base` moved by its null quantile's distance from the model's reference."""
    model = ctx.confidence_model
    reference = getattr(model, "null_reference", None)
    if model is None or reference is None:
        return Calibration(base, float("nan"), 0)
    scores = probe_scores(ctx)
    if len(scores) < MIN_PROBES:
        return Calibration(base, float("nan"), len(scores))
    null = quantile(scores, NULL_QUANTILE)
    shift = max(-MAX_SHIFT, min(MAX_SHIFT, null - reference))
    return Calibration(round(base + shift, 4), round(null, 4), len(scores))


class CollectionCalibrator:
    """One collection's calibrated threshold, re-measured when its documents change (per process; nothing to
    persist: it is recomputed from the index)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._key: tuple | None = None
        self._checked = 0.0
        self._current: Calibration | None = None

    def threshold(self, ctx: SupportContext, base: float) -> float:
        return self.current(ctx, base).threshold

    def current(self, ctx: SupportContext, base: float) -> Calibration:
        now = time.monotonic()
        with self._lock:
            if self._current is not None and now - self._checked < RECHECK_S:
                return self._current
            key = tuple((d["doc_id"], d.get("version", "")) for d in ctx.index.list_documents())
            self._checked = now
            if self._current is None or key != self._key:
                self._current, self._key = calibrate(ctx, base), key
            return self._current
