"""FranqCalibrator variants on hand-built data: which claims each fit sees, and how."""
from __future__ import annotations

import json

import numpy as np
import pytest

from calibration.contract import ClaimInputs
from calibration.base import CalibratorFileError, NotFittedError
from calibration.franq import FranqCalibrator, franq_mix, log_scores
from calibration.isotonic import IsotonicCalibrator

STACK = {"model": "m1", "faithfulness": "lexical-v1", "uq_faith": "claim_prob",
         "uq_unfaith": "parametric", "prompt_version": "rag-v1", "mode": "long"}


def _claims(n=300, seed=0):
    rng = np.random.default_rng(seed)
    p_f = rng.random(n)
    a = rng.random(n) ** 3
    b = rng.random(n) ** 5
    y = (rng.random(n) < 0.8).astype(float)
    gold = np.where(rng.random(n) < 0.5, p_f > 0.3, np.nan)
    return p_f, a, b, y, gold


def test_condition_split_uses_gold_label_else_threshold():
    p_f, a, b, y, gold = _claims()
    labels = [None if np.isnan(g) else bool(g) for g in gold]
    cal = FranqCalibrator(variant="condition").fit(ClaimInputs(p_f, a, b), y, is_faithful=labels)
    faithful = np.where(np.isnan(gold), p_f > 0.5, gold == 1)
    ref_f = IsotonicCalibrator().fit(log_scores(a[faithful]), y[faithful])
    ref_u = IsotonicCalibrator().fit(log_scores(b[~faithful]), y[~faithful])
    grid = np.linspace(0, 1, 97)
    assert np.array_equal(cal.uq_faith_.predict(log_scores(grid)), ref_f.predict(log_scores(grid)))
    assert np.array_equal(cal.uq_unfaith_.predict(log_scores(grid)), ref_u.predict(log_scores(grid)))
    assert cal.counts_["faithful"]["n"] == faithful.sum()
    assert cal.counts_["unfaithful"]["n"] == (~faithful).sum()
    assert cal.counts_["split"] == {"gold": int((~np.isnan(gold)).sum()), "threshold": int(np.isnan(gold).sum())}


def test_condition_split_on_tiny_hand_built_set():
    # claim 0: gold faithful although p_f is low; claim 1: gold unfaithful although p_f is
    # high; claims 2-3: no gold label, split by p_f > 0.5.
    p_f = [0.1, 0.9, 0.8, 0.2]
    cal = FranqCalibrator(variant="condition", min_per_condition=1).fit(
        ClaimInputs(p_f, [0.5] * 4, [0.5] * 4), [1, 0, 1, 0], is_faithful=[True, False, None, None])
    assert cal.counts_["faithful"] == {"n": 2, "weight": 2.0, "true": 2.0, "false": 0.0}
    assert cal.counts_["unfaithful"] == {"n": 2, "weight": 2.0, "true": 0.0, "false": 2.0}
    p = cal.predict(ClaimInputs([0.5], [0.5], [0.5]))
    assert p[0] == pytest.approx(0.5 * 1.0 + 0.5 * 0.0)


def test_soft_variant_weights_each_claim_by_p_faithful():
    p_f, a, b, y, _ = _claims()
    w = np.random.default_rng(3).random(len(y))
    cal = FranqCalibrator(variant="soft").fit(ClaimInputs(p_f, a, b), y, sample_weight=w)
    ref_f = IsotonicCalibrator().fit(log_scores(a), y, sample_weight=w * p_f)
    ref_u = IsotonicCalibrator().fit(log_scores(b), y, sample_weight=w * (1 - p_f))
    assert np.array_equal(cal.uq_faith_.predict(log_scores(a)), ref_f.predict(log_scores(a)))
    assert np.array_equal(cal.uq_unfaith_.predict(log_scores(b)), ref_u.predict(log_scores(b)))
    assert cal.counts_["faithful"]["weight"] == pytest.approx((w * p_f).sum(), abs=1e-3)


def test_calibrated_variant_fits_both_on_all_claims():
    p_f, a, b, y, gold = _claims()
    cal = FranqCalibrator(variant="calibrated").fit(ClaimInputs(p_f, a, b), y, is_faithful=gold)
    ref = IsotonicCalibrator().fit(log_scores(a), y)
    assert np.array_equal(cal.uq_faith_.predict(log_scores(a)), ref.predict(log_scores(a)))
    assert cal.counts_["faithful"]["n"] == cal.counts_["unfaithful"]["n"] == len(y)


def test_none_variant_is_the_raw_mix():
    p_f, a, b, y, _ = _claims()
    cal = FranqCalibrator(variant="none").fit(ClaimInputs(p_f, a, b), y)
    assert np.array_equal(cal.predict(ClaimInputs(p_f, a, b)), franq_mix(p_f, a, b))


@pytest.mark.parametrize("variant", ["calibrated", "condition", "soft"])
def test_calibrated_outputs_are_monotone_in_each_uq_score(variant):
    p_f, a, b, y, gold = _claims()
    cal = FranqCalibrator(variant=variant).fit(ClaimInputs(p_f, a, b), y, is_faithful=gold)
    grid = np.linspace(0, 1, 201)
    fixed = np.full_like(grid, 0.3)
    assert np.all(np.diff(cal.predict(ClaimInputs(fixed, grid, fixed))) >= 0)
    assert np.all(np.diff(cal.predict(ClaimInputs(fixed, fixed, grid))) >= 0)


@pytest.mark.parametrize("variant", ["none", "calibrated", "condition", "soft"])
def test_franq_calibrator_json_round_trip_gives_identical_predictions(tmp_path, variant):
    p_f, a, b, y, gold = _claims()
    cal = FranqCalibrator(variant=variant, calibrate_faithfulness=True, fitted_for=STACK).fit(
        ClaimInputs(p_f, a, b), y, is_faithful=gold)
    cal.to_json(tmp_path / "c.json")
    back = FranqCalibrator.from_json(tmp_path / "c.json")
    q_f, qa, qb, _, _ = _claims(500, seed=9)
    x, z = cal.predict_components(ClaimInputs(q_f, qa, qb)), back.predict_components(ClaimInputs(q_f, qa, qb))
    for part in ("p_true", "p_true_if_supported", "p_true_if_unfaithful", "p_faithful"):
        assert np.array_equal(getattr(x, part), getattr(z, part))
    assert x.p_true_if_contradicted is None and x.p_true_if_not_mentioned is None  # binary: no such parts
    assert back.fitted_for == STACK and back.name == f"{variant}+faithfulness"


def test_faithfulness_calibration_is_off_by_default_and_needs_gold_labels():
    p_f, a, b, y, gold = _claims()
    assert FranqCalibrator().fit(ClaimInputs(p_f, a, b), y, is_faithful=gold).faithfulness_ is None
    with pytest.raises(ValueError, match="needs gold 'is_faithful' labels"):
        FranqCalibrator(calibrate_faithfulness=True).fit(ClaimInputs(p_f, a, b), y)


def test_empty_condition_is_an_error_naming_alternatives():
    with pytest.raises(ValueError, match="no unfaithful training claims.*'calibrated' or 'soft'"):
        FranqCalibrator(variant="condition").fit(ClaimInputs([0.9, 0.8], [0.5, 0.4], [0.1, 0.2]), [1, 0])


def test_small_condition_gives_a_warning():
    p_f, a, b, y, _ = _claims()
    p_f = np.where(np.arange(len(p_f)) < 10, 0.1, 0.9)
    cal = FranqCalibrator(variant="condition").fit(ClaimInputs(p_f, a, b), y)
    assert any("unfaithful condition: only 10" in w for w in cal.warnings_)


def test_unfitted_franq_calibrator_error_names_fit_command():
    with pytest.raises(NotFittedError, match="franq fit calibrator"):
        FranqCalibrator().predict(ClaimInputs([0.5], [0.5], [0.5]))


def test_mismatches_name_each_differing_field():
    cal = FranqCalibrator(fitted_for=STACK)
    assert cal.mismatches(STACK) == []
    other = {**STACK, "faithfulness": "alignscore", "model": "m2"}
    assert cal.mismatches(other) == ["faithfulness: fitted for 'lexical-v1', running 'alignscore'",
                                     "model: fitted for 'm1', running 'm2'"]


def test_bad_variant_and_file_errors_name_the_field(tmp_path):
    with pytest.raises(ValueError, match="'variant' must be one of"):
        FranqCalibrator(variant="platt").fit(ClaimInputs([0.5], [0.5], [0.5]), [1])
    path = tmp_path / "x.json"
    path.write_text(json.dumps({"format": "franq-calibrator", "version": 1, "uq_transform": "log",
                                "fitted_for": {}, "variant": "condition"}))
    with pytest.raises(CalibratorFileError, match="needs 'uq_faith' and 'uq_unfaith'"):
        FranqCalibrator.from_json(path)
    path.write_text("[1, 2]")
    with pytest.raises(CalibratorFileError, match="expected a JSON object"):
        FranqCalibrator.from_json(path)
