"""A collection's answer threshold, moved by where its own unanswered probes score (nodes/support/calibration.py)."""

from __future__ import annotations

import pytest

from nodes.support import calibration
from nodes.support.calibration import MAX_SHIFT, CollectionCalibrator, calibrate, probe_scores, quantile
from nodes.support.confidence import ConfidenceModel, Logistic

# answerable = the best article's fused score (a model that reads one feature), so the probes' scores are visible
ONE_FEATURE = Logistic({"article": 8.0}, -4.0)


@pytest.fixture(autouse=True)
def small_collection(monkeypatch):
    monkeypatch.setattr(calibration, "MIN_PROBES", 3)  # the fixture KB has a handful of documents


def model(reference: float | None) -> ConfidenceModel:
    return ConfidenceModel(ONE_FEATURE, ONE_FEATURE, threshold=0.5, null_reference=reference)


def test_a_collection_too_small_to_measure_keeps_the_models_threshold(fake_kb_context, monkeypatch):
    monkeypatch.setattr(calibration, "MIN_PROBES", 1000)
    assert calibrate(fake_kb_context(confidence_model=model(0.0)), 0.5).threshold == 0.5


def test_quantile_interpolates_between_the_ordered_values():
    assert quantile([0.1, 0.5, 0.3, 0.9], 0.5) == pytest.approx(0.4)
    assert quantile([0.2], 0.8) == 0.2
    assert quantile([], 0.8) != quantile([], 0.8)  # nan: nothing measured


def test_a_probe_never_finds_its_own_document(fake_kb_context):
    ctx = fake_kb_context()
    documents = ctx.index.list_documents()
    seen: list[set[str]] = []
    original = calibration.assess

    def watching(ctx, query, hits, prefer_doc=None):
        seen.append({h["doc_id"] for h in hits})
        return original(ctx, query, hits, prefer_doc)

    calibration.assess = watching
    try:
        scores = probe_scores(ctx)
    finally:
        calibration.assess = original
    assert len(scores) == len(documents) >= 3
    probed = sorted(documents, key=lambda d: d["doc_id"])
    assert all(doc["doc_id"] not in found for doc, found in zip(probed, seen))


def test_the_threshold_rises_where_unanswered_probes_score_above_the_reference_and_falls_where_below(
    fake_kb_context,
):
    null = quantile(probe_scores(fake_kb_context(confidence_model=model(None))), calibration.NULL_QUANTILE)
    higher = calibrate(fake_kb_context(confidence_model=model(null - 0.05)), 0.5)
    lower = calibrate(fake_kb_context(confidence_model=model(null + 0.05)), 0.5)
    assert higher.threshold == pytest.approx(0.55, abs=1e-3) and lower.threshold == pytest.approx(0.45, abs=1e-3)
    far = calibrate(fake_kb_context(confidence_model=model(null - 1.0)), 0.5)
    assert far.threshold == pytest.approx(0.5 + MAX_SHIFT)  # bounded
    assert calibrate(fake_kb_context(confidence_model=model(None)), 0.5).threshold == 0.5  # no reference: as fitted


def test_the_context_answers_with_the_collections_threshold_and_remeasures_when_its_documents_change(
    fake_kb_context, monkeypatch
):
    calibrator = CollectionCalibrator()
    null = quantile(probe_scores(fake_kb_context(confidence_model=model(None))), calibration.NULL_QUANTILE)
    ctx = fake_kb_context(confidence_model=model(null - 0.05), calibrator=calibrator)
    assert ctx.confidence_threshold() == pytest.approx(0.55, abs=1e-3)
    assert fake_kb_context(confidence_model=model(null), answer_threshold=0.7).confidence_threshold() == 0.7
    measured = []
    monkeypatch.setattr(
        calibration, "calibrate", lambda ctx, base: measured.append(1) or calibration.Calibration(0.6, 0.1, 9)
    )
    monkeypatch.setattr(calibration, "RECHECK_S", 0.0)
    assert ctx.confidence_threshold() == pytest.approx(0.55, abs=1e-3) and not measured  # nothing changed
    ctx.index.delete_document(ctx.index.list_documents()[0]["doc_id"])
    assert ctx.confidence_threshold() == 0.6 and measured == [1]
