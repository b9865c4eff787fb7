"""Metric conventions as the papers and their reference code define them."""
from __future__ import annotations

import numpy as np
import pytest

from calibration.metrics import calibration_bins, ece_floor, expected_calibration_error
from franq.apps.answering import decision_metrics as M
from franq.apps.answering.sufficiency import NLIGoldSufficiency, make_rater
from franq.apps.answering.items import QAItem
from franq import Passage


# ---------------------------------------------------------------- 000 Table 7: hard labels
# 10 answers; the hard method answers 5 (v = 1), 3 of them faithful; 6 are answerable
# (V^SfC), 4 of them faithful (V). Precision 3/5, recall 3/6: P x R = 0.3, F1 = 6/11.
HARD_V = [1, 1, 1, 1, 1, 0, 0, 0, 0, 0]
TRUE_V = [1, 1, 1, 0, 0, 1, 0, 0, 0, 0]
SFC = [1, 1, 1, 1, 0, 1, 1, 0, 0, 0]


def test_hard_label_pr_auc_is_precision_times_recall():
    assert M.pr_auc(HARD_V, TRUE_V, SFC) == pytest.approx(3 / 5 * 3 / 6)
    # the step sum over the two tie groups (what main computed) adds the "answer everything" point:
    # 1/2 * 3/5 + (4/6 - 3/6) * 4/10 = 0.3667, not the paper's product
    assert M.pr_auc(HARD_V, TRUE_V, SFC, hard=False) == pytest.approx(0.5 * 0.6 + (4 / 6 - 3 / 6) * 0.4)


def test_hard_label_max_f1_is_the_f1_at_its_one_threshold():
    p, r = 3 / 5, 3 / 6
    assert M.max_f1(HARD_V, TRUE_V, SFC) == pytest.approx(2 * p * r / (p + r))  # 6/11 = 0.545
    # main took the best of that point and "answer everything" (the Trivial method: P 4/10, R 4/6 -> F1 0.5)
    trivial = 2 * 0.4 * (4 / 6) / (0.4 + 4 / 6)
    assert M.max_f1(np.ones(10), TRUE_V, SFC) == pytest.approx(trivial)
    # a hard method whose F1 is below the trivial's keeps its own F1
    worse = [0, 0, 0, 1, 1, 1, 1, 1, 1, 1]  # answers 7, 1 faithful
    pw, rw = 1 / 7, 1 / 6
    assert M.max_f1(worse, TRUE_V, SFC) == pytest.approx(2 * pw * rw / (pw + rw))
    assert M.max_f1(worse, TRUE_V, SFC, hard=False) == pytest.approx(trivial)


def test_hard_label_detection_and_never_answering():
    assert M.is_hard([0, 1, 1.0, 0.0]) and M.is_hard(np.array([True, False]))
    assert not M.is_hard([0.0, 0.5, 1.0])
    assert M.pr_auc(np.zeros(10), TRUE_V, SFC) == 0.0
    assert M.max_f1(np.zeros(10), TRUE_V, SFC) == 0.0
    # continuous scores are unchanged: the step sum
    s = [0.9, 0.8, 0.7, 0.6, 0.5]
    assert M.pr_auc(s, [1, 0, 1, 0, 0], [1, 1, 1, 0, 1]) == pytest.approx(5 / 12)


# ---------------------------------------------------------------- ECE bins (lo, hi]
def test_ece_bins_are_closed_on_the_right_as_guo_and_lm_polygraph():
    # isotonic outputs on bin edges: 0.25, 0.25, 0.3, 0.3 with one true label among the 0.3s.
    # (lo, hi]: all four in (0.2, 0.3]: |0.275 - 0.25| = 0.025.
    # [lo, hi) (main): {0.25, 0.25} in [0.2, 0.3): 0.5 * 0.25; {0.3, 0.3} in [0.3, 0.4): 0.5 * 0.2 -> 0.225
    p, y = [0.25, 0.25, 0.3, 0.3], [0, 0, 0, 1]
    assert expected_calibration_error(p, y) == pytest.approx(0.025)
    b = calibration_bins([0.0, 0.1, 0.10000001, 0.2, 1.0], [0, 0, 0, 0, 1])
    assert b.count.tolist() == [2, 2, 0, 0, 0, 0, 0, 0, 0, 1]  # 0 and 0.1 in [0, 0.1]; 1.0 in (0.9, 1]


def test_ece_matches_lm_polygraph_reference_loop():
    rng = np.random.default_rng(0)
    p = np.round(rng.uniform(size=200), 1)  # many values exactly on edges
    y = rng.integers(0, 2, size=200)
    edges = np.linspace(0.0, 1.0, 11)
    ref = 0.0
    for i in range(10):  # lm_polygraph/ue_metrics/ece.py, ECE.__call__
        lo, hi = edges[i], edges[i + 1]
        m = (p > lo) & (p <= hi) if i > 0 else (p >= lo) & (p <= hi)
        if m.any():
            ref += m.sum() / len(p) * abs(y[m].mean() - p[m].mean())
    assert expected_calibration_error(p, y) == pytest.approx(ref, abs=1e-12)


# ---------------------------------------------------------------- 003: NLI-of-gold threshold 0.05
class _Const:
    name = "const"

    def __init__(self, value):
        self.value = value

    def predict(self, pairs):
        return np.full(len(pairs), self.value)


def test_ece_floor_is_what_sampling_alone_gives_and_shrinks_with_the_set():
    """A calibrated predictor's labels drawn from it show an ECE that falls like 1/sqrt(n);
    a predictor at 0 or 1 everywhere has none; the draws are seeded."""
    rng = np.random.default_rng(1)
    small, large = rng.uniform(0.05, 0.95, 200), rng.uniform(0.05, 0.95, 5000)
    f_small, f_large = ece_floor(small, n_sim=200), ece_floor(large, n_sim=200)
    assert 0.05 < f_small[0] < f_small[1] < 0.2  # 200 claims cannot resolve ECE <= .05
    assert f_large[0] < 0.03 and f_large[0] < f_small[0] / 3
    assert ece_floor(np.array([0.0, 1.0] * 50), n_sim=20) == (0.0, 0.0)
    assert ece_floor(small, n_sim=50) == ece_floor(small, n_sim=50)
    y = (rng.random(200) < small).astype(float)  # one such draw: inside the floor's range
    assert expected_calibration_error(small, y) < f_small[1] * 1.5


def test_nli_gold_sufficiency_default_threshold_is_003s_005():
    item = QAItem("q?", (Passage("some text"),), gold_answers=("g",))
    rater = NLIGoldSufficiency(_Const(0.07))
    assert rater.threshold == 0.05
    assert rater.label([item]).tolist() == [1.0]  # 0.07 >= 0.05: sufficient (main: 0.5, insufficient)
    assert NLIGoldSufficiency(_Const(0.03)).label([item]).tolist() == [0.0]


def test_nli_gold_rater_setting_defaults_to_005():
    import franq

    cfg = franq.FranqConfig.from_dict({"faithfulness": {"name": "lexical"}})
    assert make_rater("nli_gold", cfg).threshold == 0.05
    assert make_rater("nli_gold", cfg, threshold=0.3).threshold == 0.3
