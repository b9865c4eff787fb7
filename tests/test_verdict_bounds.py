"""No calibrated map outputs exactly 0 or 1 (issue 45.1): each isotonic step is a Beta
posterior mean bounded by the map's rule of succession, and maps of files without step
counts (the shipped ones of franq 0.2) are clamped to [1 / (n + 2), 1 - 1 / (n + 2)] on loading."""
from __future__ import annotations

import itertools
import json

import numpy as np
import pytest

from calibration.base import CalibratorFileError
from calibration.contract import ClaimInputs
from calibration.isotonic import IsotonicCalibrator
from franq.calibrate import load_calibrator, shipped_calibrators

RAW = [0.0, 1e-300, 1e-30, 2.4e-4, 0.01, 0.2, 0.5, 0.8, 0.99, 1.0]
P_F = [0.0, 0.3, 0.5, 0.9, 1.0]


def _grid():
    """Every combination of raw inputs and condition rows, incl. raw 0 and 1 and one-hot conditions."""
    rows = list(itertools.product(RAW, RAW, [(1, 0, 0), (0, 1, 0), (0, 0, 1), (0.2, 0.3, 0.5)]))
    a, b = (np.array([r[i] for r in rows], dtype=float) for i in range(2))
    return np.array([r[2] for r in rows], dtype=float), a, b


def _text_only(path) -> bool:
    """A calibrator of the fast presets: its P(true) is the map of P_supported alone."""
    return (json.loads(path.read_text()).get("fitted_for") or {}).get("uq_faith") == "none"


@pytest.mark.parametrize("path", shipped_calibrators(), ids=lambda p: p.name)
def test_every_shipped_calibrator_stays_strictly_inside_the_unit_interval(path):
    cal = load_calibrator(path)
    p3, a, b = _grid()
    if _text_only(path):  # the fast presets run the mix with UQ_faith = 1, UQ_unfaith = 0 (franq.stages.calibrate)
        a, b = np.ones_like(a), np.zeros_like(b)
    if cal.needs_conditions:
        inputs = ClaimInputs(p3[:, 0], a, b, p_contradicted=p3[:, 1], p_not_mentioned=p3[:, 2])
    else:
        inputs = ClaimInputs(p3[:, 0], a, b)
    parts = cal.predict_components(inputs)
    branches = ("p_true_if_supported", "p_true_if_unfaithful", "p_true_if_contradicted", "p_true_if_not_mentioned")
    for name in ("p_true",) + (() if _text_only(path) else branches):  # fast reports no UQ branch
        v = getattr(parts, name)
        if v is not None:
            assert np.all((v > 0) & (v < 1)), f"{path.name}: {name} reaches {v.min()} .. {v.max()}"


@pytest.mark.parametrize("path", shipped_calibrators(), ids=lambda p: p.name)
def test_a_tiny_raw_value_without_passages_is_not_certain(path):
    """The issue's case: no passages (P_faithful 0, not mentioned), raw P(true) 2.4e-4 came out 1.0."""
    cal = load_calibrator(path)
    z, one, raw = np.zeros(1), np.ones(1), np.full(1, 2.4e-4)
    if _text_only(path):  # no knowledge term: P_supported 0 maps to the map's lowest step
        assert 0.0 < cal.predict(ClaimInputs(z, one, z))[0] < 1.0
        return
    inputs = ClaimInputs(z, raw, raw, p_contradicted=z, p_not_mentioned=one) if cal.needs_conditions \
        else ClaimInputs(z, raw, raw)
    assert 0.0 < cal.predict(inputs)[0] < 1.0


def test_a_fitted_map_stores_its_step_counts_and_bound_and_reads_back(tmp_path):
    rng = np.random.default_rng(0)
    x = rng.normal(size=300)
    y = (x + rng.normal(size=300) > 0).astype(float)
    cal = IsotonicCalibrator().fit(x, y)
    d = cal.to_dict()
    assert d["bound"]["kind"] == "beta" and len(d["step_n"]) == len(d["x"]) == len(d["step_k"])
    assert 0 < min(d["y"]) and max(d["y"]) < 1 and d["bound"]["low"] == pytest.approx(1 / 302)
    cal.to_json(tmp_path / "m.json")
    back = IsotonicCalibrator.from_json(tmp_path / "m.json")
    grid = np.linspace(-6, 6, 101)
    assert np.array_equal(back.predict(grid), cal.predict(grid))
    lo, hi = back.predict_interval(grid)
    p = back.predict(grid)
    assert np.all(lo <= p) and np.all(p <= hi) and np.all(np.diff(p) >= 0)
    assert back.base_rate == pytest.approx((y.sum() + 1) / (len(y) + 2))


def test_all_false_map_gives_the_rule_of_succession_not_zero():
    cal = IsotonicCalibrator().fit(np.linspace(-3, 0, 118), np.zeros(118))
    assert np.allclose(cal.predict([-10, 0, 10]), 1 / 120)
    cal = IsotonicCalibrator().fit([0.1, 0.2, 0.3], [1, 1, 1])
    assert np.all(cal.predict([0, 1]) < 1) and np.all(cal.predict([0, 1]) >= 0.75)


def test_small_steps_are_drawn_to_the_map_base_rate_and_stay_monotone():
    # one false sample at the top of mostly true data: its own step would be 0; bounded it is pooled or drawn up
    x = np.arange(40.0)
    y = np.ones(40)
    y[[3, 17, 39]] = 0
    cal = IsotonicCalibrator().fit(x, y)
    p = cal.predict(np.linspace(-1, 41, 200))
    assert np.all(np.diff(p) >= -1e-15) and p.min() > 0.5 and p.max() < 1


def test_a_legacy_map_is_clamped_by_its_fit_size():
    old = {"format": "franq-isotonic", "version": 1, "increasing": True, "y_min": 0.0, "y_max": 1.0,
           "n_samples": 8, "weight_sum": 8.0, "x": [0.0, 1.0], "y": [0.0, 1.0]}
    cal = IsotonicCalibrator.from_dict(old)
    assert cal.predict([-1, 2]).tolist() == [0.1, 0.9]
    assert cal.predict_interval([0.5]) is None and cal.base_rate is None
    assert cal.to_dict()["bound"] == {"kind": "clamp", "low": 0.1, "high": 0.9, "n": 8.0}


def test_a_map_with_step_counts_but_no_bound_is_refused_naming_the_field():
    d = IsotonicCalibrator().fit([0.0, 1.0, 2.0], [0, 1, 1]).to_dict()
    del d["bound"]
    with pytest.raises(CalibratorFileError, match="'bound'"):
        IsotonicCalibrator.from_dict(d)
    d = IsotonicCalibrator().fit([0.0, 1.0, 2.0], [0, 1, 1]).to_dict()
    d["step_n"] = d["step_n"][:1]
    with pytest.raises(CalibratorFileError, match="'step_n'"):
        IsotonicCalibrator.from_dict(json.loads(json.dumps(d)))


def test_prior_strength_must_be_positive():
    with pytest.raises(ValueError, match="'prior_strength'"):
        IsotonicCalibrator(prior_strength=0).fit([0.0, 1.0], [0, 1])
