"""One calibrator contract (issue 43): every calibrator fits and predicts over ClaimInputs,
returns CalibratedClaims whose fields say what they hold, and declares what it reads; the
pipeline's ActiveCalibrator applies any of them without asking which class it is."""
from __future__ import annotations

import json

import numpy as np
import pytest

from calibration.contract import CalibratedClaims, ClaimInputs
from calibration.franq import FranqCalibrator
from calibration.three_condition import ThreeConditionCalibrator
from franq.calibrate import ActiveCalibrator, load_calibrator, shipped_calibrators
from franq.errors import InputError

STACK = {"model": "m", "faithfulness": "verifier:tiny", "uq_faith": "claim_prob", "uq_unfaith": "parametric",
         "prompt_version": "1", "mode": "long"}


def claims(n=400, seed=0) -> tuple[ClaimInputs, np.ndarray]:
    rng = np.random.default_rng(seed)
    p3 = rng.dirichlet([0.5, 0.5, 0.5], size=n)
    a, b = rng.random(n), rng.random(n)
    y = (rng.random(n) < np.where(p3.argmax(axis=1) == 1, 0.1, 0.5 * (a + b))).astype(float)
    signals = {"log_claim_prob": np.log(a), "log_parametric": np.log(b)}
    return ClaimInputs(p3[:, 0], a, b, p_contradicted=p3[:, 1], p_not_mentioned=p3[:, 2], signals=signals), y


def fitted():
    x, y = claims()
    cals = [FranqCalibrator(variant="condition", fitted_for=STACK).fit(x, y),
            ThreeConditionCalibrator(variant="soft", fitted_for=STACK).fit(x, y)]
    try:
        from calibration.boosted import XGBoostCalibrator

        cals.append(XGBoostCalibrator(feature_names=["p_faithful", "log_claim_prob", "log_parametric"],
                                      n_estimators=10, fitted_for=STACK).fit(x, y))
    except ImportError:
        pass
    return cals


@pytest.mark.parametrize("cal", fitted(), ids=lambda c: type(c).__name__)
def test_every_calibrator_predicts_through_the_same_methods(cal):
    x, _ = claims(50, seed=1)
    out = cal.predict_components(x)
    assert isinstance(out, CalibratedClaims) and np.array_equal(out.p_true, cal.predict(x))
    assert isinstance(cal.needs_conditions, bool) and cal.name and cal.mismatches(STACK) == []
    three = cal.needs_conditions
    # each part is there exactly when the calibrator has it
    assert (out.p_true_if_contradicted is not None) == (out.p_true_if_not_mentioned is not None) == three
    assert (out.p_true_if_unfaithful is not None) == isinstance(cal, FranqCalibrator)
    assert (out.p_true_if_supported is not None) == (three or isinstance(cal, FranqCalibrator))


def test_a_binary_calibrator_reads_p_faithful_alone():
    x, y = claims()
    cal = FranqCalibrator(variant="condition").fit(x, y)
    bare = ClaimInputs(x.p_faithful, x.uq_faith, x.uq_unfaith)
    assert np.array_equal(cal.predict(bare), cal.predict(x))


def test_active_calibrator_says_what_a_calibrator_needs(tmp_path):
    x, y = claims()
    binary = ClaimInputs(x.p_faithful, x.uq_faith, x.uq_unfaith)
    three = ActiveCalibrator(ThreeConditionCalibrator(fitted_for=STACK).fit(x, y), path="c3.json", source="user")
    assert three.needs_conditions and three.name == "three-condition"
    with pytest.raises(InputError, match="c3.json: a three-condition calibrator needs P_contradicted"):
        three.apply(binary)
    two = ActiveCalibrator(FranqCalibrator(fitted_for=STACK).fit(x, y), path="c.json", source="user")
    assert not two.needs_conditions and two.apply(binary).p_true_if_unfaithful is not None
    pytest.importorskip("xgboost")
    from calibration.boosted import XGBoostCalibrator

    xgb = XGBoostCalibrator(feature_names=["p_faithful", "log_claim_prob"], n_estimators=5).fit(x, y)
    active = ActiveCalibrator(xgb, path="x.json", source="user")
    with pytest.raises(InputError, match=r"x.json: needs feature\(s\) \['log_claim_prob'\]"):
        active.apply(binary)
    assert active.apply(x).p_true_if_supported is None


@pytest.mark.parametrize("path", shipped_calibrators(), ids=lambda p: p.name)
def test_shipped_calibrator_files_load_unchanged(path):
    """The contract changed the code, not the files: each shipped file reads back as itself,
    but for the clamp [1 / (n + 2), 1 - 1 / (n + 2)] a map without step counts gets on loading."""
    cal, saved = load_calibrator(path), json.loads(path.read_text(encoding="utf-8"))
    written = {k: v for k, v in cal.to_dict().items() if k in saved or v is not None}
    for key, part in saved.items():  # a file fitted before 'fit_spread' was recorded lacks it; written again it says null
        if isinstance(part, dict) and part.get("format") == "franq-isotonic" and "step_n" not in part:
            n = part.get("weight_sum") or part["n_samples"]
            assert written[key].pop("bound") == {"kind": "clamp", "low": 1 / (n + 2), "high": 1 - 1 / (n + 2), "n": n}
            part["y"] = [min(max(v, 1 / (n + 2)), 1 - 1 / (n + 2)) for v in part["y"]]
    assert written == saved
