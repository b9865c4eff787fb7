"""The thresholded FRANQ variants (paper appendix D.1, table 13): P_faithful is replaced by
1(P_faithful > 0.5), so each claim takes exactly one calibrated UQ branch."""
from __future__ import annotations

import numpy as np
import pytest

from calibration.contract import ClaimInputs
from calibration.franq import FranqCalibrator


def _data(seed=0, n=400):
    rng = np.random.default_rng(seed)
    p_f = rng.uniform(0, 1, n)
    a, b = rng.uniform(0, 1, n), rng.uniform(0, 1, n)
    y = (rng.uniform(0, 1, n) < np.where(p_f > 0.5, a, b)).astype(int)
    return p_f, a, b, y


def test_uncalibrated_thresholded_mix_picks_one_branch():
    p_f = np.array([0.2, 0.5, 0.51, 0.9])
    a, b = np.array([0.9, 0.8, 0.7, 0.6]), np.array([0.1, 0.2, 0.3, 0.4])
    cal = FranqCalibrator(variant="none", hard_mix_threshold=0.5).fit(ClaimInputs(p_f, a, b), [1, 0, 1, 1])
    np.testing.assert_allclose(cal.predict(ClaimInputs(p_f, a, b)), [0.1, 0.2, 0.7, 0.6])
    assert cal.name == "none+T=0.5"


@pytest.mark.parametrize("variant", ["calibrated", "condition"])
def test_thresholded_calibrated_variants_apply_one_map_per_claim(variant, tmp_path):
    p_f, a, b, y = _data()
    cal = FranqCalibrator(variant=variant, hard_mix_threshold=0.5).fit(ClaimInputs(p_f, a, b), y)
    out = cal.predict_components(ClaimInputs(p_f, a, b))
    p = out.p_true
    assert out.p_faithful is None  # the cut is no calibrated P_faithful
    np.testing.assert_allclose(p, np.where(p_f > 0.5, out.p_true_if_supported, out.p_true_if_unfaithful))
    # continuous P_faithful mixes the two maps instead
    cont = FranqCalibrator(variant=variant).fit(ClaimInputs(p_f, a, b), y)
    assert not np.allclose(cont.predict(ClaimInputs(p_f, a, b)), p)
    cal.to_json(tmp_path / "c.json")
    back = FranqCalibrator.from_json(tmp_path / "c.json")
    assert back.hard_mix_threshold == 0.5 and back.name == f"{variant}+T=0.5"
    np.testing.assert_allclose(back.predict(ClaimInputs(p_f, a, b)), p)


def test_thresholded_condition_split_equals_the_continuous_split_without_gold():
    p_f, a, b, y = _data(1)
    t = FranqCalibrator(variant="condition", hard_mix_threshold=0.5).fit(ClaimInputs(p_f, a, b), y)
    c = FranqCalibrator(variant="condition").fit(ClaimInputs(p_f, a, b), y)
    assert t.counts_ == c.counts_


def test_bad_threshold_is_refused_by_name():
    with pytest.raises(ValueError, match="hard_mix_threshold"):
        FranqCalibrator(hard_mix_threshold=1.5).fit(ClaimInputs([0.2], [0.5], [0.5]), [1])


def test_a_thresholded_calibrator_file_of_franq_0_1_loads_its_p_faithful_threshold():
    p_f, a, b = [0.9, 0.2, 0.7, 0.1], [0.9, 0.5, 0.8, 0.4], [0.6, 0.3, 0.7, 0.2]
    obj = FranqCalibrator(variant="none", hard_mix_threshold=0.5).fit(ClaimInputs(p_f, a, b), [1, 0, 1, 1]).to_dict()
    obj["p_faithful_threshold"] = obj.pop("hard_mix_threshold")  # how 0.1 wrote it
    assert FranqCalibrator.from_dict(obj).hard_mix_threshold == 0.5
