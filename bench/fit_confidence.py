"""Fit the answer-confidence model (nodes/support/confidence.py) on development data and print its calibration.

    python bench/fit_confidence.py --data ../shared/data                 # fit, report, write the model file
    python bench/fit_confidence.py --data ../shared/data --dry-run       # report only
    python bench/fit_confidence.py --data ../shared/data --store DIR     # keep the indexed KBs between runs

Development sets only (never a test split): the Microsoft support articles of `it_kb_msdocs_dev` with their 100
questions (20 unanswerable), and the TV e-manual's tv-dev questions. Each question is searched through the real
retrieval pipeline (nodes/support/retrieval.py, as the retrieve node runs it) and its evidence features are computed by
nodes/support/confidence.py; the label is whether the best article is a right one. Questions about the other knowledge
base are added as unanswerable (TV questions against the Office articles and the reverse): a question about a
product the knowledge base does not cover is the commonest unanswerable question at a help desk.

Two logistic regressions (L2, scikit-learn), weighted per set (SET_WEIGHTS): `answerable` (the knowledge base
answers the question; all questions) and `precision` (the best article is right; answerable questions only);
confidence = answerable × precision. The answer threshold on `answerable` is half-way between the highest that
still answers 90 % of the answerable Office questions and the lowest that abstains on 90 % of the unanswerable
ones, both read from 5-fold cross-validated scores (each question scored by models fitted without it).
Printed: the weights, calibration tables (predicted vs observed by bin, per set, in-sample and cross-validated),
Brier scores, and the answer / abstention rates at the threshold.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import app  # noqa: E402,F401  (offline defaults)

MSDOCS = "it_kb_msdocs_dev"
TV = "techsupport_qa_emanual"
TARGET_ANSWERING = 0.9
TARGET_ABSTENTION = 0.9
# how much each set weighs in the fit (each set's weight is shared by its examples): the Office articles are the
# kind of knowledge base deskmate serves, so they count most; the TV manual's sections are near-duplicates of each
# other, a different kind of "article"
SET_WEIGHTS = {"msdocs": 3.0, "tv-dev": 1.0, "msdocs-on-tv": 0.5, "tv-on-msdocs": 1.0}
PRECISION_WEIGHTS = {"msdocs": 1.0, "tv-dev": 1.0}  # the right-article model sees answerable questions only
FOLDS = 5


def examples(ctx, embedder, questions: list[tuple[str, set[str] | None]]) -> list[tuple[dict, int, int]]:
    """(features, right, answerable) per question; `gold` is the set of right article sources (None: the
    knowledge base does not answer it); right: the best article is one of them."""
    from nodes.support.compose import rank_articles
    from nodes.support.confidence import article_features
    from nodes.support.retrieval import search_chunks

    rows = []
    for text, gold in questions:
        hits = search_chunks(ctx, text, embedder.embed_query(text), k=ctx.candidate_k, groups=None)
        if not hits:
            rows.append(({}, 0, int(bool(gold))))
            continue
        articles = rank_articles(hits)
        coverage = ctx.lexical.query_coverage(text, [a.doc_id for a in articles[:3]])
        features = article_features(articles, coverage)
        rows.append((features, int(bool(gold) and articles[0].source in gold), int(bool(gold))))
    return rows


def load_sets(data: Path, settings, embedder, store: Path) -> dict[str, list[tuple[dict, int]]]:
    from kb_answers import build_kb, load_questions, support_context
    from retrieval import build_index, load_split, section_of  # noqa: F401

    ms_questions = load_questions(data / MSDOCS / "questions.jsonl")
    ms_index, _ = build_kb(data / MSDOCS / "corpus", settings, embedder, str(store / "msdocs"))
    ms_ctx = support_context(ms_index, embedder, settings)
    tv_corpus, tv_queries, tv_qrels = load_split(data / TV, "tv-dev")
    tv_path = store / "tv"
    if (tv_path / "chroma.sqlite3").exists():
        from app.adapters.lexical_index import HybridIndex
        from app.adapters.vector_index import ChromaVectorIndex, make_client

        tv_index = HybridIndex(ChromaVectorIndex(make_client("persistent", path=str(tv_path)), "bench_chunks"))
        tv_index.rebuild_lexical()
    else:
        _, tv_index = build_index(tv_corpus, settings, embedder, str(tv_path))
    tv_ctx = support_context(tv_index, embedder, settings)
    ms = [(q["question"], {f"kb/{f}" for f in q["gold_files"]} or None) for q in ms_questions]
    tv = [(text, {f"bench/{sid}.txt" for sid in tv_qrels[qid]}) for qid, text in tv_queries.items()]
    return {
        "msdocs": examples(ms_ctx, embedder, ms),
        "tv-dev": examples(tv_ctx, embedder, tv),
        "msdocs-on-tv": examples(tv_ctx, embedder, [(t, None) for t, g in ms if g]),
        "tv-on-msdocs": examples(ms_ctx, embedder, [(t, None) for t, _ in tv]),
    }


def matrix(rows, features, label: int = 1):
    """Feature matrix and labels (`label` 1: right article, 2: answerable)."""
    import numpy as np

    return (
        np.array([[r[0].get(f, 0.0) for f in features] for r in rows], dtype=float),
        np.array([r[label] for r in rows], dtype=int),
    )


def fit(
    sets: dict[str, list],
    features,
    c: float,
    leave_out: tuple[str, set[int]] | None = None,
    label: int = 2,
    weights: dict[str, float] | None = None,
):
    """Weighted logistic regression over the sets; `leave_out` = (set name, indices) held out of the fit.
    label 2 fits `answerable` on every question; label 1 fits `precision` on the answerable ones only."""
    import numpy as np
    from sklearn.linear_model import LogisticRegression

    weights = weights or SET_WEIGHTS
    xs, ys, ws = [], [], []
    for name, rows in sets.items():
        if leave_out and leave_out[0] == name:
            rows = [r for i, r in enumerate(rows) if i not in leave_out[1]]
        if label == 1:
            rows = [r for r in rows if r[2]]
        if not rows or not weights.get(name):
            continue
        x, y = matrix(rows, features, label)
        xs.append(x)
        ys.append(y)
        ws += [weights[name] / len(rows)] * len(rows)
    weights = np.array(ws) * len(ws) / sum(ws)
    return LogisticRegression(C=c, max_iter=3000).fit(np.vstack(xs), np.concatenate(ys), sample_weight=weights)


def cross_validated(sets: dict[str, list], features, c: float, name: str = "msdocs"):
    """Out-of-fold (answerable, confidence) for one set: each fold scored by models fitted without it."""
    import numpy as np

    rows = sets[name]
    answerable, confidence = np.zeros(len(rows)), np.zeros(len(rows))
    for fold in range(FOLDS):
        held = sorted(i for i in range(len(rows)) if i % FOLDS == fold)
        gate = fit(sets, features, c, leave_out=(name, set(held)))
        precision = fit(sets, features, c, leave_out=(name, set(held)), label=1, weights=PRECISION_WEIGHTS)
        x, _ = matrix([rows[i] for i in held], features)
        answerable[held] = gate.predict_proba(x)[:, 1]
        confidence[held] = answerable[held] * precision.predict_proba(x)[:, 1]
    return answerable, confidence


def calibration(predicted, observed, bins=5) -> list[tuple[str, int, float, float]]:
    """(bin, n, mean predicted, observed rate) per probability bin."""
    out = []
    for b in range(bins):
        lo, hi = b / bins, (b + 1) / bins
        members = [(p, y) for p, y in zip(predicted, observed) if lo <= p < hi or (b == bins - 1 and p == hi)]
        if members:
            out.append(
                (
                    f"{lo:.1f}-{hi:.1f}",
                    len(members),
                    sum(p for p, _ in members) / len(members),
                    sum(y for _, y in members) / len(members),
                )
            )
    return out


def print_calibration(title: str, predicted, observed) -> None:
    brier = sum((p - y) ** 2 for p, y in zip(predicted, observed)) / max(1, len(observed))
    print(f"{title}: Brier {brier:.3f}")
    for label, n, mean_p, rate in calibration(list(predicted), list(observed)):
        print(f"   p {label}: n={n:>4}  predicted {mean_p:.2f}  observed {rate:.2f}")


def choose_threshold(probabilities_pos: list[float], probabilities_neg: list[float]) -> float:
    """Half-way between the highest threshold that still answers TARGET_ANSWERING of the answerable questions
    and the lowest that abstains on TARGET_ABSTENTION of the unanswerable ones, so that both targets keep a
    margin on questions the fit never saw; the first alone when the two cross."""
    ordered = sorted(probabilities_pos)
    keep = ordered[int((1 - TARGET_ANSWERING) * len(ordered))] if ordered else 0.5
    negatives = sorted(probabilities_neg)
    abstain = negatives[min(len(negatives) - 1, int(TARGET_ABSTENTION * len(negatives)))] if negatives else 0.0
    return round((keep + abstain) / 2 if abstain < keep else keep, 4)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--store", type=Path, default=None, help="keep the indexed KBs here between runs")
    parser.add_argument("--c", type=float, default=1.0, help="inverse L2 strength")
    parser.add_argument(
        "--cache", type=Path, default=None, help="save the computed examples here, and reuse them when the file exists"
    )
    parser.add_argument("--dry-run", action="store_true", help="do not write nodes/support/confidence_model.json")
    args = parser.parse_args()

    from app.adapters.embeddings import SentenceTransformerEmbedder
    from app.settings import Settings
    from nodes.support.confidence import FEATURES, MODEL_FILE

    settings = Settings(_env_file=None)
    embedder = SentenceTransformerEmbedder()
    if args.cache and args.cache.exists():
        sets = {name: [tuple(row) for row in rows] for name, rows in json.loads(args.cache.read_text()).items()}
    else:
        with tempfile.TemporaryDirectory() as tmp:
            sets = load_sets(args.data, settings, embedder, args.store or Path(tmp))
        if args.cache:
            args.cache.write_text(json.dumps(sets))
    features = list(FEATURES)
    from nodes.support.confidence import ConfidenceModel, Logistic

    gate = fit(sets, features, args.c)
    precision = fit(sets, features, args.c, label=1, weights=PRECISION_WEIGHTS)
    parts = {
        name: {
            "weights": {f: round(float(w), 4) for f, w in zip(features, model.coef_[0])},
            "bias": round(float(model.intercept_[0]), 4),
        }
        for name, model in (("answerable", gate), ("precision", precision))
    }
    print(
        f"fitted on {sum(len(r) for r in sets.values())} questions; set weights {SET_WEIGHTS} (answerable), "
        f"{PRECISION_WEIGHTS} (precision)"
    )
    for name, part in parts.items():
        print(f"   {name}: bias {part['bias']}, weights {part['weights']}")
    model = ConfidenceModel(Logistic(**parts["answerable"]), Logistic(**parts["precision"]), 0.5)
    for name, rows in sets.items():
        assessed = [model.assess(f) for f, _, _ in rows]
        print(
            f"\n{name}: {len(rows)} questions, {sum(a for *_, a in rows)} answerable, {sum(r for _, r, _ in rows)} "
            f"with the right article first (in-sample)"
        )
        print_calibration("   answerable vs answerable", [a.answerable for a in assessed], [a for *_, a in rows])
        print_calibration("   confidence vs right", [a.confidence for a in assessed], [r for _, r, _ in rows])

    answerable, confidence = cross_validated(sets, features, args.c)
    rows = sets["msdocs"]
    print(f"\nmsdocs, {FOLDS}-fold cross-validated (each question scored by models that never saw it):")
    print_calibration("   answerable vs answerable", answerable, [a for *_, a in rows])
    print_calibration("   confidence vs right", confidence, [r for _, r, _ in rows])
    pos = [p for p, (*_, a) in zip(answerable, rows) if a]
    neg = [p for p, (*_, a) in zip(answerable, rows) if not a]
    threshold = choose_threshold(pos, neg)
    print(
        f"\nthreshold {threshold} on answerable (from the cross-validated scores): msdocs answerable answered "
        f"{sum(p >= threshold for p in pos) / len(pos):.3f}, unanswerable abstained "
        f"{sum(p < threshold for p in neg) / len(neg):.3f}"
    )
    for name in ("tv-dev", "msdocs-on-tv", "tv-on-msdocs"):
        scores = [model.assess(f).answerable for f, _, _ in sets[name]]
        print(f"   {name:<14} answered {sum(p >= threshold for p in scores) / len(scores):.3f}")
    if not args.dry_run:
        MODEL_FILE.write_text(
            json.dumps(
                {
                    "about": "Answer-confidence models fitted by bench/fit_confidence.py on development data; see that "
                    "script for how, and nodes/support/confidence.py for the features.",
                    "features": features,
                    **parts,
                    "threshold": threshold,
                    "fitted_on": {name: len(rows) for name, rows in sets.items()},
                },
                indent=2,
            )
            + "\n",
            encoding="utf-8",
        )
        print(f"wrote {MODEL_FILE}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
