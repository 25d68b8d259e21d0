"""Knowledge gaps: the questions deskmate could not answer (or answered Not helpful), grouped by meaning.

The questions are embedded with the app's own embedder (the model the knowledge base is searched with) and
clustered by scikit-learn's agglomerative clustering on cosine distance, with a distance threshold rather
than a number of clusters: paraphrases of one missing topic fall together, unrelated questions stay apart,
however many topics there are. A cluster is shown only when it holds at least MIN_QUESTIONS questions from
at least MIN_ASKERS people (with sign-in off, each conversation counts as one): no single person's question
is put on a dashboard."""

from __future__ import annotations

import hashlib
import threading
from collections import Counter, OrderedDict
from collections.abc import Sequence

import numpy as np

from core.lexicon import content_words, strip_placeholders
from core.ports import Embedder

MIN_QUESTIONS = 3
MIN_ASKERS = 2
MAX_QUESTIONS = 1000  # the newest questions of the window that are clustered
MAX_CLUSTERS = 20
EXAMPLES = 3
LABEL_WORDS = 4
# average-linkage cosine distance under which two groups of questions are one topic (1 − similarity).
# MiniLM puts paraphrases of one request at 0.25–0.5 of each other and different IT topics beyond 0.7.
DISTANCE_THRESHOLD = 0.55
_CACHE_SIZE = 5000


class _VectorCache:
    """Question vectors by content hash, bounded (the dashboard is reloaded with mostly the same questions)."""

    def __init__(self, size: int = _CACHE_SIZE) -> None:
        self._size = size
        self._vectors: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def vectors(self, embedder: Embedder, texts: Sequence[str]) -> np.ndarray:
        """One unit vector per text, each text embedded once while it stays in the cache."""
        keys = [hashlib.sha256(t.encode()).hexdigest() for t in texts]
        with self._lock:
            found = {k: self._vectors[k] for k in keys if k in self._vectors}
        missing = {k: t for k, t in zip(keys, texts, strict=True) if k not in found}
        if missing:
            fresh = embedder.embed_documents(list(missing.values()))
            found |= {k: _unit(v) for k, v in zip(missing, fresh, strict=True)}
        with self._lock:
            for key in keys:
                self._vectors[key] = found[key]
                self._vectors.move_to_end(key)
            while len(self._vectors) > self._size:
                self._vectors.popitem(last=False)
        return np.stack([found[k] for k in keys])


_cache = _VectorCache()


def _unit(vector: Sequence[float]) -> np.ndarray:
    array = np.asarray(vector, dtype=np.float32)
    norm = float(np.linalg.norm(array))
    return array / norm if norm else array


def cluster_labels(vectors: np.ndarray, threshold: float = DISTANCE_THRESHOLD) -> list[int]:
    """A cluster number per vector (unit vectors, one per row)."""
    if len(vectors) == 0:
        return []
    if len(vectors) == 1:
        return [0]
    from sklearn.cluster import AgglomerativeClustering

    model = AgglomerativeClustering(n_clusters=None, distance_threshold=threshold, metric="cosine", linkage="average")
    return [int(label) for label in model.fit_predict(vectors)]


def label_of(questions: Sequence[str]) -> str:
    """The words the cluster's questions share most, in their order of frequency ("book meeting room")."""
    counts: Counter[str] = Counter()
    for question in questions:
        counts.update(set(content_words(strip_placeholders(question))))
    common = [w for w, n in counts.most_common() if n >= max(2, len(questions) // 2)][:LABEL_WORDS]
    return " ".join(common) if common else strip_placeholders(questions[0])[:60]


def trend_of(days: Sequence[int], first_day: int, last_day: int) -> dict:
    """Questions in the window's first half against its second half: rising, falling or steady."""
    middle = first_day + (last_day - first_day + 1) / 2
    earlier = sum(1 for d in days if d < middle)
    later = len(days) - earlier
    direction = "rising" if later > earlier * 1.5 else "falling" if earlier > later * 1.5 else "steady"
    return {"earlier": earlier, "later": later, "direction": direction}


def knowledge_gaps(
    rows: Sequence[dict],
    embedder: Embedder,
    *,
    first_day: int,
    last_day: int,
    min_questions: int = MIN_QUESTIONS,
    min_askers: int = MIN_ASKERS,
    threshold: float = DISTANCE_THRESHOLD,
) -> list[dict]:
    """Clusters of the gap questions (`rows`: question, asker, day), largest first, each with a label, its size,
    how many people asked, its trend and EXAMPLES example questions (the ones nearest its centre)."""
    rows = [r for r in rows[:MAX_QUESTIONS] if (r.get("question") or "").strip()]
    if len(rows) < min_questions:
        return []
    vectors = _cache.vectors(embedder, [r["question"] for r in rows])
    labels = cluster_labels(vectors, threshold)
    members: dict[int, list[int]] = {}
    for i, label in enumerate(labels):
        members.setdefault(label, []).append(i)
    clusters = []
    for indexes in members.values():
        askers = {rows[i]["asker"] for i in indexes}
        if len(indexes) < min_questions or len(askers) < min_askers:
            continue
        centre = _unit(vectors[indexes].mean(axis=0))
        nearest = sorted(indexes, key=lambda i: -float(vectors[i] @ centre))
        examples = list(dict.fromkeys(rows[i]["question"] for i in nearest))[:EXAMPLES]
        questions = [rows[i]["question"] for i in indexes]
        clusters.append(
            {
                "label": label_of(questions),
                "size": len(indexes),
                "askers": len(askers),
                "trend": trend_of([rows[i]["day"] for i in indexes], first_day, last_day),
                "examples": examples,
            }
        )
    clusters.sort(key=lambda c: (-int(c["size"]), str(c["label"])))  # type: ignore[call-overload]  # rows of mixed values
    return clusters[:MAX_CLUSTERS]


def article_draft(cluster: dict) -> str:
    """A Markdown skeleton for the article a gap cluster asks for, ready to fill in and upload."""
    title = cluster["label"][:1].upper() + cluster["label"][1:]
    asked = "\n".join(f"- {q}" for q in cluster["examples"])
    return (
        f"# {title}\n\n"
        f"<!-- {cluster['size']} questions from {cluster['askers']} people went unanswered, for example: -->\n\n"
        f"People asked:\n\n{asked}\n\n"
        "## Before you start\n\nWhat the reader needs (access, device, permissions).\n\n"
        "## Steps\n\n1. First step.\n2. Second step.\n3. Third step.\n\n"
        "## If it does not work\n\nWhat to check, and when to contact the service desk.\n"
    )
