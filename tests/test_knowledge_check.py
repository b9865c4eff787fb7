"""The knowledge map's ranking check (calibration.knowledge_check, issue 45.2): recorded at fit
time on the natural claims, written to and read from the calibrator file, and read by the
``uncertain`` verdict."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from calibration.base import CalibratorFileError
from calibration.contract import ClaimInputs
from calibration.knowledge_check import knowledge_check, weighted_auroc
from calibration.three_condition import ThreeConditionCalibrator
from claims.types import Claim
from franq.stages.result import knowledge_term
from franq.types import ClaimScore, KnowledgeTerm
from franq.verdicts import claim_verdict

DATA = Path(__file__).resolve().parents[1] / "franq" / "data"
LONG = DATA / "calibrator-long-embedded-SmolLM2-135M-Instruct.Q4-1-verifier.json"


def _pairs_auroc(s, y, w):
    """The AUROC by counting every weighted (true, false) pair."""
    num = den = 0.0
    for i in np.flatnonzero(y):
        for j in np.flatnonzero(~y):
            num += w[i] * w[j] * (1.0 if s[i] > s[j] else 0.5 if s[i] == s[j] else 0.0)
            den += w[i] * w[j]
    return num / den


def test_the_weighted_auroc_counts_pairs_ties_half_and_weights_as_copies():
    rng = np.random.default_rng(0)
    s = rng.integers(0, 6, 40).astype(float)  # many ties
    y = rng.random(40) < 0.4
    w = rng.integers(1, 4, 40).astype(float)
    assert weighted_auroc(s, y, w) == pytest.approx(_pairs_auroc(s, y, w))
    copies = np.repeat(np.arange(40), w.astype(int))
    assert weighted_auroc(s, y, w) == pytest.approx(weighted_auroc(s[copies], y[copies], np.ones(len(copies))))
    assert weighted_auroc(s, np.ones(40, bool), w) is None


def _claims(n, signal, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.random(n) < 0.6
    score = rng.normal(size=n) + signal * y
    return score, y


def test_a_score_that_ranks_truth_clears_chance_and_one_that_does_not_reaches_it():
    score, y = _claims(400, 1.5)
    good = knowledge_check(score, y, np.ones(400))
    assert good["auroc"] > 0.8 and good["low"] > 0.5 and good["low"] <= good["auroc"] <= good["high"]
    assert (good["claims"], good["answers"], good["level"]) == (400, 400, 0.9)
    score, y = _claims(400, 0.0)
    blind = knowledge_check(score, y, np.ones(400))
    assert blind["low"] <= 0.5 <= blind["high"]


def test_the_interval_draws_whole_answers_and_zero_weights_are_left_out():
    score, y = _claims(200, 0.6, seed=1)
    alone = knowledge_check(score, y, np.ones(200))
    # each claim written five times into one answer: the same AUROC, but only 200 answers to draw
    copies = np.repeat(np.arange(200), 5)
    grouped = knowledge_check(score[copies], y[copies], np.ones(1000), copies)
    assert grouped["auroc"] == pytest.approx(alone["auroc"], abs=1e-4) and grouped["answers"] == 200
    assert grouped["high"] - grouped["low"] == pytest.approx(alone["high"] - alone["low"], abs=0.04)
    ungrouped = knowledge_check(score[copies], y[copies], np.ones(1000))  # copies drawn apart: overconfident
    assert ungrouped["high"] - ungrouped["low"] < 0.6 * (grouped["high"] - grouped["low"])
    w = np.r_[np.ones(100), np.zeros(100)]
    assert knowledge_check(score, y, w)["claims"] == 100


def test_too_few_true_or_false_claims_give_no_check():
    score, y = _claims(50, 1.0)
    y[:] = True
    y[:4] = False
    assert knowledge_check(score, y, np.ones(50)) is None


def _fit_inputs(n=600, seed=0):
    """Claims whose verifier reads them not mentioned, truth following UQ_unfaith on the
    first half (natural) and not at all on the second (made up)."""
    rng = np.random.default_rng(seed)
    p3 = np.tile([0.1, 0.1, 0.8], (n, 1))
    b = rng.random(n)
    y = (rng.random(n) < np.where(np.arange(n) < n // 2, b, 0.5)).astype(float)
    return ClaimInputs(p3[:, 0], rng.random(n), b, p_contradicted=p3[:, 1], p_not_mentioned=p3[:, 2]), y


def test_the_check_reads_the_natural_claims_by_answer_and_round_trips(tmp_path):
    X, y = _fit_inputs()
    natural = np.arange(600) < 300
    cal = ThreeConditionCalibrator(variant="soft").fit(X, y, natural=natural, groups=np.arange(600) // 3)
    check = cal.knowledge_check_
    assert check["claims"] == 300 and check["answers"] == 100 and check["low"] > 0.5
    cal.to_json(tmp_path / "c.json")
    back = ThreeConditionCalibrator.from_json(tmp_path / "c.json")
    assert back.knowledge_check_ == check
    assert back.predict_components(X).knowledge.check == check
    blind = ThreeConditionCalibrator(variant="soft").fit(X, y, natural=~natural).knowledge_check_
    assert blind["low"] <= 0.5
    with pytest.raises(ValueError, match="'natural' must be one boolean per claim"):
        ThreeConditionCalibrator(variant="soft").fit(X, y, natural=natural[:10])


def test_a_flat_knowledge_map_and_a_file_without_the_check_carry_none(tmp_path):
    X, y = _fit_inputs()
    flat = ThreeConditionCalibrator(variant="soft", flat=("not_mentioned",)).fit(X, y)
    assert flat.knowledge_check_ is None and "knowledge_check" not in flat.to_dict()
    obj = ThreeConditionCalibrator(variant="soft").fit(X, y).to_dict()
    del obj["knowledge_check"]
    old = ThreeConditionCalibrator.from_dict(obj)
    assert old.knowledge_check_ is None and old.predict_components(X).knowledge.check is None


@pytest.mark.parametrize("value", [{"auroc": 0.6, "low": 1.4, "high": 0.7}, "0.6", {"auroc": 0.6}])
def test_a_damaged_check_is_refused_naming_the_field(value):
    X, y = _fit_inputs()
    obj = ThreeConditionCalibrator(variant="soft").fit(X, y).to_dict()
    obj["knowledge_check"] = value
    with pytest.raises(CalibratorFileError, match="'knowledge_check' must hold"):
        ThreeConditionCalibrator.from_dict(obj)


def _claim(k, p):
    return ClaimScore(Claim("A claim.", ((0, 8),)), "scored", p_faithful=0.1, p_contradicted=0.1, p_not_mentioned=0.8,
                      p_true_raw=1e-9, p_true_calibrated=p, knowledge=k)


def test_a_knowledge_term_that_ranked_its_fitting_claims_at_chance_gives_uncertain():
    blind = KnowledgeTerm(0.9, base_rate=0.6, low=0.85, high=0.95, check_auroc=0.57, check_low=0.46, check_high=0.68)
    verdict, reason = claim_verdict(_claim(blind, 0.9), 0.5)
    assert verdict == "uncertain"
    assert reason == ("not in the passages (P_n 0.80); the model's own knowledge gives P(true) 0.90, but it told "
                      "true from false claims no better than chance on the calibrator's natural claims (AUROC 0.57, "
                      "90% interval 0.46-0.68): no usable signal")
    seeing = KnowledgeTerm(0.9, base_rate=0.6, low=0.85, high=0.95, check_auroc=0.7, check_low=0.6, check_high=0.8)
    assert claim_verdict(_claim(seeing, 0.9), 0.5)[0] == "likely_true"
    # passages that speak decide whatever the check says
    supported = ClaimScore(Claim("A claim.", ((0, 8),)), "scored", p_faithful=0.9, p_contradicted=0.05,
                           p_not_mentioned=0.05, p_true_raw=1e-9, p_true_calibrated=0.95, knowledge=blind)
    assert claim_verdict(supported, 0.5)[0] == "likely_true"


def test_the_shipped_long_calibrator_records_a_knowledge_term_at_chance():
    """The embedded model's p(c | x) on ExpertQA's 190 natural claims its passages do not
    support (benchmarks/results/verdicts.md): the shipped file says so, and a claim the
    verifier reads as not mentioned gets ``uncertain`` however far its map moves it."""
    check = json.loads(LONG.read_text())["knowledge_check"]
    assert check["claims"] == 190 and check["low"] <= 0.5 < check["auroc"]
    cal = ThreeConditionCalibrator.from_json(LONG)
    X = ClaimInputs(np.array([0.05]), np.array([0.9]), np.array([0.9]), p_contradicted=np.array([0.05]),
                    p_not_mentioned=np.array([0.9]))
    parts = cal.predict_components(X)
    k = knowledge_term(parts, 0)
    assert k.check_auroc == check["auroc"] and abs(k.p_true - k.base_rate) > 0.05
    assert claim_verdict(_claim(k, float(parts.p_true[0])), 0.5)[0] == "uncertain"


def test_the_report_panel_shows_the_check_beside_the_map():
    from franq.apps.panel import verdict_rows

    k = KnowledgeTerm(0.9, base_rate=0.6, low=0.85, high=0.95, check_auroc=0.57, check_low=0.46, check_high=0.68)
    rows = dict(verdict_rows(_claim(k, 0.9)))
    assert rows["knowledge term: AUROC on the calibrator's natural claims (90% interval)"] == "0.570 [0.460, 0.680]"
    rows = dict(verdict_rows(_claim(KnowledgeTerm(0.9, base_rate=0.6), 0.9)))
    assert rows["knowledge term: AUROC on the calibrator's natural claims (90% interval)"] is None


def test_a_binary_calibrator_checks_its_not_supported_map_too(tmp_path):
    from calibration.franq import FranqCalibrator

    X, y = _fit_inputs()
    binary = ClaimInputs(np.full(600, 0.2), X.uq_faith, X.uq_unfaith)  # P_faithful 0.2: weight 0.8 not supported
    cal = FranqCalibrator(variant="soft").fit(binary, y, natural=np.arange(600) >= 300)
    assert cal.knowledge_check_["claims"] == 300 and cal.knowledge_check_["low"] <= 0.5
    cal.to_json(tmp_path / "b.json")
    back = FranqCalibrator.from_json(tmp_path / "b.json")
    assert back.predict_components(binary).knowledge.check == cal.knowledge_check_
    assert FranqCalibrator(variant="soft").fit(binary, y, natural=np.arange(600) < 300).knowledge_check_["low"] > 0.5


def test_a_map_too_small_to_check_says_so_in_the_fit_warnings():
    X, y = _fit_inputs()
    y[:] = 1.0
    y[:3] = 0.0  # three false claims: no check
    cal = ThreeConditionCalibrator(variant="soft").fit(X, y)
    assert cal.knowledge_check_ is None and any("knowledge check not made" in w for w in cal.warnings_)


def test_two_answers_holding_each_class_give_no_check():
    score, y = _claims(40, 1.0)
    y = np.arange(40) < 20  # answer 0 holds every true claim, answer 1 every false one
    assert knowledge_check(score, y, np.ones(40), groups=(~y).astype(int)) is None


def test_a_new_base_rate_moves_the_map_but_not_its_ranking_check():
    X, y = _fit_inputs()
    cal = ThreeConditionCalibrator(variant="soft").fit(X, y, groups=np.arange(600) // 3)
    moved = ThreeConditionCalibrator.from_dict({**cal.to_dict(), "prior": {"deployment": 0.2}})
    k0, k1 = cal.predict_components(X).knowledge, moved.predict_components(X).knowledge
    assert k1.check == k0.check == cal.knowledge_check_
    assert k1.base_rate < k0.base_rate and (k1.low <= k0.low).all() and (k1.high <= k0.high).all()
    assert (k1.high < k0.high).any()


def test_a_result_line_written_before_the_check_reads_back_without_it():
    import franq

    record = {"schema": 2, "id": "a", "question": "q", "answer": "A claim.", "mode": "long",
              "stack": {"model": "m", "faithfulness": "verifier", "uq_faith": "claim_prob", "uq_unfaith": "parametric",
                        "prompt_version": "v", "mode": "long"},
              "claims": [{"claim": {"text": "A claim.", "char_spans": [[0, 8]]}, "status": "scored",
                          "p_faithful": 0.1, "p_true_raw": 0.5, "p_true_calibrated": 0.6,
                          "knowledge": {"p_true": 0.6, "base_rate": 0.58, "low": 0.5, "high": 0.7}}]}
    k = next(franq.read_results([record])).claims[0].knowledge
    assert (k.p_true, k.check_auroc, k.check_low, k.check_high) == (0.6, None, None, None)

