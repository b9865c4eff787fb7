"""Three-condition FRANQ: P(true) = P_s * T_s + P_c * T_c + P_n * T_n, its
calibrator (fit / predict / JSON), its reduction to the binary mix, and the binary variants
unchanged."""
from __future__ import annotations

import numpy as np
import pytest

from calibration.base import CalibratorFileError, NotFittedError
from calibration.contract import ClaimInputs
from calibration.franq import FranqCalibrator
from calibration.metrics import expected_calibration_error
from calibration.mix import franq_mix, franq_mix3
from calibration.three_condition import ThreeConditionCalibrator
from franq.calibrate import load_calibrator
from franq.mix import mix, mix3

STACK = {"model": "m", "faithfulness": "verifier:tiny", "uq_faith": "claim_prob", "uq_unfaith": "parametric",
         "prompt_version": "1", "mode": "long"}


def x3(p3, a, b) -> ClaimInputs:
    """Claims of P_s, P_c, P_n (the columns of ``p3``), UQ_faith ``a`` and UQ_unfaith ``b``."""
    return ClaimInputs(p3[:, 0], a, b, p_contradicted=p3[:, 1], p_not_mentioned=p3[:, 2])


def parts(out) -> tuple:
    """T_s, T_c, T_n and P(true) of a three-condition calibrator's output."""
    return out.p_true_if_supported, out.p_true_if_contradicted, out.p_true_if_not_mentioned, out.p_true


def synthetic(n=600, seed=0):
    """Claims whose truth depends on the condition: supported ones follow UQ_faith,
    contradicted ones are mostly false, not-mentioned ones follow UQ_unfaith."""
    rng = np.random.default_rng(seed)
    p3 = rng.dirichlet([0.4, 0.4, 0.4], size=n)
    cond = p3.argmax(axis=1)
    a, b = rng.random(n), rng.random(n)
    truth_p = np.where(cond == 0, a, np.where(cond == 1, 0.1 * a, b))
    y = (rng.random(n) < truth_p).astype(float)
    return p3, a, b, y, cond


def test_mix3_with_no_contradiction_is_the_binary_mix():
    rng = np.random.default_rng(1)
    p_s, a, b = rng.random(50), rng.random(50), rng.random(50)
    assert np.array_equal(franq_mix3(p_s, np.zeros(50), 1 - p_s, a, rng.random(50), b), franq_mix(p_s, a, b))
    assert np.allclose(mix3(p_s, np.zeros(50), 1 - p_s, a, a, b), mix(p_s, a, b))
    with pytest.raises(ValueError, match="must be 1"):
        mix3([0.5], [0.5], [0.5], [1], [1], [1])


def test_mix3_never_passes_one_by_a_rounding_error():
    # renormalised conditions whose sum is 1.0000000000000002; every map at 1: the mix is 1, not more
    p = [0.46335848984461653, 0.3373961461805628, 0.1992453639748208]
    assert sum(p) > 1
    assert franq_mix3(*(np.array([x]) for x in p), *(np.ones(1),) * 3)[0] == 1.0


def test_binary_mix_and_variants_reproduce_exactly():
    """The paper's variants by name, on fixed inputs, give what the formula gives."""
    rng = np.random.default_rng(3)
    p_f, a, b = rng.random(300), rng.random(300), rng.random(300)
    y = (rng.random(300) < p_f * a + (1 - p_f) * b).astype(float)
    assert np.array_equal(mix(p_f, a, b), p_f * a + (1.0 - p_f) * b)
    for variant in ("none", "calibrated", "condition", "soft"):
        cal = FranqCalibrator(variant=variant).fit(ClaimInputs(p_f, a, b), y)
        out = cal.predict_components(ClaimInputs(p_f, a, b))
        ta, tb, p = out.p_true_if_supported, out.p_true_if_unfaithful, out.p_true
        assert np.array_equal(p, p_f * ta + (1.0 - p_f) * tb)
        if variant == "none":
            assert np.array_equal(p, p_f * a + (1.0 - p_f) * b)


@pytest.mark.parametrize("variant", ["condition", "soft"])
def test_fit_predict_json_round_trip(variant, tmp_path):
    p3, a, b, y, cond = synthetic()
    cal = ThreeConditionCalibrator(variant=variant, fitted_for=STACK).fit(x3(p3, a, b), y)
    t_s, t_c, t_n, p = parts(cal.predict_components(x3(p3, a, b)))
    assert np.allclose(p, p3[:, 0] * t_s + p3[:, 1] * t_c + p3[:, 2] * t_n)
    assert t_c.mean() < t_s.mean()  # contradicted claims are mostly false
    # held out (the bounded maps trade a little in-sample fit for never claiming certainty)
    q3, qa, qb, qy, _ = synthetic(seed=1)
    raw = franq_mix3(q3[:, 0], q3[:, 1], q3[:, 2], qa, qa, qb)
    assert expected_calibration_error(cal.predict(x3(q3, qa, qb)), qy) < expected_calibration_error(raw, qy)
    cal.to_json(tmp_path / "c3.json")
    back = load_calibrator(tmp_path / "c3.json")
    assert isinstance(back, ThreeConditionCalibrator) and back.fitted_for == STACK and back.name == f"three-{variant}"
    assert np.array_equal(back.predict(x3(p3, a, b)), p)


def test_contradicted_claims_fall_below_half_and_ranking_beats_the_binary_fit():
    from franq.evaluation.metrics import auroc

    p3, a, b, y, cond = synthetic(n=2000, seed=5)
    three = ThreeConditionCalibrator(variant="condition").fit(x3(p3, a, b), y)
    binary = FranqCalibrator(variant="condition").fit(ClaimInputs(p3[:, 0], a, b), y)
    test = synthetic(n=2000, seed=6)
    p3t, at, bt, yt, ct = test
    p_three = three.predict(x3(p3t, at, bt))
    p_binary = binary.predict(ClaimInputs(p3t[:, 0], at, bt))
    assert np.median(p_three[ct == 1]) < 0.5
    assert auroc(p_three, yt) > auroc(p_binary, yt)


def test_gold_conditions_take_precedence_over_the_argmax():
    p3, a, b, y, cond = synthetic()
    gold = ["contradicted"] * len(y)
    gold[:300] = [None] * 300
    cal = ThreeConditionCalibrator().fit(x3(p3, a, b), y, condition=gold)
    assert cal.counts_["split"] == {"gold": 300, "argmax": 300}
    assert cal.counts_["contradicted"]["n"] == 300 + int((cond[:300] == 1).sum())
    with pytest.raises(ValueError, match="'condition' must be one of"):
        ThreeConditionCalibrator().fit(x3(p3, a, b), y, condition=["faithful"] * len(y))


def test_reduces_to_the_binary_condition_calibrator_without_contradictions():
    """Fitted on the same supported / not-mentioned claims, T_s and T_n are the binary
    calibrator's maps, so with P_c = 0 both give the same P(true)."""
    p3, a, b, y, cond = synthetic()
    keep = cond != 1
    p_s = p3[keep, 0] / (p3[keep, 0] + p3[keep, 2])
    gold = np.where(cond[keep] == 0, "supported", "not_mentioned")
    extra = 40  # a few contradicted claims so that T_c can be fitted; they touch neither T_s nor T_n
    rng = np.random.default_rng(9)
    cal3 = ThreeConditionCalibrator().fit(
        ClaimInputs(np.r_[p_s, np.zeros(extra)], np.r_[a[keep], rng.random(extra)], np.r_[b[keep], rng.random(extra)],
                    p_contradicted=np.r_[np.zeros(len(p_s)), np.ones(extra)],
                    p_not_mentioned=np.r_[1 - p_s, np.zeros(extra)]),
        np.r_[y[keep], np.zeros(extra)], condition=[*gold, *["contradicted"] * extra])
    cal2 = FranqCalibrator(variant="condition").fit(ClaimInputs(p_s, a[keep], b[keep]), y[keep],
                                                    is_faithful=gold == "supported")
    q = np.random.default_rng(2).random(100)
    x, z = np.random.default_rng(3).random(100), np.random.default_rng(4).random(100)
    assert np.allclose(cal3.predict(ClaimInputs(q, x, z, p_contradicted=np.zeros(100), p_not_mentioned=1 - q)),
                       cal2.predict(ClaimInputs(q, x, z)))


def test_raw_variant_uses_uq_faith_for_contradicted_claims():
    p3, a, b, y, cond = synthetic()
    cal = ThreeConditionCalibrator(variant="none").fit(x3(p3, a, b), y)
    t_s, t_c, t_n, p = parts(cal.predict_components(x3(p3, a, b)))
    assert np.array_equal(t_c, a) and np.array_equal(t_s, a) and np.array_equal(t_n, b)


def test_errors_name_what_is_wrong(tmp_path):
    p3, a, b, y, cond = synthetic()
    with pytest.raises(NotFittedError, match="franq fit calibrator"):
        ThreeConditionCalibrator().predict(x3(p3, a, b))
    no_c = p3.copy()
    no_c[:, 1] = 0
    with pytest.raises(ValueError, match="no contradicted training claims"):
        ThreeConditionCalibrator().fit(x3(no_c, a, b), y)
    cal = ThreeConditionCalibrator().fit(x3(p3, a, b), y)
    d = cal.to_dict()
    d.pop("uq_contradicted")
    with pytest.raises(CalibratorFileError, match="uq_contradicted"):
        ThreeConditionCalibrator.from_dict(d)


@pytest.mark.parametrize("field, value, message", [
    ("n_samples", [1, 2], "'n_samples'"),
    ("n_samples", -3, "'n_samples'"),
    ("description", {"a": 1}, "'description' must be a string"),
    ("counts", [1], "'counts' must be an object"),
    ("fit_spread", "wide", "'fit_spread' must be an object"),
    ("fitted_for", {"model": 3}, "'fitted_for' must be an object of strings"),
    ("evaluation", {"dev": {"ece": "low"}}, "'evaluation' must map dev set names to objects of numbers"),
    ("evaluation", ["dev"], "'evaluation' must map dev set names"),
])
def test_a_damaged_three_condition_file_is_refused_as_a_binary_one_is(field, value, message):
    """Both calibrator formats read their shared fields through one checked reader
    (calibration.base.calibrator_header / fit_record): a hand-edited file is refused, naming
    the field, never a traceback."""
    p3, a, b, y, _ = synthetic(200)
    for cal in (ThreeConditionCalibrator(fitted_for=STACK).fit(x3(p3, a, b), y),
                FranqCalibrator(fitted_for=STACK).fit(ClaimInputs(p3[:, 0], a, b), y)):
        obj = cal.to_dict()
        obj[field] = value
        with pytest.raises(CalibratorFileError, match=message):
            type(cal).from_dict(obj)


def test_a_stronger_step_prior_draws_each_map_towards_its_base_rate(tmp_path):
    """``prior_strength``: each isotonic step's Beta prior in pseudo-samples; the steps of a
    strong prior lie closer to the map's base rate, and the file reads back the same maps."""
    p3, a, b, y, cond = synthetic()
    X = x3(p3, a, b)
    spread = {}
    for s in (1.0, 200.0):
        cal = ThreeConditionCalibrator(variant="soft", fitted_for=STACK, prior_strength=s).fit(X, y)
        t_s = cal.predict_components(X).p_true_if_supported
        spread[s] = float(np.abs(t_s - cal.uq_supported_.base_rate).max())
        cal.to_json(tmp_path / "c.json")
        assert np.array_equal(ThreeConditionCalibrator.from_json(tmp_path / "c.json").predict(X), cal.predict(X))
    assert spread[200.0] < spread[1.0] / 2
    with pytest.raises(ValueError, match="'prior_strength' must be a number > 0"):
        ThreeConditionCalibrator(variant="soft", prior_strength=0).fit(X, y)


def test_a_flat_condition_map_is_its_share_of_true_claims_whatever_the_score(tmp_path):
    p3, a, b, y, cond = synthetic()
    cal = ThreeConditionCalibrator(variant="condition", fitted_for=STACK, flat=("contradicted",)).fit(
        x3(p3, a, b), y, condition=[("supported", "contradicted", "not_mentioned")[k] for k in cond])
    share = y[cond == 1].mean()
    _, t_c, t_n, _ = parts(cal.predict_components(x3(p3, a, b)))
    n_c = int((cond == 1).sum())  # the one level is the share, drawn to it by its Beta prior by at most 1 / (n + 1)
    assert np.allclose(t_c, t_c[0]) and abs(t_c[0] - share) < 1 / (n_c + 1) and 0.0 < share < 0.2
    assert len(np.unique(t_n)) > 1  # the others still follow their score
    cal.to_json(tmp_path / "c.json")
    back = ThreeConditionCalibrator.from_json(tmp_path / "c.json")
    assert back.flat == ("contradicted",)
    assert np.array_equal(back.predict(x3(p3, a, b)), cal.predict(x3(p3, a, b)))
    with pytest.raises(ValueError, match="'flat'"):
        ThreeConditionCalibrator(flat=("faithful",)).fit(x3(p3, a, b), y)
    import json

    obj = json.loads((tmp_path / "c.json").read_text())
    obj["flat"] = "contradicted"
    (tmp_path / "bad.json").write_text(json.dumps(obj))
    with pytest.raises(CalibratorFileError, match="'flat'"):
        ThreeConditionCalibrator.from_json(tmp_path / "bad.json")


def test_a_calibrator_without_flat_maps_writes_no_flat_key():
    p3, a, b, y, _ = synthetic()
    assert "flat" not in ThreeConditionCalibrator(fitted_for=STACK).fit(x3(p3, a, b), y).to_dict()
