"""Answer confidence: does the knowledge base answer this, and how likely is the answer right?

A fixed minimum on one chunk's score is neither: a question with rare words scores low against the right
article, and a question about a product the knowledge base never mentions can score high against a wrong one.
Here the evidence is gathered per article:

- `article`: the article's score (its best chunk's fused dense + BM25 score, plus a share of its second best);
- `dense`: the best chunk's cosine similarity to the question;
- `margin`: how far the article leads the next one;
- `coverage`: the share of the question's words (IDF-weighted) found anywhere in the article;
- `unseen`: the share of the question's words found nowhere in the knowledge base (a product it does not cover).

Two logistic models read them. `answerable` is the probability that the knowledge base answers the question at
all; deskmate answers at or above the threshold and says it did not find it below. `confidence` is the
probability that the answer given is right: answerable × the probability that the best article is the right
one when the knowledge base does answer. So "0.72" reads as "right about 7 times in 10" on data like the data
the models were fitted on. Both, and the threshold, are fitted on development data by
`bench/fit_confidence.py` (which prints the calibration tables) and stored in `confidence_model.json`.
Pure functions.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Mapping, Sequence

from core.records import QueryCoverage
from nodes.support.compose import ArticleHits

FEATURES: tuple[str, ...] = ("article", "dense", "margin", "coverage", "unseen")
MODEL_FILE = Path(__file__).with_name("confidence_model.json")
# log-odds taken off `answerable` when the question has a word foreign to the knowledge base (foreign_penalty): the
# log of how much likelier such a word is in an unanswerable question than in an answerable one. Dev sets
# (bench/abstention_evidence.py): 6 of 40 unanswerable questions have one, 0 of 160 answerable ones; with one added
# to each count that is a ratio of ~27 (log 3.3). After it, only `answerable` ≥ .966 still reaches the .583 threshold.
FOREIGN_PENALTY = 3.0
# log-odds taken off an article written for computers only when the question is about a phone or tablet
# (nodes/support/device_fit.py): the article says nothing of the device asked about, however well its words match
# ("change the notification sound on my iphone" and a desktop page's "Change notification sound"); twice the foreign
# word's, so that only an article answerable beyond .998 still reaches the threshold
DEVICE_PENALTY = 6.0
# log-odds taken off an article about a fix the employee says they already tried (nodes/support/tried_fixes.py:
# "reinstalling didn't help" and the app's install guide): as a foreign word's, so strong evidence still answers
TRIED_PENALTY = 3.0


@dataclass(frozen=True)
class Logistic:
    """σ(bias + Σ weight·feature)."""

    weights: Mapping[str, float]
    bias: float

    def __call__(self, features: Mapping[str, float]) -> float:
        z = self.bias + sum(w * float(features.get(name, 0.0)) for name, w in self.weights.items())
        return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))


@dataclass(frozen=True)
class Assessment:
    answerable: float  # the knowledge base answers the question (compared with the threshold)
    confidence: float  # the answer given is right


@dataclass(frozen=True)
class ConfidenceModel:
    answerable: Logistic
    precision: Logistic  # the best article is right, given that the knowledge base answers
    threshold: float  # the answer/abstain cut-off on `answerable`, chosen on development data
    # where the fitting collection's unanswered probes land (nodes/support/calibration.py); None: no per-collection shift
    null_reference: float | None = None

    def assess(self, features: Mapping[str, float]) -> Assessment:
        answerable = self.answerable(features)
        return Assessment(round(answerable, 4), round(answerable * self.precision(features), 4))

    @classmethod
    def from_json(cls, data: Mapping) -> ConfidenceModel:
        return cls(
            Logistic(data["answerable"]["weights"], data["answerable"]["bias"]),
            Logistic(data["precision"]["weights"], data["precision"]["bias"]),
            float(data["threshold"]),
            float(data["null_reference"]) if data.get("null_reference") is not None else None,
        )


@lru_cache(maxsize=1)
def default_model() -> ConfidenceModel:
    return ConfidenceModel.from_json(json.loads(MODEL_FILE.read_text(encoding="utf-8")))


def foreign_penalty(assessment: Assessment, foreign: int, penalty: float = FOREIGN_PENALTY) -> Assessment:
    """The assessment of a question with `foreign` words (nodes/support/foreign_terms.py: words the knowledge base
    holds in no form and that are no ordinary English word, most often another product's name): `answerable`
    moved down by `penalty` on the log-odds scale, `confidence` with it. A strong match still answers (a
    question can name another product in passing); an ordinary one falls below the threshold."""
    if foreign <= 0 or assessment.answerable <= 0.0:
        return assessment
    p = min(assessment.answerable, 1.0 - 1e-9)
    answerable = 1.0 / (1.0 + math.exp(-(math.log(p / (1.0 - p)) - penalty)))
    precision = assessment.confidence / assessment.answerable
    return Assessment(round(answerable, 4), round(answerable * precision, 4))


def evidence_score(article: ArticleHits) -> float:
    """The article's score as retrieval evidence: without the factor its title's match gave it
    (nodes/support/retrieval.py prefer_title_match), which ranks articles but says nothing of whether the knowledge
    base answers. An article's chunks share its title, so they share the factor."""
    return round(article.score / float(article.hits[0].get("title_boost", 1.0)), 4)


def article_features(
    articles: Sequence[ArticleHits], coverage: QueryCoverage | None, rank: int = 0
) -> dict[str, float]:
    """The evidence for `articles[rank]` (a search's chunks grouped by article, best first)."""
    scores = [evidence_score(a) for a in articles]
    others = [s for i, s in enumerate(scores) if i != rank]
    best = articles[rank].hits[0]
    return {
        "article": scores[rank],
        "dense": float(best.get("dense_score", best["score"])),
        "margin": round(scores[rank] - (max(others) if others else 0.0), 4),
        "coverage": coverage.documents.get(articles[rank].doc_id, 0.0) if coverage else 0.0,
        "unseen": coverage.unseen if coverage else 0.0,
    }
