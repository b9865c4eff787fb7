"""IsotonicCalibrator, ECE and the XGBoost baseline: pure numpy, no models."""
from __future__ import annotations

import json

import numpy as np
import pytest

from calibration.base import CalibratorFileError, NotFittedError
from calibration.contract import ClaimInputs
from calibration.isotonic import IsotonicCalibrator
from calibration.metrics import brier_score, expected_calibration_error


def _data(n=400, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    y = (rng.random(n) < 1 / (1 + np.exp(-2 * x))).astype(float)
    return x, y


def test_isotonic_outputs_are_monotone_and_in_unit_interval():
    x, y = _data()
    cal = IsotonicCalibrator().fit(x, y)
    grid = np.linspace(-5, 5, 1001)
    p = cal.predict(grid)
    assert np.all(np.diff(p) >= 0)
    assert p.min() >= 0 and p.max() <= 1


def test_decreasing_isotonic_is_monotone_down():
    x, y = _data()
    cal = IsotonicCalibrator(increasing=False).fit(-x, y)
    assert np.all(np.diff(cal.predict(np.linspace(-5, 5, 101))) <= 0)


def test_isotonic_clips_out_of_range_inputs_to_end_values():
    x, y = _data()
    cal = IsotonicCalibrator().fit(x, y)
    lo, hi = cal.predict([x.min()])[0], cal.predict([x.max()])[0]
    assert cal.predict([-1e9])[0] == lo and cal.predict([1e9])[0] == hi


def test_isotonic_matches_sklearn_predictions():
    from sklearn.isotonic import IsotonicRegression

    x, y = _data()
    w = np.random.default_rng(1).random(len(x))
    ours = IsotonicCalibrator(prior_strength=1e-12).fit(x, y, sample_weight=w)  # a prior of almost nothing
    ref = IsotonicRegression(out_of_bounds="clip", y_min=0, y_max=1).fit(x, y, sample_weight=w)
    bound = 1 / (w.sum() + 2)  # the map's own rule of succession still bounds its ends
    np.testing.assert_allclose(ours.x_thresholds_, ref.X_thresholds_, rtol=0, atol=1e-12)
    np.testing.assert_allclose(ours.y_thresholds_, np.clip(ref.y_thresholds_, bound, 1 - bound), rtol=0, atol=1e-9)
    grid = np.linspace(-4, 4, 333)  # both interpolate linearly between those breakpoints
    np.testing.assert_allclose(ours.predict(grid), np.interp(grid, ours.x_thresholds_, ours.y_thresholds_))


def test_isotonic_json_round_trip_gives_identical_predictions(tmp_path):
    x, y = _data()
    cal = IsotonicCalibrator().fit(x, y)
    cal.to_json(tmp_path / "iso.json")
    back = IsotonicCalibrator.from_json(tmp_path / "iso.json")
    grid = np.random.default_rng(2).normal(size=1000) * 3
    assert np.array_equal(cal.predict(grid), back.predict(grid))
    assert (tmp_path / "iso.json").stat().st_size < 4000


def test_unfitted_isotonic_error_says_how_to_fit():
    with pytest.raises(NotFittedError, match=r"\.fit\(scores, labels\)"):
        IsotonicCalibrator().predict([0.1])


def test_isotonic_fit_validates_inputs_by_field():
    with pytest.raises(ValueError, match="'labels' must be 0/1"):
        IsotonicCalibrator().fit([0.1, 0.2], [0, 2])
    with pytest.raises(ValueError, match="'labels' has 1 values, expected 2"):
        IsotonicCalibrator().fit([0.1, 0.2], [0])
    with pytest.raises(ValueError, match="'scores' must be finite"):
        IsotonicCalibrator().fit([0.1, float("nan")], [0, 1])
    with pytest.raises(ValueError, match="'sample_weight' must be non-negative"):
        IsotonicCalibrator().fit([0.1, 0.2], [0, 1], sample_weight=[1, -1])
    with pytest.raises(ValueError, match="no sample has a positive weight"):
        IsotonicCalibrator().fit([0.1, 0.2], [0, 1], sample_weight=[0, 0])


def test_zero_weight_samples_do_not_change_the_fit():
    x, y = _data()
    w = np.ones(len(x))
    w[::3] = 0
    a = IsotonicCalibrator().fit(x, y, sample_weight=w)
    b = IsotonicCalibrator().fit(x[w > 0], y[w > 0])
    assert np.array_equal(a.predict(x), b.predict(x))


def test_isotonic_from_json_rejects_other_formats(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"format": "something-else"}))
    with pytest.raises(CalibratorFileError, match="'format' must be 'franq-isotonic'"):
        IsotonicCalibrator.from_json(path)
    path.write_text(json.dumps({"format": "franq-isotonic", "version": 1, "x": [1, 0], "y": [0, 1]}))
    with pytest.raises(CalibratorFileError, match="'x' must be sorted"):
        IsotonicCalibrator.from_json(path)


def test_ece_of_perfectly_calibrated_bins_is_zero_and_of_constant_is_gap():
    p = np.array([0.25] * 4 + [0.75] * 4)
    y = np.array([1, 0, 0, 0, 1, 1, 1, 0])
    assert expected_calibration_error(p, y) == pytest.approx(0.0)
    assert expected_calibration_error([0.9] * 10, [1] * 5 + [0] * 5) == pytest.approx(0.4)
    assert expected_calibration_error([1.0, 0.0], [1, 0]) == 0.0
    assert brier_score([1.0, 0.0], [0, 0]) == pytest.approx(0.5)


def test_xgboost_baseline_round_trips_in_its_own_json_format(tmp_path):
    pytest.importorskip("xgboost")
    from calibration.boosted import XGBoostCalibrator

    rng = np.random.default_rng(0)
    m = rng.random((300, 3))
    X = ClaimInputs(m[:, 0], np.zeros(300), np.zeros(300), signals={"claim_prob": m[:, 1], "parametric": m[:, 2]})
    y = (m[:, 0] + 0.3 * rng.random(300) > 0.6).astype(float)
    cal = XGBoostCalibrator(feature_names=["p_faithful", "claim_prob", "parametric"], n_estimators=20,
                            fitted_for={"model": "m"}).fit(X, y)
    path = tmp_path / "xgb.json"
    cal.to_json(path)
    saved = json.loads(path.read_text())
    assert "learner" in saved  # XGBoost's own schema, not ours
    back = XGBoostCalibrator.from_json(path)
    assert back.feature_names == ["p_faithful", "claim_prob", "parametric"]
    assert back.fitted_for == {"model": "m"}
    assert np.array_equal(cal.predict(X), back.predict(X))
    assert np.array_equal(back.predict_components(X).p_true, back.predict(X))
    assert back.needs_conditions is False and back.name == "xgboost"
    with pytest.raises(ValueError, match=r"needs feature\(s\) \['parametric'\]"):
        back.predict(ClaimInputs(m[:, 0], m[:, 1], m[:, 2], signals={"claim_prob": m[:, 1]}))
    with pytest.raises(NotFittedError, match="fit"):
        XGBoostCalibrator(feature_names=["a"]).predict(ClaimInputs([0.5], [0.5], [0.5], signals={"a": [0.0]}))
