"""Which retrieval evidence tells a question the knowledge base answers from one it does not, per dev set.

    python bench/abstention_evidence.py --data ../shared/data                  # both dev sets
    python bench/abstention_evidence.py --data ../shared/data --set docs       # one set
    python bench/abstention_evidence.py --data ../shared/data --no-perturb     # without the re-searches (faster)

Each set is served by the real app exactly as bench/dev_sets.py serves it (the set as the knowledge-base folder,
indexed at start-up, embedded defaults, offline), and every question is searched once through the retrieval
pipeline the retrieve node runs. For the best article, each candidate signal below is computed, and its AUC is
printed: the chance that a question whose best article is a right one scores higher than an unanswerable question
(0.5: no better than a coin, below 0.5: the signal is lower for the right ones; questions whose best article is
wrong are left out of the AUC and counted apart).

Signals (all from the collection itself, none names a product or an article):
- answerable: the confidence model's `answerable` (nodes/support/confidence.py), what deskmate compares with the
  threshold today; and its five features (article, dense, margin, coverage, unseen);
- dense_peak: the best chunk's cosine minus the mean of the next nine candidates' (a peaked ranking);
- dense_gap: the best article's best cosine minus the best cosine of any other article;
- agree_dense / agree_lexical: the best article is also the one holding the best dense / the best BM25 chunk;
- rare_in_article / rare_in_chunk: the IDF-weighted share of the question's rarer half of words (within the
  collection) that the article / its best chunk holds (the specific words of the question covered at all);
- vs_typical_query: the best chunk's cosine minus the question's mean cosine to its five nearest section headings
  of the collection (a heading is the collection's own in-domain query; on-topic but unanswered questions are
  close to many headings and to no section);
- no_foreign: minus the number of the question's words foreign to the knowledge base (nodes/support/foreign_terms.py:
  held in no form by any chunk, no ordinary English word, no misspelling); answerable_foreign: `answerable` after
  the penalty such a word brings (nodes/support/confidence.py foreign_penalty), what deskmate compares now;
- stability: the share of leave-one-word-out rewordings that keep the same best article (--no-perturb skips it).

Then the operating point of `answerable` and of `answerable_foreign`: at the model's threshold, and at the threshold that would abstain on 90 %
of the unanswerable questions, what share of the right-article answers would still be given.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
import tempfile
from pathlib import Path
from statistics import median

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from dev_sets import ADMIN_KEY, SETS, DevSet, stage  # noqa: E402

import app  # noqa: E402,F401  (offline defaults)

TARGET_ABSTENTION = 0.9
NEAREST_HEADINGS = 5


def auc(positives: list[float], negatives: list[float]) -> float:
    if not positives or not negatives:
        return float("nan")
    wins = sum(1.0 if p > n else 0.5 if p == n else 0.0 for p in positives for n in negatives)
    return wins / (len(positives) * len(negatives))


def cosine(a, b) -> float:
    import numpy as np

    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return float(a @ b / ((np.linalg.norm(a) * np.linalg.norm(b)) or 1.0))


class Collection:
    """What the signals read of the served collection: its chunks' terms and its section headings."""

    def __init__(self, ctx) -> None:
        import numpy as np

        from app.adapters.lexical_index import idf
        from core.text import Tokenizer

        self.ctx, self.tokenize = ctx, Tokenizer()
        self.doc_terms: dict[str, set[str]] = {}
        self.chunk_terms: dict[str, set[str]] = {}
        dfs: dict[str, int] = {}
        headings: set[str] = set()
        for document in ctx.index.list_documents():
            terms: set[str] = set()
            for chunk in ctx.lexical.document_chunks(document["doc_id"], None):
                held = set(self.tokenize(f"{chunk['title']} {chunk.get('section') or ''} {chunk['text']}"))
                self.chunk_terms[chunk["chunk_id"]] = held
                terms |= held
                for term in held:
                    dfs[term] = dfs.get(term, 0) + 1
                headings.add((chunk.get("section") or chunk["title"]).split(" > ")[-1].strip())
            self.doc_terms[document["doc_id"]] = terms
        n = len(self.chunk_terms)
        self.idf = {term: idf(n, df) for term, df in dfs.items()}
        vectors = np.array([ctx.embedder.embed_query(h) for h in sorted(h for h in headings if h)], dtype=float)
        self.headings = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)

    def best_article(self, text: str):
        from nodes.support.compose import rank_articles
        from nodes.support.retrieval import search_chunks

        embedding = self.ctx.embedder.embed_query(text)
        hits = search_chunks(self.ctx, text, embedding, k=self.ctx.candidate_k, groups=None)
        return embedding, hits, rank_articles(hits)

    def typical_similarity(self, embedding) -> float:
        import numpy as np

        query = np.asarray(embedding, dtype=float)
        similarities = self.headings @ (query / (np.linalg.norm(query) or 1.0))
        return float(np.sort(similarities)[-NEAREST_HEADINGS:].mean())


def signals(collection: Collection, text: str, perturb: bool) -> tuple[str, dict[str, float]] | None:
    """(the best article's source, its signals) for one question; None when the search finds nothing."""
    from nodes.support.confidence import article_features, foreign_penalty
    from nodes.support.foreign_terms import foreign_terms

    ctx = collection.ctx
    embedding, hits, articles = collection.best_article(text)
    if not articles:
        return None
    best = articles[0]
    coverage = ctx.lexical.query_coverage(text, [a.doc_id for a in articles[:3]])
    features = article_features(articles, coverage)
    values = dict(features, answerable=ctx.confidence_model.assess(features).answerable)
    foreign = foreign_terms(text, ctx.lexical.held_terms)
    values["no_foreign"] = -float(len(foreign))
    values["answerable_foreign"] = foreign_penalty(ctx.confidence_model.assess(features), len(foreign)).answerable
    dense = sorted((float(h.get("dense_score") or 0.0) for h in hits), reverse=True)
    own = max(float(h.get("dense_score") or 0.0) for h in best.hits)
    others = [float(h.get("dense_score") or 0.0) for h in hits if h["doc_id"] != best.doc_id]
    values["dense_peak"] = own - (sum(dense[1:10]) / len(dense[1:10]) if dense[1:10] else 0.0)
    values["dense_gap"] = own - (max(others) if others else 0.0)
    values["agree_dense"] = float(max(hits, key=lambda h: h.get("dense_score") or 0.0)["doc_id"] == best.doc_id)
    values["agree_lexical"] = float(max(hits, key=lambda h: h.get("lexical_score") or 0.0)["doc_id"] == best.doc_id)
    terms = [t for t in dict.fromkeys(collection.tokenize(text)) if t in collection.idf]
    weights = sorted(collection.idf[t] for t in terms)
    rare = [t for t in terms if weights and collection.idf[t] >= weights[len(weights) // 2]]
    total = sum(collection.idf[t] for t in rare) or 1.0
    article_terms = collection.doc_terms.get(best.doc_id, set())
    chunk_terms = collection.chunk_terms.get(best.hits[0]["chunk_id"], set())
    values["rare_in_article"] = sum(collection.idf[t] for t in rare if t in article_terms) / total
    values["rare_in_chunk"] = sum(collection.idf[t] for t in rare if t in chunk_terms) / total
    values["vs_typical_query"] = own - collection.typical_similarity(embedding)
    if perturb:
        words = re.findall(r"\S+", text)
        kept = []
        for n, word in enumerate(words):
            if collection.tokenize(word):
                _, _, reworded = collection.best_article(" ".join(words[:n] + words[n + 1 :]))
                kept.append(bool(reworded) and reworded[0].doc_id == best.doc_id)
        values["stability"] = sum(kept) / len(kept) if kept else 1.0
    return best.source, values


def measure(data: Path, dev: DevSet, perturb: bool) -> tuple[list[dict], float]:
    """Per question: answerable, right (the best article is a gold one) and the signals; and the model threshold."""
    from fastapi.testclient import TestClient

    from app.main import create_app

    questions = [json.loads(line) for line in (data / dev.folder / "questions.jsonl").read_text().splitlines() if line]
    rows = []
    with tempfile.TemporaryDirectory(prefix=f"evidence-{dev.key}-") as tmp:
        kb = stage(data, dev, Path(tmp))
        os.environ.update(
            {
                "DESKMATE_DATA_DIR": str(Path(tmp) / "data"),
                "DESKMATE_KB_DIR": str(kb),
                "DESKMATE_ADMIN_KEY": ADMIN_KEY,
                "DESKMATE_LOG_LEVEL": "WARNING",
            }
        )
        with TestClient(create_app(), base_url="http://localhost") as client:
            ctx = client.app.state.resources.retrieval_context
            collection = Collection(ctx)
            threshold = ctx.confidence_model.threshold
            for question in questions:
                found = signals(collection, question["question"], perturb)
                if found is None:
                    continue
                source, values = found
                gold = question.get(dev.gold_field) or []
                rows.append(
                    {
                        "id": question["id"],
                        "answerable": question["answerable"],
                        "right": Path(source).name in gold,
                        "signals": values,
                    }
                )
    return rows, threshold


def report(key: str, rows: list[dict], threshold: float) -> None:
    right = [r["signals"] for r in rows if r["answerable"] and r["right"]]
    wrong = [r for r in rows if r["answerable"] and not r["right"]]
    unanswerable = [r["signals"] for r in rows if not r["answerable"]]
    print(f"\n== {key}: {len(right)} right best article, {len(wrong)} wrong, {len(unanswerable)} unanswerable ==")
    print(f"{'signal':<18} {'AUC':>6} {'right p50':>10} {'unans p50':>10}")
    for name in right[0] if right else []:
        positives, negatives = [s[name] for s in right], [s[name] for s in unanswerable]
        print(f"{name:<18} {auc(positives, negatives):6.3f} {median(positives):10.3f} {median(negatives):10.3f}")
    for score in ("answerable", "answerable_foreign"):
        scores = sorted(s[score] for s in unanswerable)
        # the lowest cut that declines ceil(90 %) of the unanswerable questions: just above the last of them it must
        # decline
        needed = scores[math.ceil(TARGET_ABSTENTION * len(scores)) - 1] + 1e-4 if scores else threshold
        for label, cut in (("model threshold", threshold), (f"abstention {TARGET_ABSTENTION:.2f}", needed)):
            kept = sum(s[score] >= cut for s in right) / max(1, len(right))
            abstained = sum(s[score] < cut for s in unanswerable) / max(1, len(unanswerable))
            print(
                f"{score:<18} at {label:<18} (≥ {cut:.3f}): abstention {abstained:.3f}, right answers kept {kept:.3f}"
            )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, required=True, help="../shared/data")
    parser.add_argument("--set", choices=[*SETS, "both"], default="both")
    parser.add_argument("--no-perturb", action="store_true", help="skip the leave-one-word-out re-searches")
    parser.add_argument("--rows", type=Path, help="also write every question's signals to this JSON file")
    args = parser.parse_args()
    every = {}
    for key in list(SETS) if args.set == "both" else [args.set]:
        rows, threshold = measure(args.data, SETS[key], not args.no_perturb)
        report(key, rows, threshold)
        every[key] = rows
    if args.rows:
        args.rows.write_text(json.dumps(every, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
