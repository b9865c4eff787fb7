"""AwF / SfC metrics, fallback utility, outcome split and selective generation on cases
computed by hand (paper 000 section 3 and appendix F, paper 003 sections 4-5)."""
from __future__ import annotations

import json

import numpy as np
import pytest

from franq.apps.answering import decision_metrics as M
from franq.apps.answering.policy import SelectivePolicy, ThresholdPolicy, best_threshold, load_policy
from franq.errors import InputError


def test_awf_and_sfc_precision_recall_by_hand():
    v, V, S = [1, 1, 0, 1, 0], [1, 0, 0, 1, 0], [1, 1, 0, 1, 1]
    c = M.awf_counts(v, V, S)
    assert (c.true_pos, c.pred_pos, c.f_answerable, c.faithful) == (2, 3, 4, 2)
    assert M.awf_precision_recall(v, V, S) == pytest.approx((2 / 3, 1 / 2))
    assert c.f1 == pytest.approx(2 * (2 / 3) * 0.5 / (2 / 3 + 0.5))
    # SfC: V^SfC replaces V in True-Pos -> 3 / 3 and 3 / 4
    assert M.sfc_precision_recall(v, S) == pytest.approx((1.0, 3 / 4))
    # recall = classifier recall x answering recall (000 eq. 1): (2/2) * (2/4)
    assert c.recall == pytest.approx((c.true_pos / c.faithful) * (c.faithful / c.f_answerable))
    with pytest.raises(ValueError, match="implies"):
        M.awf_counts([1], [1], [0])


def test_pr_curve_max_f1_and_auc_by_hand():
    s, V, S = [0.9, 0.8, 0.7, 0.6, 0.5], [1, 0, 1, 0, 0], [1, 1, 1, 0, 1]
    t, p, r = M.pr_curve(s, V, S)
    assert t.tolist() == [0.9, 0.8, 0.7, 0.6, 0.5]
    assert p == pytest.approx([1, 1 / 2, 2 / 3, 1 / 2, 2 / 5])
    assert r == pytest.approx([1 / 4, 1 / 4, 1 / 2, 1 / 2, 1 / 2])
    assert M.max_f1(s, V, S) == pytest.approx(4 / 7)  # at t = 0.7: 2 PR / (P + R) = (2/3) / (7/6)
    assert M.pr_auc(s, V, S) == pytest.approx(1 / 4 * 1 + 1 / 4 * 2 / 3)  # = 5/12
    # a hard label (one score for all) is one point: its "AUC" is precision x recall
    assert M.pr_auc(np.ones(5), V, S) == pytest.approx(2 / 5 * 1 / 2)
    # ties enter together
    t, p, r = M.pr_curve([0.5, 0.9, 0.5], [1, 0, 0], [1, 1, 0])
    assert t.tolist() == [0.9, 0.5] and p == pytest.approx([0, 1 / 3]) and r == pytest.approx([0, 1 / 2])


def test_fallback_utility_matches_a_constructed_dataset():
    # N = 10, rho = 0.8 (8 answerable), recall 0.5 (TP = 4), precision 0.8 (Pred-Pos = 5); the 5
    # fallbacks have utility 0.4 each: U = (4 + 5 * 0.4) / 10 = 0.6
    assert M.fallback_utility(0.8, 0.5, 0.8, 0.4) == pytest.approx(0.6)
    assert M.fallback_utility(0.8, 0.5, 0.8, 0.0) == pytest.approx(0.4)  # abstention with utility 0: rho * R


def test_accuracy_at_a_fallback_rate_and_threshold():
    s, ok, fb = [0.1, 0.9, 0.5, 0.3], [0, 1, 1, 0], [1, 0, 0, 1]
    assert M.accuracy_at_rate(s, ok, fb, 0.5) == 1.0  # items 0 and 3 take the fallback
    assert M.accuracy_at_rate(s, ok, fb, 0.25) == 0.75
    assert M.accuracy_at_rate(s, ok, fb, 0.0) == 0.5
    assert M.threshold_accuracy(s, ok, fb, 0.4) == 1.0


def test_outcome_split_and_its_checks():
    assert M.outcome_split([1, 0, 0, 1], [0, 1, 0, 0]) == {"correct": 0.5, "abstain": 0.25, "hallucinate": 0.25}
    with pytest.raises(ValueError):
        M.outcome_split([1], [1])


def test_selective_curve_auc_and_accuracy_at_coverage():
    s, ok = [0.9, 0.8, 0.7, 0.6], [1, 0, 1, 1]
    cov, acc = M.selective_curve(s, ok)
    assert cov == pytest.approx([0.25, 0.5, 0.75, 1]) and acc == pytest.approx([1, 0.5, 2 / 3, 0.75])
    assert M.selective_auc(s, ok) == pytest.approx(0.25 * (1 + 0.5 + 2 / 3 + 0.75))
    assert M.accuracy_at_coverage(s, ok, 0.5) == 0.5
    cov, acc = M.selective_curve([0.5, 0.5, 0.9], [1, 0, 1])
    assert cov == pytest.approx([1 / 3, 1]) and acc == pytest.approx([1, 2 / 3])


def test_best_threshold_by_hand_and_ties_answer_most():
    # t=.1 -> .5; t=.4 -> (1+0+1+1)/4 = .75; t=.6 -> (1+0+1+1)/4 = .75; t=.9 -> .5; inf -> .25
    assert best_threshold([0.1, 0.4, 0.6, 0.9], [0, 0, 1, 1], [1, 0, 0, 0]) == 0.4
    assert best_threshold([0.2, 0.8], [0, 0], [1, 1]) == float("inf")  # always fall back


def test_threshold_policy_cv_and_json_roundtrip(tmp_path):
    rng = np.random.default_rng(0)
    s = rng.random(200)
    correct = (s > 0.3).astype(int)  # answers below 0.3 are wrong; the fallback is right on them
    policy = ThresholdPolicy.fit(s, correct, 1 - correct, verify="nli", fallback="closed_book", n_boot=50)
    assert 0.25 < policy.threshold <= 0.31
    assert policy.cv["cv_accuracy"] > 0.95 and policy.cv["base_accuracy"] == pytest.approx(correct.mean())
    assert policy.cv["cv_gain_95"][0] > 0
    policy.to_json(tmp_path / "p.json")
    assert load_policy(tmp_path / "p.json") == policy
    (tmp_path / "bad.json").write_text(json.dumps({"kind": "other"}))
    with pytest.raises(InputError, match="not a franq policy"):
        load_policy(tmp_path / "bad.json")


def test_selective_policy_learns_the_informative_signal(tmp_path):
    rng = np.random.default_rng(1)
    rows = [{"good": float(g), "noise": float(n)} for g, n in zip(rng.normal(size=300), rng.normal(size=300))]
    y = [int(r["good"] + 0.3 * rng.normal() > 0) for r in rows]
    policy = SelectivePolicy.fit(rows, y, features=["good", "noise"], coverage=0.5, n_boot=50)
    assert policy.coef[0] > 2 * abs(policy.coef[1])
    assert policy.cv["oof_accuracy_at_coverage"] > policy.cv["accuracy"] + 0.25  # ~0.82 vs ~0.5
    assert np.mean([policy.answers(r) for r in rows]) == pytest.approx(0.5, abs=0.01)
    policy.to_json(tmp_path / "s.json")
    again = load_policy(tmp_path / "s.json")
    assert again.probability(rows[:5]) == pytest.approx(policy.probability(rows[:5]))
    with pytest.raises(InputError, match="'noise' missing"):
        policy.probability({"good": 1.0})
