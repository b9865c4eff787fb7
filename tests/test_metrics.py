"""franq.evaluation.metrics: hand-computed cases, and PRR against LM-Polygraph's own code."""
from __future__ import annotations

import importlib.util
import itertools
import math
import sys
import types
from pathlib import Path

import numpy as np
import pytest

from franq.evaluation.metrics import (METRICS, auroc, auroc_rows, balanced_accuracy, ece, metric_direction, pr_auc,
                                      pr_auc_rows, prr, rejection_curve, reliability_bins)

# The example of the PR-AUC / AUROC comments: p_true descending with its labels.
P5 = [0.9, 0.8, 0.6, 0.4, 0.2]
Y5 = [1, 0, 1, 0, 0]


def _polygraph_ue_metrics():
    """LM-Polygraph's ue_metric.py and pred_rej_area.py, loaded verbatim from the installed
    package without running ``lm_polygraph/__init__`` (which imports torch and
    transformers: ~10 s)."""
    spec = importlib.util.find_spec("lm_polygraph")
    if spec is None:
        pytest.skip("lm-polygraph is not installed")
    root = Path(spec.submodule_search_locations[0]) / "ue_metrics"
    pkg = types.ModuleType("_polygraph_ue")
    pkg.__path__ = [str(root)]
    sys.modules["_polygraph_ue"] = pkg
    mods = {}
    for name in ("ue_metric", "pred_rej_area"):
        s = importlib.util.spec_from_file_location(f"_polygraph_ue.{name}", root / f"{name}.py")
        mods[name] = importlib.util.module_from_spec(s)
        sys.modules[s.name] = mods[name]
        s.loader.exec_module(mods[name])
    return mods["ue_metric"], mods["pred_rej_area"]


def test_pr_auc_is_average_precision_of_false_claims_by_hand():
    # Detector score -p: ranked 0.2 F, 0.4 F, 0.6 T, 0.8 F, 0.9 T; 3 false claims.
    # Precision at each false hit: 1/1, 2/2, 3/4 -> AP = (1 + 1 + 0.75) / 3 = 0.91666...
    assert pr_auc(P5, Y5) == pytest.approx(2.75 / 3)


def test_auroc_by_hand_and_direction():
    # True {0.9, 0.6} vs false {0.8, 0.4, 0.2}: 0.9 beats 3, 0.6 beats 2 -> 5 of 6 pairs.
    assert auroc(P5, Y5) == pytest.approx(5 / 6)
    assert auroc(-np.array(P5), Y5) == pytest.approx(1 / 6)


def test_balanced_accuracy_by_hand_at_the_threshold():
    p = np.array([0.9, 0.5, 0.2, 0.6, 0.4])
    y = np.array([1, 1, 0, 0, 0])
    # true: 0.9 above 0.5, 0.5 not (> is strict) -> 1/2; false: 0.2 and 0.4 at or below, 0.6 above -> 2/3
    assert balanced_accuracy(p, y) == pytest.approx((1 / 2 + 2 / 3) / 2)
    assert balanced_accuracy(p, y, threshold=0.3) == pytest.approx((1 + 1 / 3) / 2)
    assert math.isnan(balanced_accuracy(p, np.ones(5, dtype=int)))


def test_prr_by_hand_at_half_rejection():
    # n = 6, max_rejection 0.5 -> reject 0, 1, 2 claims, lowest p_true first.
    # Order by p: T F T T F T (4 true).  method: 4/6, 3/5 (drop a T), 3/4 (drop an F) -> sum 121/60
    # oracle (drop F first): 4/6, 4/5, 4/4 -> 148/60;  random: 4/6 each -> 120/60
    # PRR = (121 - 120) / (148 - 120) = 1/28
    p = [0.9, 0.8, 0.7, 0.3, 0.2, 0.1]
    y = [1, 0, 1, 1, 0, 1]
    assert prr(p, y) == pytest.approx(1 / 28)


def test_perfect_detector_scores_one_and_reversed_minus_one_when_classes_balance():
    y = np.array([1, 0, 1, 0, 0, 1, 1, 0])
    assert prr(y, y) == pytest.approx(1.0)
    assert pr_auc(y, y) == pytest.approx(1.0)
    assert auroc(y, y) == pytest.approx(1.0)
    # Balanced classes: the reversed curve mirrors the oracle around random, at any cut-off.
    for r in (0.25, 0.5, 1.0):
        assert prr(-y, y, max_rejection=r) == pytest.approx(-1.0)


def test_reversed_detector_is_not_minus_one_with_unbalanced_classes():
    # y = 1 1 0 1 0, p = -y, max_rejection 0.5 -> reject 0, 1.
    # method (drop a T first): 3/5, 2/4 -> 0.55;  oracle: 3/5, 3/4 -> 0.675;  random 0.6
    # PRR = (0.55 - 0.6) / (0.675 - 0.6) = -2/3
    y = np.array([1, 1, 0, 1, 0])
    assert prr(-y, y) == pytest.approx(-2 / 3)


def test_prr_of_a_random_order_is_zero_in_expectation():
    # Every order of 6 distinct scores: the mean retained quality at each cut-off is the
    # mean label, and the denominator is fixed, so the mean PRR is exactly 0.
    y = [1, 0, 0, 1, 1, 0]
    vals = [prr(list(perm), y) for perm in itertools.permutations(range(6))]
    assert np.mean(vals) == pytest.approx(0.0, abs=1e-12)


def test_prr_ties_count_at_the_group_mean_whatever_the_input_order():
    y = np.array([1, 0, 1, 1, 0, 0, 1, 0])
    assert prr(np.zeros(8), y) == pytest.approx(0.0)
    p = np.array([0.9, 0.5, 0.5, 0.5, 0.5, 0.1, 0.9, 0.1])
    perm = np.random.default_rng(0).permutation(8)
    assert prr(p, y) == pytest.approx(prr(p[perm], y[perm]), abs=1e-12)


def test_prr_equals_lm_polygraph_normalized_prr():
    ue_metric, pra = _polygraph_ue_metrics()
    rng = np.random.default_rng(3)
    for n, r in ((200, 0.5), (37, 0.5), (51, 1.0), (10, 0.3)):
        y = (rng.random(n) < 0.6).astype(float)
        p = np.clip(0.35 * y + 0.65 * rng.random(n), 0, 1)   # continuous: no ties
        m = pra.PredictionRejectionArea(max_rejection=r)
        method, oracle = m(-p, y), m(-y, y)                  # as UEManager.eval_ue does
        assert prr(p, y, max_rejection=r) == pytest.approx(
            ue_metric.normalize_metric(method, oracle, y.mean()), abs=1e-12)
        # UEManager estimates the random score with 1000 seeded shuffles instead.
        mc = ue_metric.normalize_metric(method, oracle, ue_metric.get_random_scores(m, y))
        assert prr(p, y, max_rejection=r) == pytest.approx(mc, abs=0.03)


def test_rejection_curve_points_and_consistency_with_prr():
    rng = np.random.default_rng(1)
    y = (rng.random(100) < 0.5).astype(float)
    p = rng.random(100)
    full = rejection_curve(p, y, max_rejection=0.5)
    assert len(full.rejection) == 50 and full.rejection[0] == 0 and full.rejection[-1] == 0.49
    assert np.all(full.oracle >= full.method - 1e-12) and np.all(full.random == y.mean())
    rand = y.mean()
    assert prr(p, y) == pytest.approx((full.method.mean() - rand) / (full.oracle.mean() - rand))
    few = rejection_curve(p, y, max_rejection=0.5, points=11)
    assert len(few.rejection) == 11 and few.rejection[-1] == 0.49
    np.testing.assert_allclose(few.method, full.method[np.isin(full.rejection, few.rejection)])


def test_ece_by_hand_and_reliability_bins():
    # Bins of width 0.1, closed on the right (lo, hi] as Guo et al. / LM-Polygraph:
    # {0.11, 0.15} -> bin 1: mean .13, share .5, gap .37 x 2 claims
    # 0.8 -> bin 7 (0.7, 0.8]: gap .2;  0.9 -> bin 8 (0.8, 0.9]: gap .1.   ECE = (0.74 + 0.2 + 0.1) / 4 = 0.26
    p, y = [0.11, 0.15, 0.8, 0.9], [0, 1, 1, 1]
    assert ece(p, y) == pytest.approx(0.26)
    b = reliability_bins(p, y)
    assert b.count.tolist() == [0, 2, 0, 0, 0, 0, 0, 1, 1, 0]
    assert b.mean_p[1] == pytest.approx(0.13) and b.share_true[1] == 0.5
    assert np.isnan(b.mean_p[0]) and len(b.edges) == 11
    assert ece(p, y, n_bins=1) == pytest.approx(abs(np.mean(p) - 0.75))


def test_ranking_metrics_are_nan_with_one_class_only():
    for f in (pr_auc, auroc, prr):
        assert math.isnan(f([0.2, 0.7, 0.9], [1, 1, 1]))
        assert math.isnan(f([0.2, 0.7, 0.9], [0, 0, 0]))
    assert ece([0.2, 0.7, 0.9], [1, 1, 1]) == pytest.approx((0.8 + 0.3 + 0.1) / 3)


@pytest.mark.parametrize("f", list(METRICS.values()))
def test_validation_errors_name_the_argument(f):
    with pytest.raises(ValueError, match="'is_true' has 2 values, expected 3"):
        f([0.1, 0.2, 0.3], [1, 0])
    with pytest.raises(ValueError, match="'p_true' is empty"):
        f([], [])
    with pytest.raises(ValueError, match="'p_true' must be finite"):
        f([0.1, float("nan")], [1, 0])
    with pytest.raises(ValueError, match="'is_true' must be 0/1"):
        f([0.1, 0.2], [1, 2])


def test_option_errors_name_the_option():
    with pytest.raises(ValueError, match="'p_true' must lie in \\[0, 1\\]"):
        ece([0.5, 1.5], [1, 0])
    with pytest.raises(ValueError, match="'max_rejection'"):
        prr([0.5, 0.2], [1, 0], max_rejection=0)
    with pytest.raises(ValueError, match="'points'"):
        rejection_curve([0.5, 0.2], [1, 0], points=1)
    with pytest.raises(ValueError, match="'n_bins'"):
        ece([0.5, 0.2], [1, 0], n_bins=0)


def test_rowwise_versions_equal_sklearn_per_row_with_ties_and_one_class_rows():
    rng = np.random.default_rng(5)
    p = np.round(rng.random((60, 15)), 1)                     # many ties
    y = (rng.random((60, 15)) < rng.random((60, 1))).astype(float)
    y[0], y[1] = 1, 0
    for rows, f in ((pr_auc_rows(p, y), pr_auc), (auroc_rows(p, y), auroc)):
        ref = np.array([f(a, b) for a, b in zip(p, y)])
        np.testing.assert_allclose(rows, ref, rtol=0, atol=1e-12)
        assert np.isnan(rows[:2]).all()


def test_metric_direction():
    assert [metric_direction(k) for k in METRICS] == ["max", "max", "max", "min"]
    with pytest.raises(ValueError, match="'name'"):
        metric_direction("F1")


def test_bootstrap_interval_brackets_the_point():
    from franq.evaluation.metrics import bootstrap

    assert bootstrap(np.mean, np.ones(20), n_boot=50) == (1.0, 1.0, 1.0)
    point, lo, hi = bootstrap(np.mean, np.r_[np.zeros(50), np.ones(50)], n_boot=200)
    assert point == 0.5 and 0.35 < lo < 0.5 < hi < 0.65
    rowwise = bootstrap(np.mean, np.r_[np.zeros(50), np.ones(50)], n_boot=200, rowwise=lambda a: a.mean(axis=1))
    assert rowwise == (point, lo, hi)


def test_resamples_drawn_at_once_equal_those_drawn_row_by_row():
    from franq.evaluation.metrics import resample_indices

    rng = np.random.default_rng(3)
    assert np.array_equal(resample_indices(7, n_boot=5, seed=3), np.stack([rng.integers(0, 7, 7) for _ in range(5)]))
